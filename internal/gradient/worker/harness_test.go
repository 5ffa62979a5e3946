package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec"
	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/worker"
	"github.com/buildfleet/buildfleet/internal/gradient/worker/workertest"
)

const peerID, token = "proj-a", "token-a"

// fixture is a fake server, a worker connected to it and a test flake.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	srv    *workertest.Server
	nix    *nixexec.Nix
	flake  nixexectest.Flake
	cfg    worker.Config
	stop   context.CancelFunc
	result chan error
}

func newFixture(t *testing.T, tune func(*worker.Config)) *fixture {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	// The pid keeps two test processes (t.TempDir names repeat across them) off each other's
	// roots: one's cleanup would remove the other's running job roots.
	roots := filepath.Join("/nix/var/nix/gcroots", fmt.Sprintf("gradient-wtest-%d-%s", os.Getpid(), filepath.Base(t.TempDir())))
	t.Cleanup(func() { os.RemoveAll(roots) })
	f := &fixture{t: t, ctx: ctx, srv: workertest.NewServer(t), flake: nixexectest.NewFlake(t),
		nix: nixexec.New(nixexec.Options{GCRootDir: roots, KillGrace: 2 * time.Second})}
	id := uuid.Must(uuid.NewV7()).String()
	f.srv.Register(id, peerID, token)
	peers := filepath.Join(t.TempDir(), "peers")
	if err := os.WriteFile(peers, []byte("# test\n"+peerID+":"+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.cfg = worker.Config{ServerURL: f.srv.URL, BaseDir: t.TempDir(), WorkerID: id, PeersFile: peers, Nix: f.nix,
		MetricsInterval: time.Second, PeersPollInterval: 100 * time.Millisecond, RetryDelay: 50 * time.Millisecond}
	if tune != nil {
		tune(&f.cfg)
	}
	return f
}

// start runs the worker until the test ends (or stopWorker).
func (f *fixture) start() *workertest.Session {
	w, err := worker.New(f.cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	f.stop, f.result = stop, make(chan error, 1)
	go func() { f.result <- w.Run(runCtx) }()
	f.t.Cleanup(func() { stop(); <-f.result })
	return f.session()
}

func (f *fixture) session() *workertest.Session {
	f.t.Helper()
	ss, err := f.srv.NextSession(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return ss
}

// evaluate evaluates attributes of the test flake locally.
func (f *fixture) evaluate(wildcard string) map[string]string {
	f.t.Helper()
	ev, err := f.nix.EvaluateWildcards(f.ctx, f.flake.Ref(), []string{wildcard})
	if err != nil || len(ev.Errors) > 0 {
		f.t.Fatalf("evaluating %s: %+v, %v", wildcard, ev.Errors, err)
	}
	out := map[string]string{}
	for _, e := range ev.EntryPoints {
		out[filepath.Ext(e.Attr)[1:]] = e.DrvPath
	}
	return out
}

// buildJob is the BuildJob the server would send for drv.
func (f *fixture) buildJob(drv string, timeout, maxSilent uint64) *wire.BuildJob {
	f.t.Helper()
	drvs, err := f.nix.ShowDerivations(f.ctx, []string{drv}, false)
	if err != nil {
		f.t.Fatal(err)
	}
	d := drvs[drv]
	spec := wire.BuildSpec{BuildID: filepath.Base(drv), DrvPath: drv}
	for _, name := range d.OutputNames() {
		spec.Outputs = append(spec.Outputs, wire.DerivationOutput{Name: name, Path: d.Outputs[name]})
	}
	if timeout > 0 {
		spec.TimeoutSecs = wire.Some(timeout)
	}
	if maxSilent > 0 {
		spec.MaxSilentSecs = wire.Some(maxSilent)
	}
	return &wire.BuildJob{Builds: []wire.BuildSpec{spec}, Requirement: wire.BuildRequirement{Architecture: d.System}}
}

func (f *fixture) flakeJob(wildcards ...string) *wire.FlakeJob {
	return &wire.FlakeJob{
		Steps:     []wire.FlakeStep{wire.FlakeStepFetchFlake, wire.FlakeStepEvaluateFlake, wire.FlakeStepEvaluateDerivations},
		Source:    &wire.FlakeSourceRepository{URL: f.flake.URL, Commit: f.flake.Commit},
		Wildcards: wildcards,
	}
}

func (f *fixture) waitEnd(ss *workertest.Session, jobID string) wire.ClientMessage {
	f.t.Helper()
	m, err := ss.WaitJobEnd(f.ctx, jobID)
	if err != nil {
		f.t.Fatalf("waiting for the end of %s: %v", jobID, err)
	}
	return m
}

func (f *fixture) noViolations(ss *workertest.Session) {
	f.t.Helper()
	if v := ss.Violations(); len(v) > 0 {
		f.t.Fatalf("protocol violations seen by the fake server: %v", v)
	}
}

// startSleeper assigns the "sleeper" build as build:sleeper and waits until it runs.
func (f *fixture) startSleeper(ss *workertest.Session) {
	f.t.Helper()
	drvs := f.evaluate("tests.*")
	ss.Assign("build:sleeper", f.buildJob(drvs["sleeper"], 0, 0))
	if _, err := ss.Wait(f.ctx, isLog("build:sleeper", "started")); err != nil {
		f.t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isLog(jobID, text string) func(wire.ClientMessage) bool {
	seen := ""
	return func(m wire.ClientMessage) bool {
		if l, ok := m.(*wire.LogChunk); ok && l.JobID == jobID {
			seen += string(l.Data)
		}
		return strings.Contains(seen, text)
	}
}
