package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

func TestEveryRouteRefusesMissingOrBadKeys(t *testing.T) {
	h := newHarness(t)
	revoked := got(h.admin.CreateAPIKey(h.ctx, api.CreateAPIKeyRequest{Owner: "soon revoked"})).must(t)
	h.remember(revoked.Key)
	if err := h.admin.RevokeAPIKey(h.ctx, revoked.APIKey.ID); err != nil {
		t.Fatal(err)
	}
	auths := map[string]string{
		"no header":         "",
		"malformed":         "Token abc",
		"prefix only":       "GRAD",
		"unknown key":       "GRADnot-a-real-key",
		"revoked key":       revoked.Key,
		"revoked as bearer": "Bearer " + revoked.Key,
		"basic scheme":      "Basic " + h.adminKey,
	}
	paths := []struct{ method, path string }{
		{"GET", "/api/v1/projects"}, {"POST", "/api/v1/projects"}, {"GET", "/api/v1/caches"},
		{"GET", "/api/v1/workers"}, {"POST", "/api/v1/api-keys"}, {"DELETE", "/api/v1/api-keys/x"},
		{"GET", "/api/v1/no-such-route"}, // unauthenticated callers learn nothing of routes
	}
	for name, auth := range auths {
		for _, p := range paths {
			a := h.raw(p.method, p.path, auth, "{}")
			if a.status != http.StatusUnauthorized {
				t.Fatalf("%s: %s %s = %d, want 401", name, p.method, p.path, a.status)
			}
			if e := a.apiError(t); e.Code != api.CodeUnauthorized {
				t.Errorf("%s: code %q", name, e.Code)
			}
			if a.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", name)
			}
		}
	}
}

func TestBothAuthorizationFormsAreAccepted(t *testing.T) {
	h := newHarness(t)
	for _, auth := range []string{h.adminKey, "Bearer " + h.adminKey, "bearer " + h.adminKey} {
		if a := h.raw("GET", "/api/v1/projects", auth, ""); a.status != http.StatusOK {
			t.Errorf("Authorization %q...: status %d", auth[:8], a.status)
		}
	}
}

func TestPinnedKeyReadsOnlyItsCache(t *testing.T) {
	h := newHarness(t)
	own := got(h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "own", Public: false})).must(t)
	other := got(h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "other", Public: true})).must(t)
	got(h.admin.CreateProject(h.ctx, projectReq("p"))).must(t)
	pinned := got(h.admin.CreateAPIKey(h.ctx, api.CreateAPIKeyRequest{Owner: "nix-client", Cache: "own"})).must(t)
	h.remember(pinned.Key)
	if pinned.APIKey.CacheID != own.ID {
		t.Fatalf("pinned key's cache = %q, want %q", pinned.APIKey.CacheID, own.ID)
	}
	pc := h.client(pinned.Key)

	caches := got(pc.ListCaches(h.ctx)).must(t)
	if len(caches) != 1 || caches[0].ID != own.ID {
		t.Errorf("pinned key lists %+v, want only its own cache", caches)
	}
	for _, ref := range []string{"own", own.ID} {
		if got := got(pc.Cache(h.ctx, ref)).must(t); got.ID != own.ID {
			t.Errorf("pinned key reads %s as %+v", ref, got)
		}
	}
	key := pinned.Key
	for _, ref := range []string{"other", other.ID, "no-such-cache"} {
		h.expectRefusalAs(key, "GET", "/api/v1/caches/"+ref, "", http.StatusForbidden, api.CodeForbidden)
		h.expectRefusalAs(key, "GET", "/api/v1/caches/"+ref+"/paths", "", http.StatusForbidden, api.CodeForbidden)
	}
	if list := got(pc.CachePaths(h.ctx, "own", 0)).must(t); list.Cache != "own" || len(list.Paths) != 0 {
		t.Errorf("pinned key lists its empty cache as %+v", list)
	}
	refused := []struct{ method, path, body string }{
		{"GET", "/api/v1/projects", ""},
		{"GET", "/api/v1/projects/p", ""},
		{"POST", "/api/v1/caches", `{"name":"mine"}`},
		{"PUT", "/api/v1/projects/p/caches/own", ""},
		{"POST", "/api/v1/caches/own/registrations", `{"worker_id":"` + workerA + `"}`},
		{"GET", "/api/v1/workers", ""},
		{"GET", "/api/v1/api-keys", ""},
		{"POST", "/api/v1/api-keys", `{"owner":"escalate"}`},
		{"DELETE", "/api/v1/api-keys/" + pinned.APIKey.ID, ""},
	}
	for _, r := range refused {
		h.expectRefusalAs(key, r.method, r.path, r.body, http.StatusForbidden, api.CodeForbidden)
	}
	if n := len(got(h.admin.APIKeys(h.ctx)).must(t)); n != 2 {
		t.Errorf("%d keys after the pinned key's attempts, want 2", n)
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	h := newHarness(t)
	h.expectRefusal("GET", "/api/v1/nothing-here", "", http.StatusNotFound, api.CodeNotFound)
	e := h.raw("DELETE", "/api/v1/projects", h.adminKey, "")
	if e.status != http.StatusMethodNotAllowed || e.apiError(t).Code != api.CodeMethod {
		t.Fatalf("DELETE /projects = %d %s, want 405 JSON", e.status, e.body)
	}
	if allow := e.header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("Allow = %q, want GET and POST", allow)
	}
}
