package webui_test

import (
	"crypto/rand"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
	"github.com/buildfleet/buildfleet/internal/gradient/webui"
)

// site is the UI over a real SQLite store, served by a real HTTP server on loopback, with an
// admin key and a key pinned to a cache.
type site struct {
	t             *testing.T
	st            store.Store
	ui            *webui.UI
	srv           *httptest.Server
	admin, pinned string
	project       store.Project
	cache         store.Cache
}

func newSite(t *testing.T, public bool) *site {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newSiteOn(t, st, public)
}

func newSiteOn(t testing.TB, st store.Store, public bool) *site {
	s := &site{st: st}
	if tt, ok := t.(*testing.T); ok {
		s.t = tt
	}
	ctx := t.Context()
	var err error
	if s.project, err = st.CreateProject(ctx, store.NewProject{Name: "demo", RepoURL: "https://example.org/demo.git", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	if s.cache, err = st.CreateCache(ctx, store.NewCache{Name: "main", Public: true}); err != nil {
		t.Fatal(err)
	}
	s.admin = mintKey(t, st, "root", "")
	s.pinned = mintKey(t, st, "reader", s.cache.ID)
	s.ui = webui.New(webui.Config{Store: st, Public: public, CacheURL: "http://cache.example"})
	s.srv = httptest.NewServer(s.ui.Handler(api.New(api.Config{Store: st, Session: s.ui.SessionKey})))
	t.Cleanup(s.srv.Close)
	return s
}

func mintKey(t testing.TB, st store.Store, owner, cacheID string) string {
	key, hash, err := peertoken.MintAPIKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAPIKey(t.Context(), store.NewAPIKey{Owner: owner, KeyHash: hash, CacheID: cacheID}); err != nil {
		t.Fatal(err)
	}
	return key
}

// browser is an HTTP client with a cookie jar that does not follow redirects.
type browser struct {
	t *testing.T
	c *http.Client
	s *site
}

func (s *site) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: s.t, s: s, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (b *browser) get(path string) (int, string, http.Header) {
	b.t.Helper()
	resp, err := b.c.Get(b.s.srv.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

func (b *browser) post(path string, form url.Values) (int, string, http.Header) {
	b.t.Helper()
	resp, err := b.c.PostForm(b.s.srv.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// signIn signs in with key and returns the CSRF token of the session.
func (b *browser) signIn(key string) string {
	b.t.Helper()
	status, _, h := b.post("/signin", url.Values{"key": {key}, "next": {"/projects"}})
	if status != http.StatusSeeOther || h.Get("Location") != "/projects" {
		b.t.Fatalf("sign-in: %d to %q", status, h.Get("Location"))
	}
	_, body, _ := b.get("/projects")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF token on the page after sign-in:\n%s", body)
	}
	return m[1]
}

func contains(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}
