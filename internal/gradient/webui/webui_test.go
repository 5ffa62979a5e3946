package webui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

func TestSignInSetsAStrictHttpOnlyCookieAndSignOutEndsIt(t *testing.T) {
	s := newSite(t, false)
	b := s.browser()
	resp, err := b.c.PostForm(s.srv.URL+"/signin", url.Values{"key": {s.admin}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == "gradient_session" {
			c = k
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || strings.Contains(c.Value, s.admin) {
		t.Fatalf("session cookie %+v", c)
	}
	csrf := b.signIn(s.admin)
	if st, body, _ := b.get("/projects/demo"); st != http.StatusOK || !strings.Contains(body, "Evaluation history") {
		t.Fatalf("project page: %d", st)
	}
	if st, _, _ := b.post("/signout", url.Values{"csrf": {csrf}}); st != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", st)
	}
	if st, _, h := b.get("/projects"); st != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/signin") {
		t.Errorf("after sign-out: %d to %q", st, h.Get("Location"))
	}
}

func TestAWrongOrRevokedKeyDoesNotSignIn(t *testing.T) {
	s := newSite(t, false)
	b := s.browser()
	for _, key := range []string{"", "nonsense", s.admin + "x"} {
		if st, _, _ := b.post("/signin", url.Values{"key": {key}}); st != http.StatusUnauthorized {
			t.Errorf("key %q: %d, want 401", key, st)
		}
	}
	b.signIn(s.admin)
	keys, _ := s.st.ListAPIKeys(t.Context())
	for _, k := range keys {
		if k.Owner == "root" {
			if err := s.st.RevokeAPIKey(t.Context(), k.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if st, _, _ := b.get("/projects"); st != http.StatusSeeOther {
		t.Errorf("a session of a revoked key still reads: %d", st)
	}
	if got := s.ui.Counters().SignInRefused.Load(); got != 3 {
		t.Errorf("sign-in refusals counted %d, want 3", got)
	}
}

func TestAFormWithoutTheCSRFTokenIsRefused(t *testing.T) {
	s := newSite(t, false)
	b := s.browser()
	csrf := b.signIn(s.admin)
	for _, form := range []url.Values{{}, {"csrf": {"forged"}}, {"csrf": {csrf + "x"}}} {
		st, body, _ := b.post("/projects/demo/evaluations", merge(form, url.Values{"ref": {strings.Repeat("a", 40)}}))
		if st != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("form %v: %d", form, st)
		}
	}
	if evals, _ := s.st.ListEvaluations(t.Context(), s.project.ID, 0); len(evals) != 0 {
		t.Errorf("a refused form started %d evaluations", len(evals))
	}
	if got := s.ui.Counters().CSRFRefused.Load(); got != 3 {
		t.Errorf("CSRF refusals counted %d, want 3", got)
	}
	st, _, h := b.post("/projects/demo/evaluations", url.Values{"csrf": {csrf}, "ref": {strings.Repeat("ab", 20)}})
	if st != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/evaluations/") {
		t.Fatalf("with the token: %d to %q", st, h.Get("Location"))
	}
	if evals, _ := s.st.ListEvaluations(t.Context(), s.project.ID, 0); len(evals) != 1 || evals[0].Commit != strings.Repeat("ab", 20) {
		t.Errorf("evaluations after the form: %+v", evals)
	}
}

func merge(a, b url.Values) url.Values {
	out := url.Values{}
	for _, v := range []url.Values{a, b} {
		for k, vs := range v {
			out[k] = vs
		}
	}
	return out
}

func TestASignedOutVisitorSeesNothingPrivate(t *testing.T) {
	s := newSite(t, false)
	b := s.browser()
	for _, path := range []string{"/projects", "/projects/demo", "/workers", "/queue", "/caches",
		"/evaluations/0190a000-0000-7000-8000-00000000000a", "/builds/0190a000-0000-7000-8000-00000000000a"} {
		st, body, h := b.get(path)
		if st != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/signin?next=") || strings.Contains(body, "example.org") {
			t.Errorf("%s signed out: %d to %q", path, st, h.Get("Location"))
		}
	}
	if st, _, _ := b.get("/api/v1/projects"); st != http.StatusUnauthorized {
		t.Errorf("the API signed out: %d", st)
	}
}

func TestAPublicServerShowsProjectsButNotTheFleet(t *testing.T) {
	s := newSite(t, true)
	b := s.browser()
	if st, body, _ := b.get("/projects"); st != http.StatusOK || !strings.Contains(body, "demo") {
		t.Errorf("public projects: %d", st)
	}
	for _, path := range []string{"/workers", "/queue"} {
		if st, _, _ := b.get(path); st != http.StatusSeeOther {
			t.Errorf("%s signed out on a public server: %d", path, st)
		}
	}
	ev := seedEvaluation(t, s.st, s.project.ID, "pub", 2)
	if st, body, _ := b.get("/evaluations/" + ev.ID); st != http.StatusOK || strings.Contains(body, "Abort evaluation") || strings.Contains(body, `name="csrf"`) {
		t.Errorf("a public evaluation page: %d, offering actions:\n%s", st, body)
	}
	if st, _, _ := b.post("/evaluations/"+ev.ID+"/abort", nil); st != http.StatusSeeOther {
		t.Errorf("a signed-out abort on a public server: %d, want the sign-in page", st)
	}
	if st, body, _ := b.get("/caches"); st != http.StatusOK || !strings.Contains(body, "substituters = http://cache.example/cache/main") {
		t.Errorf("public caches: %d\n%s", st, body)
	}
}

func TestAPinnedKeySeesOnlyItsCache(t *testing.T) {
	s := newSite(t, false)
	other, err := s.st.CreateCache(t.Context(), store.NewCache{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	b := s.browser()
	b.signIn(s.pinned)
	if st, body, _ := b.get("/caches"); st != http.StatusOK || !strings.Contains(body, `data-cache="main"`) || strings.Contains(body, other.Name) {
		t.Errorf("caches for a pinned key: %d\n%s", st, body)
	}
	for _, path := range []string{"/projects", "/workers", "/queue"} {
		if st, _, _ := b.get(path); st != http.StatusForbidden {
			t.Errorf("%s with a pinned key: %d, want 403", path, st)
		}
	}
}

func TestAOneTimeLinkSignsInOnce(t *testing.T) {
	s := newSite(t, false)
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/signin/link", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a link without a key: %v %v", resp, err)
	}
	req.Header.Set("Authorization", s.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 200)
	n, _ := resp.Body.Read(buf)
	resp.Body.Close()
	link := strings.TrimSpace(string(buf[:n]))
	if !strings.HasPrefix(link, "/signin/once/") {
		t.Fatalf("link %q", link)
	}
	b := s.browser()
	if st, _, h := b.get(link); st != http.StatusSeeOther || h.Get("Location") != "/projects" {
		t.Fatalf("first use: %d to %q", st, h.Get("Location"))
	}
	if st, _, _ := b.get("/projects"); st != http.StatusOK {
		t.Errorf("signed in by the link: %d", st)
	}
	if st, _, _ := s.browser().get(link); st != http.StatusUnauthorized {
		t.Errorf("second use: %d, want 401", st)
	}
}

func TestPagesCarryAStrictCSP(t *testing.T) {
	s := newSite(t, false)
	_, _, h := s.browser().get("/signin")
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
}
