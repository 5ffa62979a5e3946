package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
)

func TestProjectsCreateListShow(t *testing.T) {
	h := newHarness(t)
	p := got(h.admin.CreateProject(h.ctx, projectReq("hello"))).must(t)
	if p.ID == "" || p.Name != "hello" || p.Branch != "main" || !slices.Equal(p.Wildcards, []string{"packages.*.*"}) {
		t.Fatalf("created project %+v", p)
	}
	got(h.admin.CreateProject(h.ctx, projectReq("another"))).must(t)
	list := got(h.admin.ListProjects(h.ctx)).must(t)
	if len(list) != 2 {
		t.Fatalf("listed %d projects, want 2", len(list))
	}
	for _, ref := range []string{"hello", p.ID} {
		if got := got(h.admin.Project(h.ctx, ref)).must(t); got.ID != p.ID || got.RepoURL != p.RepoURL {
			t.Errorf("show %s = %+v", ref, got)
		}
	}
}

func TestProjectRefusals(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("taken"))).must(t)
	const good = `"repo_url":"https://example.invalid/r.git","wildcards":["*"]`
	cases := []struct {
		name, body string
		status     int
		code       string
	}{
		{"duplicate name", `{"name":"taken",` + good + `}`, 409, api.CodeConflict},
		{"not JSON", `{"name":`, 400, api.CodeBadRequest},
		{"unknown field", `{"name":"x","repo":"y",` + good + `}`, 400, api.CodeBadRequest},
		{"two objects", `{"name":"x",` + good + `}{}`, 400, api.CodeBadRequest},
		{"empty name", `{"name":"",` + good + `}`, 400, api.CodeBadRequest},
		{"name with space", `{"name":"a b",` + good + `}`, 400, api.CodeBadRequest},
		{"name like an ID", `{"name":"` + workerA + `",` + good + `}`, 400, api.CodeBadRequest},
		{"repo url as option", `{"name":"x","repo_url":"--upload-pack=evil","wildcards":["*"]}`, 400, api.CodeBadRequest},
		{"repo url missing", `{"name":"x","wildcards":["*"]}`, 400, api.CodeBadRequest},
		{"branch with ..", `{"name":"x",` + good + `,"branch":"a..b"}`, 400, api.CodeBadRequest},
		{"no wildcards", `{"name":"x","repo_url":"https://e.invalid/r"}`, 400, api.CodeBadRequest},
		{"exclude only", `{"name":"x","repo_url":"https://e.invalid/r","wildcards":["!checks.*"]}`, 400, api.CodeBadRequest},
		{"unterminated quote", `{"name":"x","repo_url":"https://e.invalid/r","wildcards":["packages.\"x"]}`, 400, api.CodeBadRequest},
		{"body over 1 MiB", `{"name":"` + strings.Repeat("a", 1<<20) + `"}`, 413, api.CodeTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.expectRefusal("POST", "/api/v1/projects", tc.body, tc.status, tc.code)
		})
	}
	h.expectRefusal("GET", "/api/v1/projects/nope", "", 404, api.CodeNotFound)
	h.expectRefusal("GET", "/api/v1/projects/"+workerA, "", 404, api.CodeNotFound)
	if n := len(got(h.admin.ListProjects(h.ctx)).must(t)); n != 1 {
		t.Errorf("%d projects after the refusals, want 1", n)
	}
}

func TestCachesAndSubscriptions(t *testing.T) {
	h := newHarness(t)
	p := got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	c := got(h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "main-cache", Public: true})).must(t)
	if !c.Public || c.HasSigningKey {
		t.Errorf("created cache %+v", c)
	}
	h.expectRefusal("POST", "/api/v1/caches", `{"name":"main-cache"}`, 409, api.CodeConflict)
	h.expectRefusal("POST", "/api/v1/caches", `{"name":"bad/name"}`, 400, api.CodeBadRequest)
	h.expectRefusal("GET", "/api/v1/caches/nope", "", 404, api.CodeNotFound)

	for range 2 { // subscribing twice is fine
		if err := h.admin.Subscribe(h.ctx, "proj", c.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := got(h.admin.Project(h.ctx, p.ID)).must(t); !slices.Equal(got.Caches, []string{"main-cache"}) {
		t.Errorf("project caches = %v, want [main-cache]", got.Caches)
	}
	h.expectRefusal("PUT", "/api/v1/projects/proj/caches/nope", "", 404, api.CodeNotFound)
	h.expectRefusal("PUT", "/api/v1/projects/nope/caches/main-cache", "", 404, api.CodeNotFound)
	if err := h.admin.Unsubscribe(h.ctx, p.ID, "main-cache"); err != nil {
		t.Fatal(err)
	}
	h.expectRefusal("DELETE", "/api/v1/projects/proj/caches/main-cache", "", 404, api.CodeNotFound)
	if got := got(h.admin.Project(h.ctx, "proj")).must(t); len(got.Caches) != 0 {
		t.Errorf("caches after unsubscribe = %v", got.Caches)
	}
}

func TestSubscriptionTellsRegisteredWorkers(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, projectReq("proj"))).must(t)
	got(h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "c"})).must(t)
	reg := got(h.admin.RegisterWorker(h.ctx, projectPeer("proj"), api.RegisterWorkerRequest{WorkerID: workerA})).must(t)
	h.remember(reg.Token)
	if err := h.admin.Subscribe(h.ctx, "proj", "c"); err != nil {
		t.Fatal(err)
	}
	_, _, changed := h.live.snapshot()
	if !slices.Equal(changed, []string{workerA, workerA}) {
		t.Errorf("registration watcher heard %v, want the worker on register and on subscribe", changed)
	}
}

func TestAPIKeys(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateCache(h.ctx, api.CreateCacheRequest{Name: "c"})).must(t)
	created := got(h.admin.CreateAPIKey(h.ctx, api.CreateAPIKeyRequest{Owner: "ci"})).must(t)
	h.remember(created.Key)
	if !strings.HasPrefix(created.Key, "GRAD") || !created.APIKey.Active || created.APIKey.Owner != "ci" {
		t.Fatalf("created key %+v", created.APIKey)
	}
	second := h.client(created.Key)
	if _, err := second.ListProjects(h.ctx); err != nil {
		t.Fatalf("the new key does not work: %v", err)
	}

	a := h.raw("GET", "/api/v1/api-keys", h.adminKey, "")
	hash, _ := peertoken.APIKeyHash(created.Key)
	if strings.Contains(string(a.body), strings.TrimPrefix(created.Key, "GRAD")) || strings.Contains(string(a.body), hash) {
		t.Error("the key list shows a key or its hash")
	}
	h.expectRefusal("POST", "/api/v1/api-keys", `{"owner":""}`, 400, api.CodeBadRequest)
	h.expectRefusal("POST", "/api/v1/api-keys", `{"owner":"x","cache":"nope"}`, 404, api.CodeNotFound)

	// The new key revokes the bootstrap key; then the last admin key cannot be revoked.
	keys := got(h.admin.APIKeys(h.ctx)).must(t)
	root := keys[slices.IndexFunc(keys, func(k api.APIKey) bool { return k.Owner == "root" })]
	if err := second.RevokeAPIKey(h.ctx, root.ID); err != nil {
		t.Fatal(err)
	}
	h.expectRefusalAs(h.adminKey, "GET", "/api/v1/projects", "", 401, api.CodeUnauthorized)
	h.expectRefusalAs(created.Key, "DELETE", "/api/v1/api-keys/"+root.ID, "", 404, api.CodeNotFound)
	h.expectRefusalAs(created.Key, "DELETE", "/api/v1/api-keys/"+created.APIKey.ID, "", 409, api.CodeLastAdminKey)
	h.expectRefusalAs(created.Key, "DELETE", "/api/v1/api-keys/not-an-id", "", 404, api.CodeNotFound)
	keys = got(second.APIKeys(h.ctx)).must(t)
	if len(keys) != 2 || keys[0].Active == keys[1].Active {
		t.Errorf("keys after revocation: %+v, want one active and one revoked", keys)
	}
	if _, err := second.ListProjects(h.ctx); err != nil {
		t.Errorf("the last admin key stopped working: %v", err)
	}
}

func TestMethodAndStatusOfSuccesses(t *testing.T) {
	h := newHarness(t)
	a := h.raw("POST", "/api/v1/caches", h.adminKey, `{"name":"c","public":true}`)
	if a.status != http.StatusCreated || a.header.Get("Content-Type") != "application/json" {
		t.Errorf("create cache: %d %s", a.status, a.header.Get("Content-Type"))
	}
	got(h.admin.CreateProject(h.ctx, projectReq("p"))).must(t)
	if a := h.raw("PUT", "/api/v1/projects/p/caches/c", h.adminKey, ""); a.status != http.StatusNoContent {
		t.Errorf("subscribe: %d", a.status)
	}
}
