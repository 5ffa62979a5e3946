package statussender

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
	"github.com/buildfleet/buildfleet/internal/gradient/clocktest"
	"github.com/buildfleet/buildfleet/internal/gradient/forgestatus"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// received is one request the fake forge saw.
type received struct {
	path, auth, ctype, body string
	sig                     string
}

// fakeForge answers with codes in turn (the last one repeats) and records every request.
type fakeForge struct {
	mu    sync.Mutex
	codes []int
	got   []received
}

func (f *fakeForge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, received{path: r.URL.Path, auth: r.Header.Get("Authorization") + r.Header.Get("PRIVATE-TOKEN"),
		ctype: r.Header.Get("Content-Type"), body: string(body), sig: r.Header.Get(forgestatus.SignatureHeader)})
	code := f.codes[min(len(f.got), len(f.codes))-1]
	w.WriteHeader(code)
}

type rig struct {
	t       *testing.T
	ctx     context.Context
	st      store.Store
	clock   *clocktest.Clock
	box     *aeadbox.Box
	project store.Project
	sender  *Sender
	log     *bytes.Buffer
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, ctx: context.Background(), clock: clocktest.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)), log: &bytes.Buffer{}}
	var err error
	if r.st, err = sqlite.Open(filepath.Join(t.TempDir(), "db"), store.WithClock(r.clock.Now)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.st.Close() })
	if r.box, err = aeadbox.LoadOrCreate(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if r.project, err = r.st.CreateProject(r.ctx, store.NewProject{Name: "demo", RepoURL: "file:///x", Wildcards: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	r.sender = New(Config{Store: r.st, Secrets: r.box, PublicURL: "http://ci.example:3000/", Now: r.clock.Now,
		Rand: func() float64 { return 0.5 }, Logger: slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Retry: forgestatus.Retry{Base: time.Second, Cap: time.Minute, MaxAttempts: 3}})
	return r
}

func (r *rig) seal(purpose, v string) []byte {
	b, err := r.box.Seal(purpose, []byte(v))
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *rig) configure(forge, apiURL, repo, notifyURL string) {
	c := store.StatusConfig{ProjectID: r.project.ID, Forge: forge, APIURL: apiURL, Repo: repo, NotifyURL: notifyURL}
	if forge != "" {
		c.TokenEnc = r.seal(aeadbox.PurposeStatusToken, "tok-"+forge)
	}
	if notifyURL != "" {
		c.NotifySecretEnc = r.seal(aeadbox.PurposeNotifySecret, "hook-secret")
	}
	if err := r.st.SetStatusConfig(r.ctx, c); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) evaluation() store.Evaluation {
	ev, err := r.st.CreateEvaluation(r.ctx, store.NewEvaluation{ProjectID: r.project.ID, Commit: commit})
	if err != nil {
		r.t.Fatal(err)
	}
	return ev
}

func (r *rig) rows(evalID string) []store.OutgoingStatus {
	rows, err := r.st.EvaluationStatuses(r.ctx, evalID)
	if err != nil {
		r.t.Fatal(err)
	}
	return rows
}

// A 500 is retried after the backoff, then delivered; the request has the documented shape.
func TestRetriedThenDelivered(t *testing.T) {
	for _, c := range []struct{ forge, path, auth, ctype, body string }{
		{"github", "/repos/acme/app/statuses/" + commit, "Bearer tok-github", "application/json",
			`{"state":"pending","target_url":"http://ci.example:3000/evaluations/ID","description":"evaluation Queued","context":"gradient/demo"}`},
		{"gitea", "/api/v1/repos/acme/app/statuses/" + commit, "token tok-gitea", "application/json",
			`{"state":"pending","target_url":"http://ci.example:3000/evaluations/ID","description":"evaluation Queued","context":"gradient/demo"}`},
		{"gitlab", "/api/v4/projects/acme/app/statuses/" + commit, "tok-gitlab", "application/x-www-form-urlencoded",
			"description=evaluation+Queued&name=gradient%2Fdemo&state=pending&target_url=http%3A%2F%2Fci.example%3A3000%2Fevaluations%2FID"},
	} {
		t.Run(c.forge, func(t *testing.T) {
			r := newRig(t)
			forge := &fakeForge{codes: []int{500, 201}}
			srv := httptest.NewServer(forge)
			defer srv.Close()
			r.configure(c.forge, srv.URL, "acme/app", "")
			ev := r.evaluation()
			if n := r.sender.Drain(r.ctx); n != 1 {
				t.Fatalf("drained %d", n)
			}
			row := r.rows(ev.ID)[0]
			if row.Outcome != store.StatusQueued || row.Attempts != 1 || row.LastError != "HTTP 500" || !row.NextAt.Equal(r.clock.Now().Add(time.Second)) {
				t.Fatalf("after a 500: %+v", row)
			}
			if n := r.sender.Drain(r.ctx); n != 0 {
				t.Fatalf("retried before the backoff: %d", n)
			}
			r.clock.Advance(time.Second)
			r.sender.Drain(r.ctx)
			if row = r.rows(ev.ID)[0]; row.Outcome != store.StatusDelivered || row.Attempts != 2 || row.LastHTTP != 201 {
				t.Fatalf("after a 201: %+v", row)
			}
			want := received{path: c.path, auth: c.auth, ctype: c.ctype, body: strings.ReplaceAll(c.body, "ID", ev.ID)}
			if len(forge.got) != 2 || forge.got[1] != want {
				t.Fatalf("forge got %+v\nwant %+v", forge.got, want)
			}
			if r.sender.Counters().Retried[c.forge].Load() != 1 || r.sender.Counters().Delivered[c.forge].Load() != 1 {
				t.Error("counters")
			}
			if strings.Contains(r.log.String(), "tok-") {
				t.Errorf("the token reached the log:\n%s", r.log)
			}
		})
	}
}

// A refusal that will not change (401) is given up at once; a 503 after MaxAttempts.
func TestGivenUp(t *testing.T) {
	r := newRig(t)
	forge := &fakeForge{codes: []int{401}}
	srv := httptest.NewServer(forge)
	defer srv.Close()
	r.configure("github", srv.URL, "acme/app", "")
	ev := r.evaluation()
	r.sender.Drain(r.ctx)
	if row := r.rows(ev.ID)[0]; row.Outcome != store.StatusFailed || row.LastError != "HTTP 401" || row.Attempts != 1 {
		t.Fatalf("after a 401: %+v", row)
	}
	forge.codes = []int{503}
	ev = r.evaluation()
	for range 3 {
		r.sender.Drain(r.ctx)
		r.clock.Advance(time.Hour)
	}
	if row := r.rows(ev.ID)[0]; row.Outcome != store.StatusFailed || row.Attempts != 3 {
		t.Fatalf("after three 503s: %+v", row)
	}
	if got := r.sender.Counters().Failed["github"].Load(); got != 2 {
		t.Errorf("failed counter %d", got)
	}
}

// The webhook's body describes the event and its signature verifies under the secret.
func TestWebhookSigned(t *testing.T) {
	r := newRig(t)
	hook := &fakeForge{codes: []int{204}}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	r.configure("", "", "", srv.URL+"/hook")
	ev := r.evaluation()
	r.sender.Drain(r.ctx)
	if len(hook.got) != 1 || !forgestatus.Verify([]byte("hook-secret"), []byte(hook.got[0].body), hook.got[0].sig) {
		t.Fatalf("webhook %+v", hook.got)
	}
	var e forgestatus.Event
	if err := json.Unmarshal([]byte(hook.got[0].body), &e); err != nil || e.Kind != "evaluation" || e.EvaluationID != ev.ID ||
		e.Commit != commit || e.State != forgestatus.Pending || e.Project != "demo" || e.TargetURL != "http://ci.example:3000/evaluations/"+ev.ID {
		t.Fatalf("event %+v: %v", e, err)
	}
	if r.rows(ev.ID)[0].Outcome != store.StatusDelivered {
		t.Error("not recorded delivered")
	}
}

// A redirect is not followed (the token would go along) and counts as a refusal.
func TestRedirectNotFollowed(t *testing.T) {
	r := newRig(t)
	other := &fakeForge{codes: []int{201}}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	srv := httptest.NewServer(http.RedirectHandler(otherSrv.URL+"/x", http.StatusFound))
	defer srv.Close()
	r.configure("github", srv.URL, "acme/app", "")
	ev := r.evaluation()
	r.sender.Drain(r.ctx)
	if row := r.rows(ev.ID)[0]; row.Outcome != store.StatusFailed || row.LastHTTP != 302 || len(other.got) != 0 {
		t.Fatalf("redirect: %+v, other got %d", row, len(other.got))
	}
}

// Run delivers on Kick without waiting for its poll, and stops with its context.
func TestRunDeliversOnKick(t *testing.T) {
	r := newRig(t)
	forge := &fakeForge{codes: []int{201}}
	srv := httptest.NewServer(forge)
	defer srv.Close()
	r.configure("gitea", srv.URL, "acme/app", "")
	r.sender.cfg.Poll = time.Hour
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.sender.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	ev := r.evaluation()
	r.sender.Kick()
	deadline := time.Now().Add(10 * time.Second)
	for r.rows(ev.ID)[0].Outcome != store.StatusDelivered {
		if time.Now().After(deadline) {
			t.Fatalf("not delivered after a Kick: %+v", r.rows(ev.ID))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
