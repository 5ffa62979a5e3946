package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/store/sqlite"
)

// harness is a real API over a real SQLite store in a temporary directory, served by a real
// HTTP server, with an admin key bootstrapped.
type harness struct {
	t        *testing.T
	ctx      context.Context
	store    store.Store
	srv      *httptest.Server
	live     *fakeLive
	adminKey string
	admin    *apiclient.Client
	logs     *syncBuffer
	secrets  []string // every key and token handed out, for the log check
}

func newHarness(t *testing.T, configure ...func(*api.Config)) *harness {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatalf("open sqlite store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	h := &harness{t: t, ctx: t.Context(), store: s, live: newFakeLive(), logs: &syncBuffer{}}
	key, hash, err := peertoken.MintAPIKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.BootstrapAPIKey(h.ctx, store.NewAPIKey{Owner: "root", KeyHash: hash}); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	h.adminKey = key
	h.secrets = append(h.secrets, key, strings.TrimPrefix(key, "GRAD"))
	cfg := api.Config{Store: s, Live: h.live, Logger: slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, f := range configure {
		f(&cfg)
	}
	h.srv = httptest.NewServer(api.New(cfg))
	t.Cleanup(h.srv.Close)
	h.admin = h.client(key)
	t.Cleanup(h.checkLogsHoldNoSecret)
	return h
}

func (h *harness) client(key string) *apiclient.Client {
	h.t.Helper()
	c, err := apiclient.New(h.srv.URL, key, apiclient.WithHTTPClient(h.srv.Client()))
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// remember records a secret the logs must never show.
func (h *harness) remember(secret string) { h.secrets = append(h.secrets, secret) }

func (h *harness) checkLogsHoldNoSecret() {
	logs := h.logs.String()
	for _, s := range h.secrets {
		if s != "" && strings.Contains(logs, s) {
			h.t.Errorf("the API log contains a secret (%d characters)", len(s))
		}
	}
}

// answer is a raw HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// apiError decodes the answer as the API's error body, failing the test when it is not one.
func (a answer) apiError(t *testing.T) api.Error {
	t.Helper()
	var e api.Error
	if err := json.Unmarshal(a.body, &e); err != nil || e.Code == "" || e.Message == "" {
		t.Fatalf("answer %d %q is not a JSON API error: %v", a.status, a.body, err)
	}
	return e
}

// raw sends a request with an exact Authorization value ("" for none) and body.
func (h *harness) raw(method, path, auth, body string) answer {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.ctx, method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}
}

// expectRefusal sends a request as admin and checks the status and error code.
func (h *harness) expectRefusal(method, path, body string, status int, code string) api.Error {
	h.t.Helper()
	return h.expectRefusalAs(h.adminKey, method, path, body, status, code)
}

func (h *harness) expectRefusalAs(key, method, path, body string, status int, code string) api.Error {
	h.t.Helper()
	a := h.raw(method, path, key, body)
	if a.status != status {
		h.t.Fatalf("%s %s: status %d, want %d (%s)", method, path, a.status, status, a.body)
	}
	e := a.apiError(h.t)
	if e.Code != code {
		h.t.Fatalf("%s %s: code %q, want %q (%s)", method, path, e.Code, code, e.Message)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		h.t.Errorf("%s %s: error Content-Type %q", method, path, ct)
	}
	return e
}

// result carries a call's value and error to must: got(f()).must(t).
type result[T any] struct {
	v   T
	err error
}

func got[T any](v T, err error) result[T] { return result[T]{v, err} }

// must fails the test on the error and returns the value.
func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

// fakeLive records what the API asks of the running server.
type fakeLive struct {
	mu      sync.Mutex
	workers map[string]api.LiveWorker
	kicks   int
	applied []store.Effects
	changed []string
}

func newFakeLive() *fakeLive { return &fakeLive{workers: map[string]api.LiveWorker{}} }

func (f *fakeLive) WaitReason(project string, kind store.JobKind, system string) string {
	return "fake: " + project + " " + kind.String() + " " + system
}

func (f *fakeLive) LiveWorkers() map[string]api.LiveWorker {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]api.LiveWorker, len(f.workers))
	for k, v := range f.workers {
		out[k] = v
	}
	return out
}

func (f *fakeLive) setWorker(id string, w api.LiveWorker) {
	f.mu.Lock()
	f.workers[id] = w
	f.mu.Unlock()
}

func (f *fakeLive) Kick() { f.mu.Lock(); f.kicks++; f.mu.Unlock() }

func (f *fakeLive) Apply(_ context.Context, e store.Effects) {
	f.mu.Lock()
	f.applied = append(f.applied, e)
	f.mu.Unlock()
}

func (f *fakeLive) RegistrationChanged(workerID string) {
	f.mu.Lock()
	f.changed = append(f.changed, workerID)
	f.mu.Unlock()
}

func (f *fakeLive) snapshot() (kicks int, applied []store.Effects, changed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kicks, append([]store.Effects(nil), f.applied...), append([]string(nil), f.changed...)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Worker IDs as workers mint them (UUIDv7).
const (
	workerA = "0190a000-0000-7000-8000-00000000000a"
	workerB = "0190b000-0000-7000-8000-00000000000b"
	commit  = "0123456789abcdef0123456789abcdef01234567"
)

func projectReq(name string) api.CreateProjectRequest {
	return api.CreateProjectRequest{Name: name, RepoURL: "https://example.invalid/" + name + ".git",
		Branch: "main", Wildcards: []string{"packages.*.*"}}
}
