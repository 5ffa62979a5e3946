package admincli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

const (
	workerID = "0190a000-0000-7000-8000-00000000000a"
	commit   = "0123456789abcdef0123456789abcdef01234567"
)

// cli runs `gradient-server admin` in-process against a real server over a real store.
type cli struct {
	t       *testing.T
	ctx     context.Context
	dataDir string
	env     map[string]string
	store   store.Store
	live    *liveStub
	secrets []string
	stderrs bytes.Buffer // every command's stderr, checked for secrets at the end
}

type result struct {
	code           int
	stdout, stderr string
}

func (c *cli) run(args ...string) result {
	c.t.Helper()
	var out, errOut bytes.Buffer
	code := admincli.Run(c.ctx, args, &out, &errOut, func(k string) string { return c.env[k] })
	c.stderrs.Write(errOut.Bytes())
	return result{code, out.String(), errOut.String()}
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != admincli.ExitOK {
		c.t.Fatalf("admin %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// expect runs a command that must exit with code and returns its stderr.
func (c *cli) expect(code int, args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != code {
		c.t.Fatalf("admin %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r.stderr
}

// okJSON runs a command with --json and decodes its output into v.
func (c *cli) okJSON(v any, args ...string) {
	c.t.Helper()
	out := c.ok(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("admin %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var keyPattern = regexp.MustCompile(`GRAD[A-Za-z0-9_-]{43}`)

// bootstrapped runs bootstrap on a fresh data directory, then serves the API over the store
// the server would open from that directory, and points the CLI at it with the new key.
func bootstrapped(t *testing.T) *cli {
	c := &cli{t: t, ctx: t.Context(), dataDir: filepath.Join(t.TempDir(), "data"), env: map[string]string{}, live: &liveStub{}}
	out := c.ok("bootstrap", "--data-dir", c.dataDir, "--owner", "ops")
	key := keyPattern.FindString(out)
	if key == "" {
		t.Fatalf("bootstrap printed no key:\n%s", out)
	}
	c.secrets = append(c.secrets, key, strings.TrimPrefix(key, "GRAD"))
	if _, err := os.Stat(filepath.Join(c.dataDir, admincli.SQLiteFile)); err != nil {
		t.Fatalf("bootstrap left no database in the data directory: %v", err)
	}
	s, err := admincli.OpenStore(c.ctx, c.dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c.store = s
	srv := httptest.NewServer(api.New(api.Config{Store: s, Live: c.live}))
	t.Cleanup(srv.Close)
	c.env[admincli.EnvServer] = srv.URL
	c.env[admincli.EnvAPIKey] = key
	t.Cleanup(c.checkNoSecretOnStderr)
	return c
}

func (c *cli) checkNoSecretOnStderr() {
	for _, s := range c.secrets {
		if strings.Contains(c.stderrs.String(), s) {
			c.t.Errorf("a key or token (%d characters) appeared on stderr", len(s))
		}
	}
}

// liveStub is a running server with one live worker.
type liveStub struct {
	mu      sync.Mutex
	workers map[string]api.LiveWorker
	kicks   int
}

func (l *liveStub) LiveWorkers() map[string]api.LiveWorker {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]api.LiveWorker{}
	for k, v := range l.workers {
		out[k] = v
	}
	return out
}
func (l *liveStub) WaitReason(string, store.JobKind, string) string { return "a free slot" }
func (l *liveStub) Kick()                                           { l.mu.Lock(); l.kicks++; l.mu.Unlock() }
func (l *liveStub) Apply(context.Context, store.Effects)            {}
func (l *liveStub) setLive(id string, w api.LiveWorker) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.workers == nil {
		l.workers = map[string]api.LiveWorker{}
	}
	l.workers[id] = w
}

func liveWorker() api.LiveWorker {
	return api.LiveWorker{ConnectedAt: time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC),
		Capabilities: wire.GradientCapabilities{Core: true, Fetch: true, Eval: true, Build: true}}
}
