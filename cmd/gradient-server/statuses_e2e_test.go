package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
)

// forgeCall is one request the fake forge accepted, as its documented API reads it.
type forgeCall struct {
	forge, repo, commit, state, context, target, description string
	answered                                                 int
}

// fakeForges is one loopback HTTP server standing in for GitHub, Gitea and GitLab (told apart
// by their API paths) and a webhook receiver. It checks each request against the forge's
// documented shape and token independently of the code that built it, and answers 500 to
// the first request whose state is in failOnce.
type fakeForges struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	calls    []forgeCall
	hooks    []forgestatus.Event
	failOnce map[string]bool // "forge/state" answered 500 once
}

var (
	githubPath = regexp.MustCompile(`^/repos/acme/app/statuses/([0-9a-f]{40})$`)
	giteaPath  = regexp.MustCompile(`^/api/v1/repos/acme/app/statuses/([0-9a-f]{40})$`)
	gitlabPath = regexp.MustCompile(`^/api/v4/projects/acme%2Fapp/statuses/([0-9a-f]{40})$`)
)

const hookSecret = "webhook-secret-e2e"

func newFakeForges(t *testing.T) *fakeForges {
	f := &fakeForges{t: t, failOnce: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeForges) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.URL.Path == "/hook" {
		f.hook(w, r, body)
		return
	}
	c, err := f.read(r, body)
	if err != nil {
		f.t.Errorf("fake forge: %s %s: %v", r.Method, r.URL.EscapedPath(), err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c.answered = http.StatusCreated
	if key := c.forge + "/" + c.state; f.failOnce[key] {
		delete(f.failOnce, key)
		c.answered = http.StatusInternalServerError
	}
	f.calls = append(f.calls, c)
	w.WriteHeader(c.answered)
}

// read checks the request against the documented API of the forge its path names.
func (f *fakeForges) read(r *http.Request, body []byte) (forgeCall, error) {
	p := r.URL.EscapedPath()
	c := forgeCall{repo: "acme/app"}
	var fields map[string]string
	var err error
	switch {
	case githubPath.MatchString(p):
		c.forge, c.commit = "github", githubPath.FindStringSubmatch(p)[1]
		fields, err = jsonFields(r, body, "Authorization", "Bearer gh-token")
	case giteaPath.MatchString(p):
		c.forge, c.commit = "gitea", giteaPath.FindStringSubmatch(p)[1]
		fields, err = jsonFields(r, body, "Authorization", "token gitea-token")
	case gitlabPath.MatchString(p):
		c.forge, c.commit = "gitlab", gitlabPath.FindStringSubmatch(p)[1]
		fields, err = formFields(r, body)
	default:
		return c, errorf("not a documented status path")
	}
	if err != nil {
		return c, err
	}
	c.state, c.target, c.description, c.context = fields["state"], fields["target_url"], fields["description"], fields["context"]
	return c, nil
}

func jsonFields(r *http.Request, body []byte, header, want string) (map[string]string, error) {
	if r.Method != "POST" || r.Header.Get(header) != want || r.Header.Get("Content-Type") != "application/json" {
		return nil, errorf("method %s, %s %q, content type %q", r.Method, header, r.Header.Get(header), r.Header.Get("Content-Type"))
	}
	var m map[string]string
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	for k := range m {
		if k != "state" && k != "target_url" && k != "description" && k != "context" {
			return nil, errorf("undocumented field %q", k)
		}
	}
	return m, nil
}

func formFields(r *http.Request, body []byte) (map[string]string, error) {
	if r.Method != "POST" || r.Header.Get("PRIVATE-TOKEN") != "gitlab-token" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return nil, errorf("method %s, PRIVATE-TOKEN %q", r.Method, r.Header.Get("PRIVATE-TOKEN"))
	}
	q, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	return map[string]string{"state": q.Get("state"), "target_url": q.Get("target_url"),
		"description": q.Get("description"), "context": q.Get("name")}, nil
}

func (f *fakeForges) hook(w http.ResponseWriter, r *http.Request, body []byte) {
	if !forgestatus.Verify([]byte(hookSecret), body, r.Header.Get(forgestatus.SignatureHeader)) {
		f.t.Errorf("webhook signature %q does not verify", r.Header.Get(forgestatus.SignatureHeader))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ev forgestatus.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		f.t.Errorf("webhook body: %v", err)
	}
	f.mu.Lock()
	f.hooks = append(f.hooks, ev)
	f.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// accepted lists the states a forge accepted (2xx) for commit and context, in order.
func (f *fakeForges) accepted(forge, context string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c.forge == forge && c.context == context && c.answered == http.StatusCreated {
			out = append(out, c.state)
		}
	}
	return out
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// configureStatus runs `admin project status` with the given flags.
func configureStatus(t *testing.T, f *fleet, args ...string) {
	t.Helper()
	cmd := serverCmd(append([]string{"admin", "project", "status", "demo", "--json"}, args...)...)
	cmd.Env = append(cmd.Env, "GRADIENT_SERVER=http://"+f.srv.addr, "GRADIENT_API_KEY="+f.key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin project status %v: %v\n%s", args, err, stderrOf(err))
	}
	if strings.Contains(string(out), "token\":\"") || strings.Contains(string(out), "-token") {
		t.Fatalf("admin project status printed a token: %s", out)
	}
}

func secretFile(t *testing.T, value string) string {
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCommitStatusesEndToEnd runs a real server and worker over real Nix and git: each
// evaluation's statuses reach a fake forge in the documented shape of GitHub, Gitea and
// GitLab with the project's token — pending, then success or failure — a status answered 500
// is retried and delivered, the signed webhook verifies, and eval show reports the delivery
// (gradient-server §12).
func TestCommitStatusesEndToEnd(t *testing.T) {
	forges := newFakeForges(t)
	f := newFleetFlags(t, "--public-url=http://ADDR")
	f.startWorker()
	public := "http://" + f.srv.addr
	cases := []struct {
		forge, token string
		wildcard     string
		final        string
	}{
		{"github", "gh-token", "", "success"},
		{"gitea", "gitea-token", "", "success"},
		{"gitlab", "gitlab-token", "tests." + f.flake.System + ".fail", "failed"},
	}
	forges.failOnce["gitea/success"] = true
	for _, c := range cases {
		t.Run(c.forge, func(t *testing.T) {
			args := []string{"--forge=" + c.forge, "--api-url=" + forges.srv.URL, "--repo=acme/app",
				"--token-file=" + secretFile(t, c.token), "--per-build=" + map[bool]string{true: "on", false: "off"}[c.forge == "github"]}
			if c.forge == "github" {
				args = append(args, "--notify-url="+forges.srv.URL+"/hook", "--notify-secret-file="+secretFile(t, hookSecret))
			}
			configureStatus(t, f, args...)
			var wildcards []string
			if c.wildcard != "" {
				wildcards = []string{c.wildcard}
			}
			id := f.evaluate(t, wildcards...)
			f.settled(t, id, 5*time.Minute)
			d := waitDelivered(t, f.api, id)
			got := forges.accepted(c.forge, "gradient/demo")
			if len(got) != 2 || got[0] != "pending" || got[1] != c.final {
				t.Fatalf("%s accepted %v, want [pending %s]; eval show: %+v", c.forge, got, c.final, d.Statuses)
			}
			forges.mu.Lock()
			calls := append([]forgeCall(nil), forges.calls...)
			forges.mu.Unlock()
			for _, call := range calls {
				if call.forge == c.forge && (call.commit != f.flake.Commit || call.target != public+"/evaluations/"+id) {
					t.Errorf("call %+v: want commit %s, target %s/evaluations/%s", call, f.flake.Commit, public, id)
				}
			}
			checkCase(t, forges, f, c.forge, id, d)
		})
	}
}

// checkCase checks what each forge's case adds: per-build statuses and the webhook
// (GitHub), the retry after a 500 (Gitea).
func checkCase(t *testing.T, forges *fakeForges, f *fleet, forge, id string, d api.EvaluationDetail) {
	switch forge {
	case "github":
		for _, name := range []string{"a", "b", "c"} {
			ctx := "gradient/demo/packages." + f.flake.System + "." + name
			if got := forges.accepted("github", ctx); len(got) == 0 || got[len(got)-1] != "success" {
				t.Errorf("per-build status %s: %v", ctx, got)
			}
		}
		forges.mu.Lock()
		defer forges.mu.Unlock()
		var evalHooks []string
		for _, h := range forges.hooks {
			if h.EvaluationID == id && h.Kind == "evaluation" {
				evalHooks = append(evalHooks, string(h.State))
			}
		}
		if len(evalHooks) != 2 || evalHooks[0] != "pending" || evalHooks[1] != "success" {
			t.Errorf("webhook evaluation events %v", evalHooks)
		}
	case "gitea":
		forges.mu.Lock()
		if len(forges.failOnce) != 0 {
			t.Errorf("the forge never answered 500: %v", forges.failOnce)
		}
		forges.mu.Unlock()
		for _, s := range d.Statuses {
			if s.Sink == "forge" && s.State == "success" && (s.Attempts != 2 || s.LastHTTP != 201) {
				t.Errorf("retried status: %+v", s)
			}
		}
	}
}

// waitDelivered waits until none of the evaluation's statuses is still queued and every
// one that was not superseded was delivered.
func waitDelivered(t *testing.T, c *apiclient.Client, id string) api.EvaluationDetail {
	t.Helper()
	var d api.EvaluationDetail
	waitFor(t, "statuses of "+id+" delivered", time.Minute, func() (bool, string) {
		var err error
		if d, err = c.Evaluation(bg, id); err != nil {
			return false, err.Error()
		}
		for _, s := range d.Statuses {
			if s.Delivery == "failed" {
				t.Fatalf("status given up: %+v", s)
			}
			if s.Delivery != "delivered" && s.Delivery != "superseded" {
				return false, fmt.Sprintf("%+v", d.Statuses)
			}
		}
		return len(d.Statuses) > 0, "no statuses"
	})
	return d
}

// TestCommitStatusSurvivesRestart: a status the forge refused (503) stays in the outbox
// across a kill -9 of the server and is delivered by the restarted one
// (gradient-server §12.4). No worker is needed: a queued evaluation's pending status is enough.
func TestCommitStatusSurvivesRestart(t *testing.T) {
	var down sync.Mutex
	refusing := true
	forge := &fakeForges{t: t, failOnce: map[string]bool{}}
	forge.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		down.Lock()
		defer down.Unlock()
		if refusing {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		forge.serve(w, r)
	}))
	t.Cleanup(forge.srv.Close)
	f := newFleetFlags(t, "--public-url=http://public.example:8080")
	configureStatus(t, f, "--forge=github", "--api-url="+forge.srv.URL, "--repo=acme/app", "--token-file="+secretFile(t, "gh-token"))
	id := f.evaluate(t)
	waitFor(t, "a refused attempt", 30*time.Second, func() (bool, string) {
		d, err := f.api.Evaluation(bg, id)
		if err != nil || len(d.Statuses) != 1 {
			return false, fmt.Sprint(err)
		}
		s := d.Statuses[0]
		return s.Attempts >= 1 && s.LastHTTP == 503 && s.Delivery == "queued", fmt.Sprintf("%+v", s)
	})
	f.srv.kill()
	down.Lock()
	refusing = false
	down.Unlock()
	// Restarted without --public-url: the link is the bound --listen address.
	f.srv = startServer(t, f.srv.addr, f.srv.dataDir)
	d := waitDelivered(t, f.api, id)
	if got := forge.accepted("github", "gradient/demo"); len(got) != 1 || got[0] != "pending" || d.Statuses[0].LastHTTP != 201 {
		t.Fatalf("after the restart the forge accepted %v; statuses %+v", got, d.Statuses)
	}
	forge.mu.Lock()
	defer forge.mu.Unlock()
	if c := forge.calls[0]; c.target != "http://"+f.srv.addr+"/evaluations/"+id {
		t.Errorf("target %q, want the listen address's", c.target)
	}
}
