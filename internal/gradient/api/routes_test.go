package api

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

// These tests walk the route table itself, so a route added later is covered without a new
// test: every route wants a key, every admin route refuses a pinned key, and every route
// that reads a body refuses malformed JSON.

type routeFixture struct {
	srv           *httptest.Server
	admin, pinned string
	values        map[string]string // path wildcard -> an existing row
	evaluationID  string
}

func newRouteFixture(t *testing.T) routeFixture {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	admin, adminHash, _ := peertoken.MintAPIKey(rand.Reader)
	pinned, pinnedHash, _ := peertoken.MintAPIKey(rand.Reader)
	p, err := s.CreateProject(ctx, store.NewProject{Name: "p", RepoURL: "https://e.invalid/p", Wildcards: []string{"*"}})
	must(t, err)
	c, err := s.CreateCache(ctx, store.NewCache{Name: "c"})
	must(t, err)
	_, err = s.BootstrapAPIKey(ctx, store.NewAPIKey{Owner: "admin", KeyHash: adminHash})
	must(t, err)
	pk, err := s.CreateAPIKey(ctx, store.NewAPIKey{Owner: "pinned", KeyHash: pinnedHash, CacheID: c.ID})
	must(t, err)
	const worker = "0190a000-0000-7000-8000-00000000000a"
	_, err = s.CreateRegistration(ctx, store.NewRegistration{PeerID: p.ID, WorkerID: worker, TokenHash: peertoken.SHA256Hex("t")})
	must(t, err)
	ev, err := s.CreateEvaluation(ctx, store.NewEvaluation{ProjectID: p.ID, Commit: strings.Repeat("a", 40)})
	must(t, err)
	_, err = s.CreateTeam(ctx, "t")
	must(t, err)
	srv := httptest.NewServer(New(Config{Store: s}))
	t.Cleanup(srv.Close)
	return routeFixture{srv: srv, admin: admin, pinned: pinned, evaluationID: ev.ID,
		values: map[string]string{"{project}": "p", "{cache}": "c", "{team}": "t", "{worker}": worker, "{id}": pk.ID}}
}

// path fills a route's wildcards with existing rows (an evaluation for /evaluations/{id}).
func (f routeFixture) path(rt route) string {
	p := rt.path
	if strings.HasPrefix(p, "/evaluations/") {
		p = strings.Replace(p, "{id}", f.evaluationID, 1)
	}
	for k, v := range f.values {
		p = strings.ReplaceAll(p, k, v)
	}
	return f.srv.URL + Prefix + p
}

func (f routeFixture) send(t *testing.T, rt route, auth, body string) (int, Error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), rt.method, f.path(rt), strings.NewReader(body))
	must(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := f.srv.Client().Do(req)
	must(t, err)
	defer resp.Body.Close()
	var e Error
	json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e
}

func TestEveryRouteRequiresAKey(t *testing.T) {
	f := newRouteFixture(t)
	for _, rt := range routes {
		for _, auth := range []string{"", "GRADunknown", "Bearer " + f.admin + "x"} {
			if status, e := f.send(t, rt, auth, "{}"); status != http.StatusUnauthorized || e.Code != CodeUnauthorized {
				t.Errorf("%s %s with %q: %d %q, want 401", rt.method, rt.path, auth, status, e.Code)
			}
		}
	}
}

func TestEveryAdminRouteRefusesAPinnedKey(t *testing.T) {
	f := newRouteFixture(t)
	cacheReads := map[string]bool{"GET /caches": true, "GET /caches/{cache}": true, "GET /caches/{cache}/paths": true}
	for _, rt := range routes {
		status, e := f.send(t, rt, f.pinned, "{}")
		switch {
		case (rt.scope == scopeCacheRead) != cacheReads[rt.method+" "+rt.path]:
			t.Errorf("%s %s: scope %d; only %v may admit a pinned key", rt.method, rt.path, rt.scope, cacheReads)
		case rt.scope == scopeAdmin && (status != http.StatusForbidden || e.Code != CodeForbidden):
			t.Errorf("%s %s with a pinned key: %d %q, want 403", rt.method, rt.path, status, e.Code)
		case rt.scope == scopeCacheRead && status != http.StatusOK:
			t.Errorf("%s %s with a key pinned to this cache: %d", rt.method, rt.path, status)
		}
	}
}

func TestEveryRouteWithABodyRefusesBadJSON(t *testing.T) {
	f := newRouteFixture(t)
	for _, rt := range routes {
		if rt.method != "POST" && rt.method != "PATCH" {
			continue
		}
		for _, body := range []string{`{"name":`, `[]`, `{"no_such_field":1}`} {
			if status, e := f.send(t, rt, f.admin, body); status != http.StatusBadRequest || e.Code != CodeBadRequest {
				t.Errorf("%s %s with body %s: %d %q, want 400", rt.method, rt.path, body, status, e.Code)
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
