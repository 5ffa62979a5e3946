package api_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// fakeTriggers answers hooks 202 and counts them, resolves "main" to one commit, and
// "seals" a secret by reversing it (the API must store what the sealer returns).
type fakeTriggers struct{ hooks atomic.Int32 }

const mainHead = "0123456789abcdef0123456789abcdef01234567"

type unresolved struct{}

func (unresolved) Error() string    { return "no such branch" }
func (unresolved) Unresolved() bool { return true }

func (f *fakeTriggers) Hooks() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hooks.Add(1)
		w.WriteHeader(http.StatusAccepted)
	})
}

func (f *fakeTriggers) Resolve(_ context.Context, _ store.Project, name string) (string, string, error) {
	switch name {
	case "main":
		return "main", mainHead, nil
	case "unreachable":
		return "", "", errors.New("git ls-remote: exit status 128")
	}
	return "", "", unresolved{}
}

func (f *fakeTriggers) SealWebhookSecret(b []byte) ([]byte, error) {
	out := slices.Clone(b)
	slices.Reverse(out)
	return out, nil
}

// The hook path is the one route without an API key: the delivery's signature is its
// authentication. Every other method and path under it still needs a key.
func TestHookRouteBypassesKeyAuthOnly(t *testing.T) {
	ft := &fakeTriggers{}
	h := newHarness(t, func(c *api.Config) { c.Triggers = ft })
	if a := h.raw("POST", "/api/v1/hooks/github/demo", "", "{}"); a.status != http.StatusAccepted || ft.hooks.Load() != 1 {
		t.Fatalf("POST hook without a key: %d, hooks %d", a.status, ft.hooks.Load())
	}
	for _, tc := range [][2]string{{"GET", "/api/v1/hooks/github/demo"}, {"POST", "/api/v1/hooks/github"},
		{"POST", "/api/v1/hooks/github/demo/x"}, {"POST", "/api/v1/projects"}} {
		if a := h.raw(tc[0], tc[1], "", "{}"); a.status != http.StatusUnauthorized {
			t.Errorf("%s %s without a key: %d, want 401", tc[0], tc[1], a.status)
		}
	}
	if ft.hooks.Load() != 1 {
		t.Errorf("hooks reached %d times", ft.hooks.Load())
	}
	if !strings.Contains(h.logs.String(), "path=/api/v1/hooks/github/demo status=202") {
		t.Errorf("the delivery is not in the request log:\n%s", h.logs.String())
	}
}

func TestProjectTriggersAreSetAndShownWithoutTheSecret(t *testing.T) {
	h := newHarness(t, func(c *api.Config) { c.Triggers = &fakeTriggers{} })
	p := got(h.admin.CreateProject(h.ctx, api.CreateProjectRequest{Name: "demo", RepoURL: "https://example.org/d.git",
		Wildcards: []string{"packages.*"}})).must(t)
	secret, on := "hook-secret-value", true
	h.remember(secret)
	branches := []string{"main", "release/*"}
	out := got(h.admin.SetProjectTriggers(h.ctx, "demo", api.SetTriggersRequest{Branches: &branches, Poll: &on,
		WebhookSecret: &secret})).must(t)
	if !slices.Equal(out.Branches, branches) || !out.Poll || out.Tags || !out.WebhookSecretSet {
		t.Fatalf("after PATCH: %+v", out)
	}
	st := got(h.store.ProjectTriggers(h.ctx, p.ID)).must(t)
	if string(st.WebhookSecretEnc) != "eulav-terces-kooh" {
		t.Errorf("stored secret %q is not what the sealer returned", st.WebhookSecretEnc)
	}
	shown := got(h.admin.Project(h.ctx, "demo")).must(t)
	if shown.Triggers == nil || !shown.Triggers.WebhookSecretSet || !slices.Equal(shown.Triggers.Branches, branches) {
		t.Errorf("project show: %+v", shown.Triggers)
	}
	clear := ""
	out = got(h.admin.SetProjectTriggers(h.ctx, "demo", api.SetTriggersRequest{WebhookSecret: &clear})).must(t)
	if out.WebhookSecretSet || !out.Poll {
		t.Errorf("after clearing the secret: %+v", out)
	}
	h.expectRefusal("PATCH", "/api/v1/projects/demo/triggers", `{"branches": ["refs/heads/main"]}`, 400, api.CodeBadRequest)
	h.expectRefusal("PATCH", "/api/v1/projects/nope/triggers", `{"poll": true}`, 404, api.CodeNotFound)
}

func TestEvalStartResolvesABranch(t *testing.T) {
	h := newHarness(t, func(c *api.Config) { c.Triggers = &fakeTriggers{} })
	got(h.admin.CreateProject(h.ctx, api.CreateProjectRequest{Name: "demo", RepoURL: "https://example.org/d.git",
		Wildcards: []string{"packages.*"}})).must(t)
	e := got(h.admin.StartEvaluation(h.ctx, "demo", api.StartEvaluationRequest{Branch: "main"})).must(t)
	if e.Commit != mainHead || e.Branch != "main" {
		t.Errorf("evaluation %+v", e)
	}
	h.expectRefusal("POST", "/api/v1/projects/demo/evaluations", `{"branch": "nope"}`, 404, api.CodeNotFound)
	h.expectRefusal("POST", "/api/v1/projects/demo/evaluations", `{"branch": "unreachable"}`, 502, api.CodeBadGateway)
}

func TestWithoutTriggersBranchesAreNotResolved(t *testing.T) {
	h := newHarness(t)
	got(h.admin.CreateProject(h.ctx, api.CreateProjectRequest{Name: "demo", RepoURL: "https://example.org/d.git",
		Wildcards: []string{"packages.*"}})).must(t)
	h.expectRefusal("POST", "/api/v1/projects/demo/evaluations", `{"branch": "main"}`, 501, api.CodeNotImplemented)
	if a := h.raw("POST", "/api/v1/hooks/github/demo", "", "{}"); a.status != http.StatusUnauthorized {
		t.Errorf("hook without triggers: %d", a.status)
	}
}
