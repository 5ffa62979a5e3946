package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/apiclient"
	"github.com/buildfleet/buildfleet/internal/gradient/handshake"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/session"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
)

// fleet is a server on a fresh SQLite data directory with one project (the test flake's
// repository) subscribed to one cache, and one registered worker.
type fleet struct {
	t         *testing.T
	srv       *serverProc
	api       *apiclient.Client
	flake     nixexectest.Flake
	project   api.Project
	cache     api.Cache
	workerID  string
	key       string // the API key (admin commands)
	token     string
	peersLine string
	baseDir   string
}

func newFleet(t *testing.T) *fleet { return newFleetFlags(t) }

// newFleetFlags is newFleet with server flags, "ADDR" in them standing for the server's
// address.
func newFleetFlags(t *testing.T, flags ...string) *fleet {
	f := &fleet{t: t, flake: nixexectest.NewFlake(t), workerID: newWorkerID(t), baseDir: t.TempDir()}
	dataDir, addr := t.TempDir(), freeAddr(t)
	for i := range flags {
		flags[i] = strings.ReplaceAll(flags[i], "ADDR", addr)
	}
	f.key, f.api = bootstrapKey(t, addr, dataDir)
	f.srv = startServer(t, addr, dataDir, flags...)
	var err error
	if f.cache, err = f.api.CreateCache(bg, api.CreateCacheRequest{Name: "main"}); err != nil {
		t.Fatal(err)
	}
	f.project, err = f.api.CreateProject(bg, api.CreateProjectRequest{Name: "demo", RepoURL: f.flake.URL, Branch: "main",
		Wildcards: []string{"packages." + f.flake.System + ".*"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.api.Subscribe(bg, f.project.ID, f.cache.ID); err != nil {
		t.Fatal(err)
	}
	reg, err := f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: f.project.ID},
		api.RegisterWorkerRequest{WorkerID: f.workerID})
	if err != nil {
		t.Fatal(err)
	}
	f.token, f.peersLine = reg.Token, reg.PeersFileLine
	return f
}

// startWorker starts the fleet's worker, owned by the whole test (t is the top-level test).
func (f *fleet) startWorker() *proc {
	w := startWorker(f.t, f.srv, f.workerID, f.baseDir, f.peersLine)
	w.waitLog(`RequestJob|requesting|session (served|running)|connected`, 60*time.Second)
	return w
}

// evaluate starts an evaluation of the flake's commit with the given wildcards.
func (f *fleet) evaluate(t *testing.T, wildcards ...string) string {
	t.Helper()
	ev, err := f.api.StartEvaluation(bg, f.project.ID, api.StartEvaluationRequest{Commit: f.flake.Commit, Wildcards: wildcards})
	if err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

// settled waits for an evaluation to reach a terminal status and returns it with its builds.
func (f *fleet) settled(t *testing.T, id string, within time.Duration) api.EvaluationDetail {
	t.Helper()
	var d api.EvaluationDetail
	waitFor(t, "evaluation "+id+" to settle", within, func() (bool, string) {
		var err error
		if d, err = f.api.Evaluation(bg, id); err != nil {
			return false, err.Error()
		}
		s := d.Evaluation.Status
		return s == "Completed" || s == "Failed" || s == "Aborted", summary(d)
	})
	return d
}

// completed waits for an evaluation to complete. It fails at once when that can no longer
// happen — the evaluation ended otherwise, or one of its builds failed for good — rather than
// waiting out the time allowed.
// The logs of procs are added to a failure's message.
func (f *fleet) completed(t *testing.T, id string, within time.Duration, procs ...*proc) api.EvaluationDetail {
	t.Helper()
	var d api.EvaluationDetail
	waitFor(t, "evaluation "+id+" to complete", within, func() (bool, string) {
		var err error
		if d, err = f.api.Evaluation(bg, id); err != nil {
			return false, err.Error()
		}
		if d.Evaluation.Status == "Completed" {
			return true, ""
		}
		if why := cannotComplete(d); why != "" {
			t.Fatalf("evaluation %s can no longer complete: %s: %s%s", id, why, summary(d), logsOf(procs))
		}
		return false, summary(d)
	})
	return d
}

// logsOf is the logs of procs, each under its name.
func logsOf(procs []*proc) string {
	var b strings.Builder
	for _, p := range procs {
		fmt.Fprintf(&b, "\n%s:\n%s", p.name, p.log)
	}
	return b.String()
}

// cannotComplete says why an evaluation can no longer complete, or "".
func cannotComplete(d api.EvaluationDetail) string {
	if store.EvaluationStatus(d.Evaluation.StatusCode).Terminal() {
		return "it ended " + d.Evaluation.Status
	}
	for _, b := range d.Builds {
		if s := store.BuildStatus(b.StatusCode); s.Terminal() && !s.Succeeded() {
			return "build " + filepath.Base(b.DrvPath) + " ended " + b.Status
		}
	}
	return ""
}

// waitBuildStatus waits until a build has status want (a status it is not yet finished in:
// Queued or Building), failing at once if it ends instead.
func (f *fleet) waitBuildStatus(t *testing.T, id, want string, within time.Duration) {
	t.Helper()
	waitFor(t, "build "+id+" to be "+want, within, func() (bool, string) {
		b, err := f.api.Build(bg, id)
		if err != nil {
			return false, err.Error()
		}
		if store.BuildStatus(b.Build.StatusCode).Terminal() {
			t.Fatalf("build %s ended %s: it will never be %s", id, b.Build.Status, want)
		}
		return b.Build.Status == want, b.Build.Status
	})
}

func summary(d api.EvaluationDetail) string {
	var b strings.Builder
	b.WriteString(d.Evaluation.Status)
	for _, bu := range d.Builds {
		b.WriteString(" " + bu.Pname + filepath.Base(bu.DrvPath) + "=" + bu.Status)
	}
	for _, m := range d.Messages {
		b.WriteString(" [" + m.Level + " " + m.Source + ": " + m.Text + "]")
	}
	return b.String()
}

// buildNamed finds the build of the derivation called name in an evaluation.
func buildNamed(t *testing.T, d api.EvaluationDetail, name string) api.Build {
	t.Helper()
	for _, b := range d.Builds {
		if strings.HasSuffix(b.DrvPath, "-"+name+".drv") {
			return b
		}
	}
	t.Fatalf("no build of %s in %s", name, summary(d))
	return api.Build{}
}

// handshakeCode dials the server as a worker would and returns the Reject code (0 when the
// session ran).
func handshakeCode(t *testing.T, url, workerID string, tokens ...wire.PeerToken) uint16 {
	t.Helper()
	c, res, err := dialAsWorker(t, url, workerID, tokens...)
	if err == nil {
		c.Close(bg)
		if res.WorkerID == "" && len(res.Authorized) == 0 {
			t.Fatalf("session ran without a result")
		}
		return 0
	}
	var ended *handshake.EndedError
	if !errors.As(err, &ended) {
		t.Fatalf("handshake broke off without a Reject: %v", err)
	}
	return ended.End.Code
}

// TestGradientEndToEnd runs gradient-server and gradient-worker as real processes over a
// real git repository and real Nix, through the whole job loop in order: a build, timeouts,
// handshake refusals, and kill -9 of either side (gradient-server §6).
func TestGradientEndToEnd(t *testing.T) {
	f := newFleet(t)
	worker := f.startWorker()

	t.Run("a flake is fetched, evaluated and built, outputs cached with verified hashes", func(t *testing.T) {
		d := f.completed(t, f.evaluate(t), 5*time.Minute)
		if len(d.Builds) != 3 {
			t.Fatalf("evaluation: %s", summary(d))
		}
		for _, name := range []string{"a", "b", "c"} {
			b := buildNamed(t, d, name)
			if b.Status != "Completed" {
				t.Fatalf("build %s: %s", name, b.Status)
			}
			verifyCachedOutputs(t, f, b.DrvPath)
		}
		chunk, err := f.api.BuildLog(bg, buildNamed(t, d, "c").ID, apiclient.LogQuery{})
		if err != nil || !strings.Contains(string(chunk.Data), "building c") {
			t.Fatalf("log of c: %q, %v", chunk.Data, err)
		}
	})

	t.Run("timeout and maxSilent end FailedTimeout, and a dependent DependencyFailed", func(t *testing.T) {
		sys := f.flake.System
		d := f.settled(t, f.evaluate(t, "tests."+sys+".needy", "tests."+sys+".silent"), 5*time.Minute)
		want := map[string]string{"slow": "FailedTimeout", "needy": "DependencyFailed", "silent": "FailedTimeout"}
		for name, status := range want {
			if got := buildNamed(t, d, name).Status; got != status {
				t.Errorf("%s: %s, want %s (%s)", name, got, status, summary(d))
			}
		}
		if d.Evaluation.Status != "Failed" {
			t.Errorf("evaluation %s, want Failed", d.Evaluation.Status)
		}
	})

	t.Run("refusals: 496 duplicate, 403 unknown, 401 wrong token, 495 no cache", func(t *testing.T) {
		url := f.srv.protoURL()
		good := wire.PeerToken{PeerID: f.project.ID, Token: f.token}
		if code := handshakeCode(t, url, f.workerID, good); code != session.CodeAlreadyConnected {
			t.Errorf("second session for a live worker: %d, want 496", code)
		}
		if code := handshakeCode(t, url, newWorkerID(t), good); code != session.CodeForbidden {
			t.Errorf("unknown worker: %d, want 403", code)
		}
		other := newWorkerID(t)
		reg, err := f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: f.project.ID}, api.RegisterWorkerRequest{WorkerID: other})
		if err != nil {
			t.Fatal(err)
		}
		if code := handshakeCode(t, url, other, wire.PeerToken{PeerID: f.project.ID, Token: reg.Token + "x"}); code != session.CodeUnauthorized {
			t.Errorf("wrong token: %d, want 401", code)
		}
		lonely, err := f.api.CreateProject(bg, api.CreateProjectRequest{Name: "no-cache", RepoURL: f.flake.URL, Branch: "main", Wildcards: []string{"packages"}})
		if err != nil {
			t.Fatal(err)
		}
		third := newWorkerID(t)
		reg, err = f.api.RegisterWorker(bg, apiclient.Peer{Kind: apiclient.ProjectPeer, Ref: lonely.ID}, api.RegisterWorkerRequest{WorkerID: third})
		if err != nil {
			t.Fatal(err)
		}
		if code := handshakeCode(t, url, third, wire.PeerToken{PeerID: lonely.ID, Token: reg.Token}); code != session.CodeNoCache {
			t.Errorf("project without a cache: %d, want 495", code)
		}
	})

	t.Run("kill -9 of the server mid-build: the build is re-queued and completes, nothing queued is lost", func(t *testing.T) {
		sys := f.flake.System
		gated := f.evaluate(t, "tests."+sys+".gated")
		queued := f.evaluate(t, "tests."+sys+".fod")
		b := f.waitBuilding(t, gated, "gated")
		f.srv.kill()
		f.srv = startServer(f.t, f.srv.addr, f.srv.dataDir) // owned by the whole test, not this step
		f.srv.waitLog(`recovered interrupted work.* builds=1`, 10*time.Second)
		f.waitBuildStatus(t, b.ID, "Building", 2*time.Minute) // the re-queued build runs again
		f.flake.OpenGate(t)
		f.completed(t, gated, 3*time.Minute)  // the gated evaluation, after the restart
		f.completed(t, queued, 3*time.Minute) // the evaluation queued before the kill
	})

	t.Run("kill -9 of the worker mid-build: the server re-queues, a restarted worker finishes it", func(t *testing.T) {
		f.flake.CloseGate(t)
		gated := f.evaluate(t, "tests."+f.flake.System+".gated2")
		b := f.waitBuilding(t, gated, "gated2")
		worker.kill()
		f.waitBuildStatus(t, b.ID, "Queued", time.Minute) // the server re-queues the lost worker's build
		worker = f.startWorker()
		f.waitBuildStatus(t, b.ID, "Building", 2*time.Minute) // the restarted worker takes it
		f.flake.OpenGate(t)
		f.completed(t, gated, 3*time.Minute) // after the worker restart
	})
	worker.stop()
}

// waitBuilding waits until the evaluation's build of name runs and its builder printed
// "waiting" (so a kill lands mid-build).
func (f *fleet) waitBuilding(t *testing.T, evalID, name string) api.Build {
	t.Helper()
	var b api.Build
	waitFor(t, name+" to be building", 3*time.Minute, func() (bool, string) {
		d, err := f.api.Evaluation(bg, evalID)
		if err != nil {
			return false, err.Error()
		}
		for _, bu := range d.Builds {
			if strings.HasSuffix(bu.DrvPath, "-"+name+".drv") {
				b = bu
			}
		}
		if why := cannotComplete(d); why != "" {
			t.Fatalf("%s will never be building: %s: %s", name, why, summary(d))
		}
		if b.Status != "Building" {
			return false, summary(d)
		}
		chunk, err := f.api.BuildLog(bg, b.ID, apiclient.LogQuery{})
		return err == nil && strings.Contains(string(chunk.Data), "waiting"), "log: " + string(chunk.Data)
	})
	return b
}
