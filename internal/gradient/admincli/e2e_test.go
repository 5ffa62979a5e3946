package admincli_test

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/admincli"
	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

func TestBootstrapRefusesASecondKey(t *testing.T) {
	c := bootstrapped(t)
	r := c.run("bootstrap", "--data-dir", c.dataDir)
	if r.code != admincli.ExitError || !strings.Contains(r.stderr, "already exists") || keyPattern.MatchString(r.stdout+r.stderr) {
		t.Fatalf("second bootstrap: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	keys, err := c.store.ListAPIKeys(c.ctx)
	if err != nil || len(keys) != 1 || keys[0].Owner != "ops" {
		t.Fatalf("keys after the refused bootstrap: %+v, %v", keys, err)
	}
	if hash, _ := peertoken.APIKeyHash(c.env[admincli.EnvAPIKey]); hash != keys[0].KeyHash {
		t.Error("the printed key does not hash to the stored one")
	}
}

var tokenLine = regexp.MustCompile(`(?m)^  ([A-Za-z0-9+/]{64})$`)

func TestAdministerThroughTheServer(t *testing.T) {
	c := bootstrapped(t)
	c.ok("cache", "create", "main", "--public")
	// Flags after the positional argument work too.
	c.ok("project", "create", "hello", "--repo-url", "https://example.invalid/hello.git", "--wildcard", "packages.*.*", "--branch", "main")
	c.ok("cache", "subscribe", "hello", "main")

	out := c.ok("worker", "register", workerID, "--project", "hello", "--name", "builder-1")
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("worker register printed no token:\n%s", out)
	}
	token := m[1]
	c.secrets = append(c.secrets, token)
	var project api.Project
	c.okJSON(&project, "project", "show", "hello")
	if !strings.Contains(out, project.ID+":"+token) {
		t.Errorf("worker register printed no peers-file line %s:<token>:\n%s", project.ID, out)
	}
	if !slices.Equal(project.Caches, []string{"main"}) {
		t.Errorf("project caches %v after subscribe", project.Caches)
	}
	id, err := c.store.WorkerIdentity(c.ctx, workerID)
	if err != nil || !peertoken.Verify(id.TokenHashes[project.ID], token) {
		t.Fatalf("the printed token does not verify against the stored hash (%v)", err)
	}

	c.live.setLive(workerID, liveWorker())
	list := c.ok("worker", "list")
	if !strings.Contains(list, workerID) || !strings.Contains(list, "live") || !strings.Contains(list, "fetch,eval,build") {
		t.Errorf("worker list:\n%s", list)
	}
	c.ok("worker", "deactivate", workerID, "--project", "hello")
	var shown api.Worker
	c.okJSON(&shown, "worker", "show", workerID)
	if len(shown.Registrations) != 1 || shown.Registrations[0].Active {
		t.Errorf("after deactivate: %+v", shown.Registrations)
	}
	c.ok("worker", "activate", workerID, "--project", "hello")

	for _, args := range [][]string{{"project", "list"}, {"cache", "list"}, {"worker", "list"}, {"worker", "show", workerID}, {"key", "list"}} {
		if out := c.ok(args...); strings.Contains(out, token) || keyPattern.MatchString(out) {
			t.Errorf("admin %s shows a secret", strings.Join(args, " "))
		}
	}
}

func TestEvaluationsBuildsLogsAndAborts(t *testing.T) {
	c := bootstrapped(t)
	c.ok("project", "create", "hello", "--repo-url", "https://example.invalid/hello.git", "--wildcard", "packages.*.*")
	var ev api.Evaluation
	c.okJSON(&ev, "eval", "start", "hello", commit)
	if ev.Commit != commit || ev.Status != "Queued" {
		t.Fatalf("eval start: %+v", ev)
	}
	if list := c.ok("eval", "list", "hello"); !strings.Contains(list, ev.ID) || !strings.Contains(list, "Queued") {
		t.Errorf("eval list:\n%s", list)
	}

	build, log := c.runningBuildWithLog(ev.ID)
	if got := c.ok("build", "log", build.ID); got != string(log) {
		t.Errorf("build log printed %d bytes, want the %d-byte log", len(got), len(log))
	}
	if got := c.ok("build", "log", build.ID, "--offset", "16", "--limit", "9"); got != "compiling" {
		t.Errorf("build log window = %q", got)
	}
	if show := c.ok("build", "show", build.ID); !strings.Contains(show, "Building") || !strings.Contains(show, workerID) {
		t.Errorf("build show:\n%s", show)
	}

	var aborted api.AbortResponse
	c.okJSON(&aborted, "abort", "build", build.ID, "--reason", "test")
	if aborted.Build == nil || aborted.Build.Status != "Aborted" || aborted.StoppedJobs != 1 {
		t.Errorf("abort build: %+v", aborted)
	}
	c.expect(admincli.ExitError, "abort", "build", build.ID) // already finished: 409
	// Following a build that is over prints its log at once and exits with its end state.
	if r := c.run("build", "log", build.ID, "--follow"); r.code != admincli.ExitError || r.stdout != string(log) ||
		!strings.Contains(r.stderr, "ended Aborted") {
		t.Errorf("build log --follow of an aborted build: exit %d, %d bytes, stderr %q", r.code, len(r.stdout), r.stderr)
	}
	c.ok("abort", "eval", ev.ID)
	if stderr := c.expect(admincli.ExitError, "eval", "show", "0190ffff-0000-7000-8000-000000000000"); !strings.Contains(stderr, "not found") {
		t.Errorf("unknown evaluation: %s", stderr)
	}
}

func TestKeysThroughTheCLI(t *testing.T) {
	c := bootstrapped(t)
	c.ok("cache", "create", "private")
	out := c.ok("key", "create", "--owner", "nix-reader", "--cache", "private")
	key := keyPattern.FindString(out)
	if key == "" {
		t.Fatalf("key create printed no key:\n%s", out)
	}
	c.secrets = append(c.secrets, key)
	var keys api.APIKeyList
	c.okJSON(&keys, "key", "list")
	if len(keys.APIKeys) != 2 {
		t.Fatalf("key list: %+v", keys)
	}
	var pinned api.APIKey
	for _, k := range keys.APIKeys {
		if k.Owner == "nix-reader" {
			pinned = k
		}
	}
	if pinned.CacheID == "" {
		t.Fatal("the new key is not pinned")
	}
	// The pinned key reads its cache and nothing else.
	asPinned := c.run("cache", "list", "--api-key", key)
	if asPinned.code != admincli.ExitOK || !strings.Contains(asPinned.stdout, "private") {
		t.Errorf("pinned cache list: %+v", asPinned)
	}
	if stderr := c.expect(admincli.ExitError, "project", "list", "--api-key", key); !strings.Contains(stderr, "403") {
		t.Errorf("pinned project list: %s", stderr)
	}
	c.ok("key", "revoke", pinned.ID)
	if stderr := c.expect(admincli.ExitError, "cache", "list", "--api-key", key); !strings.Contains(stderr, "401") {
		t.Errorf("revoked key: %s", stderr)
	}
}

// runningBuildWithLog plays the worker's side on the store: the flake job reports one
// derivation, its build is claimed and logs 16000 bytes.
func (c *cli) runningBuildWithLog(evalID string) (api.Build, []byte) {
	c.t.Helper()
	a, err := c.store.Claim(c.ctx, store.EvalJob(evalID), workerID)
	if err != nil {
		c.t.Fatal(err)
	}
	d := store.Derivation{DrvPath: "/nix/store/0123456789abcdfghijklmnpqrsvwxyz-hello.drv", Attr: "packages.x86_64-linux.hello",
		System: "x86_64-linux", Pname: "hello", Outputs: []store.Output{{Name: "out", Path: "/nix/store/0123456789abcdfghijklmnpqrsvwxyy-hello"}}}
	if _, err := c.store.AddEvalResult(c.ctx, store.EvalBatch{AssignmentID: a.ID, Derivations: []store.Derivation{d}}); err != nil {
		c.t.Fatal(err)
	}
	var detail api.EvaluationDetail
	c.okJSON(&detail, "eval", "show", evalID)
	if len(detail.Builds) != 1 {
		c.t.Fatalf("eval show: %+v", detail)
	}
	ba, err := c.store.Claim(c.ctx, store.BuildJob(detail.Builds[0].ID), workerID)
	if err != nil {
		c.t.Fatal(err)
	}
	log := bytes.Repeat([]byte("compiling hello\n"), 1000)
	if err := c.store.AppendBuildLog(c.ctx, ba.ID, log); err != nil {
		c.t.Fatal(err)
	}
	return detail.Builds[0], log
}
