package webui_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

func buildIDs(t *testing.T, st store.Store, evalID string) map[string]string {
	builds, err := st.EvaluationBuilds(t.Context(), evalID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range builds {
		out[b.Pname] = b.ID
	}
	return out
}

func TestTheEvaluationPageShowsStatesFiltersPagesAndTheGraph(t *testing.T) {
	s := newSite(t, false)
	ev := seedEvaluation(t, s.st, s.project.ID, "p", 250)
	ids := buildIDs(t, s.st, ev.ID)
	runBuild(t, s.st, ids["p-00000"], false, "ok\n")
	runBuild(t, s.st, ids["p-00010"], true, "compiling\nerror: boom\n")
	b := s.browser()
	b.signIn(s.admin)
	st, body, _ := b.get("/evaluations/" + ev.ID)
	if st != http.StatusOK {
		t.Fatalf("evaluation page: %d", st)
	}
	if n := strings.Count(body, `<tr data-build=`); n != 100 {
		t.Errorf("first page holds %d builds, want 100", n)
	}
	contains(t, "evaluation page", body, "Page 1 of 3", `class="state failed"`, `href="/evaluations/`+ev.ID+`?state=failed"`)
	// a graph of 250 builds is drawn; the failed build is a node in its own class
	contains(t, "evaluation page", body, `<g class="node failed" data-build="`+ids["p-00010"]+`"`)
	st, body, _ = b.get("/evaluations/" + ev.ID + "?state=dependency-failed")
	if st != http.StatusOK || strings.Count(body, `data-state="dependency-failed"`) != 9 {
		t.Errorf("dependency-failed filter: %d, %d rows", st, strings.Count(body, `data-state="dependency-failed"`))
	}
	_, body, _ = b.get("/evaluations/" + ev.ID + "?state=done")
	if got := regexp.MustCompile(`data-name="([^"]+)" data-state="done"`).FindAllStringSubmatch(body, -1); len(got) != 1 || got[0][1] != "p-00000" {
		t.Errorf("done filter: %v", got)
	}
	_, body, _ = b.get("/evaluations/" + ev.ID + "?page=3")
	if n := strings.Count(body, `<tr data-build=`); n != 50 {
		t.Errorf("last page holds %d builds, want 50", n)
	}
}

func TestTheBuildPageShowsTheFailureAndRetriesIt(t *testing.T) {
	s := newSite(t, false)
	ev := seedEvaluation(t, s.st, s.project.ID, "q", 3)
	id := buildIDs(t, s.st, ev.ID)["q-00000"]
	runBuild(t, s.st, id, true, "line one\nerror: the compiler said no\nline three\n")
	b := s.browser()
	csrf := b.signIn(s.admin)
	_, body, _ := b.get("/builds/" + id)
	contains(t, "build page", body, "FailedPermanent", "Permanent: builder exited 1", "error: the compiler said no", storePath("q-00000"), "Retry build", "Raw log")
	_, body, _ = b.get("/builds/" + id + "?q=compiler")
	if n := strings.Count(body, `class="line match"`); n != 1 || strings.Contains(body, "line three") {
		t.Errorf("search: %d matches\n%s", n, body)
	}
	if st, _, _ := b.post("/builds/"+id+"/retry", url.Values{}); st != http.StatusForbidden {
		t.Errorf("retry without CSRF: %d", st)
	}
	if st, _, _ := b.post("/builds/"+id+"/retry", url.Values{"csrf": {csrf}}); st != http.StatusSeeOther {
		t.Fatalf("retry: %d", st)
	}
	if got, _ := s.st.GetBuild(t.Context(), id); got.Status != store.BuildQueued {
		t.Errorf("after the retry: %s", got.Status)
	}
	if st, body, _ := b.post("/builds/"+id+"/retry", url.Values{"csrf": {csrf}}); st != http.StatusConflict || !strings.Contains(body, "has not failed") {
		t.Errorf("a second retry: %d", st)
	}
	// the raw log link reads the API with the session cookie
	if st, body, _ := b.get("/api/v1/builds/" + id + "/log"); st != http.StatusOK || !strings.Contains(body, "the compiler said no") {
		t.Errorf("raw log through the cookie: %d %q", st, body)
	}
}

func TestAbortFromTheEvaluationPage(t *testing.T) {
	s := newSite(t, false)
	ev := seedEvaluation(t, s.st, s.project.ID, "r", 3)
	b := s.browser()
	csrf := b.signIn(s.admin)
	if st, _, _ := b.post("/evaluations/"+ev.ID+"/abort", url.Values{"csrf": {csrf}}); st != http.StatusSeeOther {
		t.Fatalf("abort: %d", st)
	}
	if got, _ := s.st.GetEvaluation(t.Context(), ev.ID); got.Status != store.EvalAborted {
		t.Errorf("after the abort: %s", got.Status)
	}
	// the cookie never authorizes a change on the API itself
	resp, err := b.c.Post(s.srv.URL+"/api/v1/builds/"+buildIDs(t, s.st, ev.ID)["r-00000"]+"/retry", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a POST to the API with only the cookie: %d, want 401", resp.StatusCode)
	}
}

func TestTheQueueSaysWhatWaitsAndWhy(t *testing.T) {
	s := newSite(t, false)
	ev := seedEvaluation(t, s.st, s.project.ID, "w", 12)
	queued, err := s.st.CreateEvaluation(t.Context(), store.NewEvaluation{ProjectID: s.project.ID, Commit: strings.Repeat("c", 40)})
	if err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.signIn(s.admin)
	st, body, _ := b.get("/queue")
	if st != http.StatusOK {
		t.Fatalf("queue: %d", st)
	}
	ids := buildIDs(t, s.st, ev.ID)
	// w-00000 and w-00010 are startable; the others wait for their dependencies
	contains(t, "queue", body, `data-job="`+queued.ID+`"`, `data-job="`+ids["w-00000"]+`"`, `data-job="`+ids["w-00001"]+`"`,
		"this server runs no job loop", "its dependencies have not all been built yet")
	if n := strings.Count(body, "<tr data-job="); n != 13 {
		t.Errorf("%d waiting jobs listed, want 13", n)
	}
}
