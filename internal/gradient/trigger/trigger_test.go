package trigger

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/forgehook"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

// fixture is a real SQLite store with one project following main and release/*, whose
// secret is "s3cret" (sealed as itself: these tests are not about sealing).
type fixture struct {
	t       *testing.T
	st      store.Store
	svc     *Service
	project store.Project
	kicks   atomic.Int32
	mux     *http.ServeMux
}

func newFixture(t *testing.T, repoURL string) *fixture {
	st, err := sqlite.Open(sqlite.PathIn(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{t: t, st: st}
	f.project, err = st.CreateProject(t.Context(), store.NewProject{Name: "demo", RepoURL: repoURL, Wildcards: []string{"packages.*"}})
	if err != nil {
		t.Fatal(err)
	}
	branches := []string{"main", "release/*"}
	if err := st.SetProjectTriggers(t.Context(), f.project.ID, store.TriggerUpdate{Branches: &branches,
		WebhookSecretEnc: []byte("s3cret")}); err != nil {
		t.Fatal(err)
	}
	f.svc = New(Config{Store: st, OpenSecret: func(b []byte) ([]byte, error) { return b, nil },
		Kick: func() { f.kicks.Add(1) }})
	f.mux = http.NewServeMux()
	f.mux.Handle("POST /hooks/{forge}/{project}", f.svc)
	return f
}

func (f *fixture) deliver(forge forgehook.Forge, project, event string, secret, body []byte) (int, HookReply) {
	req := httptest.NewRequest("POST", "/hooks/"+string(forge)+"/"+project, bytes.NewReader(body))
	for k, v := range forgehook.SignatureHeaders(forge, secret, body) {
		req.Header[k] = v
	}
	req.Header.Set(map[forgehook.Forge]string{forgehook.GitHub: "X-GitHub-Event", forgehook.Gitea: "X-Gitea-Event",
		forgehook.GitLab: "X-Gitlab-Event"}[forge], event)
	rec := httptest.NewRecorder()
	f.mux.ServeHTTP(rec, req)
	var r HookReply
	json.Unmarshal(rec.Body.Bytes(), &r)
	return rec.Code, r
}

func (f *fixture) evaluations() []store.Evaluation {
	evs, err := f.st.ListEvaluations(f.t.Context(), f.project.ID, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

func sample(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "forgehook", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHookQueuesOnceAndRecordsTheBranch(t *testing.T) {
	f := newFixture(t, "https://example.org/demo.git")
	code, r := f.deliver(forgehook.GitHub, "demo", "push", []byte("s3cret"), sample(t, "github_push.json"))
	if code != http.StatusAccepted || r.Outcome != "queued" || r.EvaluationID == "" {
		t.Fatalf("push: %d %+v", code, r)
	}
	code, r2 := f.deliver(forgehook.GitHub, f.project.ID, "push", []byte("s3cret"), sample(t, "github_push.json"))
	if code != http.StatusAccepted || r2.Outcome != "duplicate" || r2.EvaluationID != r.EvaluationID {
		t.Fatalf("the same push again: %d %+v", code, r2)
	}
	evs := f.evaluations()
	if len(evs) != 1 || evs[0].Branch != "main" || evs[0].Commit != "6113728f27ae82c7b1a177c8d03f9e96e0adf246" {
		t.Fatalf("evaluations %+v", evs)
	}
	if f.kicks.Load() != 1 || f.svc.counters.Evaluations["github"].Load() != 1 || f.svc.counters.Deliveries["duplicate"].Load() != 1 {
		t.Errorf("kicks %d, counters %+v", f.kicks.Load(), f.svc.counters)
	}
}

func TestHookFollowsOnlyWhatTheProjectFollows(t *testing.T) {
	f := newFixture(t, "https://example.org/demo.git")
	for _, tc := range []struct {
		forge       forgehook.Forge
		event, file string
		outcome     string
	}{
		{forgehook.Gitea, "push", "gitea_push.json", "queued"},                                // release/1.0 matches release/*
		{forgehook.GitLab, "Tag Push Hook", "gitlab_tag_push.json", "ignored"},                // tags are off
		{forgehook.GitLab, "Merge Request Hook", "gitlab_merge_request.json", "queued"},       // into main
		{forgehook.GitLab, "Merge Request Hook", "gitlab_merge_request_fork.json", "ignored"}, // a fork's
		{forgehook.GitHub, "push", "github_push_deleted.json", "ignored"},
		{forgehook.GitHub, "ping", "github_ping.json", "ignored"},
	} {
		code, r := f.deliver(tc.forge, "demo", tc.event, []byte("s3cret"), sample(t, tc.file))
		if code != http.StatusAccepted || r.Outcome != tc.outcome {
			t.Errorf("%s %s: %d %+v, want %s", tc.forge, tc.file, code, r, tc.outcome)
		}
	}
	evs := f.evaluations()
	if len(evs) != 2 || evs[0].Branch != "refs/merge-requests/7/head" || evs[1].Branch != "release/1.0" {
		t.Fatalf("evaluations %+v", evs)
	}
}

// Refusals: an unknown project, one without a secret and a wrong signature look alike from
// outside; the counters tell them apart. None starts anything.
func TestHookRefusals(t *testing.T) {
	f := newFixture(t, "https://example.org/demo.git")
	f.st.CreateProject(t.Context(), store.NewProject{Name: "nosecret", RepoURL: "https://example.org/x.git"})
	body := sample(t, "github_push.json")
	var bodies []string
	for _, tc := range []struct {
		project string
		secret  string
		cause   string
	}{
		{"demo", "wrong", causeBadSignature},
		{"nobody", "s3cret", causeUnknownProject},
		{"nosecret", "s3cret", causeNoSecret},
	} {
		code, r := f.deliver(forgehook.GitHub, tc.project, "push", []byte(tc.secret), body)
		if code != http.StatusUnauthorized || f.svc.counters.Refused[tc.cause].Load() != 1 {
			t.Errorf("%s: %d %+v, counter %s = %d", tc.project, code, r, tc.cause, f.svc.counters.Refused[tc.cause].Load())
		}
		bodies = append(bodies, r.Reason)
	}
	if bodies[0] != bodies[1] || bodies[1] != bodies[2] {
		t.Errorf("refusals differ: %q", bodies)
	}
	req := httptest.NewRequest("POST", "/hooks/github/demo", bytes.NewReader(body))
	rec := httptest.NewRecorder()
	f.mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || f.svc.counters.Refused[causeMissingSignature].Load() != 1 {
		t.Errorf("unsigned: %d", rec.Code)
	}
	if code, _ := f.deliver("bitbucket", "demo", "push", []byte("s3cret"), body); code != http.StatusNotFound {
		t.Errorf("unknown forge: %d", code)
	}
	big := bytes.Repeat([]byte(" "), DefaultMaxHookBody+1)
	if code, _ := f.deliver(forgehook.GitHub, "demo", "push", []byte("s3cret"), big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized: %d", code)
	}
	if len(f.evaluations()) != 0 {
		t.Errorf("a refused delivery started an evaluation")
	}
}

// git runs git in dir for the test.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org",
		"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestPollEvaluatesNewHeadsOnce(t *testing.T) {
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
	git(t, repo, "branch", "release/1")
	git(t, repo, "branch", "feature")
	f := newFixture(t, repo)
	on := true
	if err := f.st.SetProjectTriggers(t.Context(), f.project.ID, store.TriggerUpdate{Poll: &on}); err != nil {
		t.Fatal(err)
	}
	f.svc.PollOnce(t.Context())
	head := git(t, repo, "rev-parse", "HEAD")
	if evs := f.evaluations(); len(evs) != 1 || evs[0].Commit != head {
		t.Fatalf("first round: %+v (main and release/1 share the head)", evs)
	}
	f.svc.PollOnce(t.Context())
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "two")
	git(t, repo, "checkout", "-q", "feature")
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "not followed")
	f.svc.PollOnce(t.Context())
	evs := f.evaluations()
	if len(evs) != 2 || evs[0].Branch != "main" || evs[0].Commit != git(t, repo, "rev-parse", "main") {
		t.Fatalf("after a push to main: %+v", evs)
	}
	if f.svc.counters.Polls["ok"].Load() != 3 || f.svc.counters.Evaluations["poll"].Load() != 2 {
		t.Errorf("counters %+v", f.svc.counters)
	}
	branch, commit, err := f.svc.Resolve(t.Context(), f.project, "feature")
	if err != nil || branch != "feature" || commit != git(t, repo, "rev-parse", "feature") {
		t.Errorf("Resolve(feature) = %q %q %v", branch, commit, err)
	}
	if _, _, err := f.svc.Resolve(t.Context(), f.project, "nope"); err == nil {
		t.Error("resolved a missing branch")
	}
}

func TestPollFailureIsRecorded(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "missing"))
	on := true
	f.st.SetProjectTriggers(t.Context(), f.project.ID, store.TriggerUpdate{Poll: &on})
	f.svc.PollOnce(context.Background())
	s, _ := f.st.ProjectTriggers(t.Context(), f.project.ID)
	if s.LastPollError == "" || s.LastPollAt.IsZero() || f.svc.counters.Polls["failed"].Load() != 1 {
		t.Errorf("after a failed poll: %+v", s)
	}
}
