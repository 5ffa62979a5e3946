package worker_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/nixexec/nixexectest"
	"github.com/buildfleet/buildfleet/internal/gradient/wire"
	"github.com/buildfleet/buildfleet/internal/gradient/worker"
)

func updatesOf(ss interface{ Messages() []wire.ClientMessage }, jobID string) []wire.JobUpdateKind {
	var out []wire.JobUpdateKind
	for _, m := range ss.Messages() {
		if u, ok := m.(*wire.JobUpdate); ok && u.JobID == jobID {
			out = append(out, u.Update)
		}
	}
	return out
}

// gradient-protocol §4.1 and gradient-server §6.1: what a worker sends once its session
// runs.
func TestSessionStartsWithCapabilitiesJobListAndJobRequests(t *testing.T) {
	f := newFixture(t, func(c *worker.Config) { c.MaxConcurrentBuilds = 2 })
	ss := f.start()
	caps, err := ss.Wait(f.ctx, func(m wire.ClientMessage) bool { _, ok := m.(*wire.WorkerCapabilities); return ok })
	if err != nil {
		t.Fatal(err)
	}
	wc := caps.(*wire.WorkerCapabilities)
	if wc.MaxConcurrentBuilds != 2 || len(wc.Architectures) == 0 || wc.Architectures[0] != f.flake.System || wc.CPUCount == 0 {
		t.Fatalf("capabilities %+v", wc)
	}
	if _, err := ss.Wait(f.ctx, func(m wire.ClientMessage) bool { _, ok := m.(*wire.WorkerMetrics); return ok }); err != nil {
		t.Fatal(err)
	}
	var list, flake, build int
	for _, m := range ss.Messages() {
		switch m := m.(type) {
		case *wire.RequestJobList:
			list++
		case *wire.RequestJob:
			if m.Kind == wire.JobKindFlake {
				flake++
			} else {
				build++
			}
		}
	}
	if list != 1 || flake < 1 || build < 2 {
		t.Fatalf("RequestJobList ×%d, RequestJob flake ×%d, build ×%d", list, flake, build)
	}
}

// gradient-server §6.2: a flake job on a real repository: fetch, evaluate packages.*,
// upload the source and the three .drv files (verified by the fake server), report them
// dependencies first.
func TestFlakeJobReportsTheDerivationsAndUploadsTheirDrvFiles(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.FailCacheQueries(2) // CacheError is retried, never read as "uncached"
	f.srv.Enqueue("eval:1", f.flakeJob("packages.*"))
	ss := f.start()
	end := f.waitEnd(ss, "eval:1")
	if _, ok := end.(*wire.JobCompleted); !ok {
		t.Fatalf("flake job ended with %+v", end)
	}
	f.noViolations(ss)
	var steps []string
	var found []wire.DiscoveredDerivation
	var source string
	for _, u := range updatesOf(ss, "eval:1") {
		steps = append(steps, strings.TrimPrefix(fmtType(u), "*wire.JobUpdate"))
		switch u := u.(type) {
		case *wire.JobUpdateFetchResult:
			source, _ = u.FlakeSource.Get()
		case *wire.JobUpdateEvalResult:
			found = append(found, u.Derivations...)
			if len(u.Errors) > 0 {
				t.Fatalf("evaluation errors %v", u.Errors)
			}
		}
	}
	if want := []string{"Fetching", "FetchResult", "EvaluatingFlake", "EvaluatingDerivations", "EvalResult"}; !slices.Equal(steps, want) {
		t.Fatalf("updates %v, want %v", steps, want)
	}
	drvs := f.evaluate("packages.*")
	if len(found) != 3 || found[2].DrvPath != drvs["c"] || !slices.Equal(found[2].Dependencies, sorted(drvs["a"], drvs["b"])) {
		t.Fatalf("derivations %+v, want a and b, then c depending on them", found)
	}
	if found[2].Attr != "packages."+f.flake.System+".c" || !found[2].PreferLocalBuild || found[2].Architecture != f.flake.System {
		t.Fatalf("c reported as %+v", found[2])
	}
	for _, p := range []string{source, drvs["a"], drvs["b"], drvs["c"]} {
		if _, ok := f.srv.Cache.Get(p); !ok {
			t.Errorf("%s was not uploaded (cache holds %v)", p, f.srv.Cache.Paths())
		}
	}
	if e, _ := f.srv.Cache.Get(drvs["c"]); e != nil && len(e.References) != 2 {
		t.Errorf("c.drv uploaded with references %v", e.References)
	}
	if done := end.(*wire.JobCompleted); len(done.Spans) == 0 {
		t.Errorf("JobCompleted without spans")
	}
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// gradient-server §6.2 step 7: a wildcard error and an attribute error reach the server as
// EvalMessages and in the last EvalResult; the job still completes.
func TestFlakeJobReportsEvaluationErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Enqueue("eval:2", f.flakeJob("bad.*", "nothing.here"))
	ss := f.start()
	if _, ok := f.waitEnd(ss, "eval:2").(*wire.JobCompleted); !ok {
		t.Fatal("the job did not complete")
	}
	var sources []string
	for _, m := range ss.Messages() {
		if em, ok := m.(*wire.EvalMessage); ok && em.Level == wire.EvalMessageLevelError {
			sources = append(sources, em.Source)
		}
	}
	slices.Sort(sources)
	if want := []string{"nix-eval:bad." + f.flake.System + ".broken", "nix-eval:nothing.here"}; !slices.Equal(sources, want) {
		t.Fatalf("EvalMessage sources %v, want %v", sources, want)
	}
	ups := updatesOf(ss, "eval:2")
	last, ok := ups[len(ups)-1].(*wire.JobUpdateEvalResult)
	if !ok || len(last.Errors) != 2 || len(last.Derivations) != 1 {
		t.Fatalf("last update %+v", ups[len(ups)-1])
	}
}

// gradient-server §6.2: two attributes selecting the same derivation (bad.SYSTEM.ok is
// packages.SYSTEM.a) report it once per attribute, and the job completes.
func TestFlakeJobReportsASharedDerivationPerAttribute(t *testing.T) {
	f := newFixture(t, nil)
	sys := f.flake.System
	f.srv.Enqueue("eval:3", f.flakeJob("packages."+sys+".a", "bad."+sys+".ok"))
	ss := f.start()
	if end := f.waitEnd(ss, "eval:3"); fmtType(end) != "*wire.JobCompleted" {
		t.Fatalf("flake job ended with %+v", end)
	}
	var attrs []string
	drvs := f.evaluate("packages.*")
	for _, u := range updatesOf(ss, "eval:3") {
		if r, ok := u.(*wire.JobUpdateEvalResult); ok {
			for _, d := range r.Derivations {
				if d.DrvPath != drvs["a"] {
					t.Errorf("reported %s, want only a's %s", d.DrvPath, drvs["a"])
				}
				attrs = append(attrs, d.Attr)
			}
		}
	}
	slices.Sort(attrs)
	if want := []string{"bad." + sys + ".ok", "packages." + sys + ".a"}; !slices.Equal(attrs, want) {
		t.Fatalf("attributes %v, want %v", attrs, want)
	}
}

// gradient-server §6.3: a build job whose inputs are not in the local store pulls them from
// the cache (NarRequest, NarStreamHeader + NarPush), imports them, builds, and uploads its
// output; with an input missing from the cache it fails as InputsUnavailable.
func TestBuildJobPrefetchesItsInputsFromTheCache(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Enqueue("eval:1", f.flakeJob("packages.*"))
	ss := f.start()
	if _, ok := f.waitEnd(ss, "eval:1").(*wire.JobCompleted); !ok {
		t.Fatal("evaluation failed")
	}
	drvs := f.evaluate("packages.*")
	outA, outB := f.outputOf(drvs["a"]), f.outputOf(drvs["b"])
	for _, name := range []string{"a", "b"} {
		ss.Assign("build:"+name, f.buildJob(drvs[name], 60, 0))
		if _, ok := f.waitEnd(ss, "build:"+name).(*wire.JobCompleted); !ok {
			t.Fatalf("build of %s failed", name)
		}
	}
	job := f.buildJob(drvs["c"], 60, 0)
	// The local store forgets everything c needs; the cache has it all.
	if err := f.nix.Delete(f.ctx, []string{drvs["c"], drvs["a"], drvs["b"], outA, outB}); err != nil {
		t.Fatal(err)
	}
	entryB, _ := f.srv.Cache.Get(outB)
	f.srv.Cache.Delete(outB)
	ss.Assign("build:c1", job)
	failedMsg, ok := f.waitEnd(ss, "build:c1").(*wire.JobFailed)
	if !ok || failedMsg.Kind != wire.BuildFailureKindInputsUnavailable || !slices.Equal(failedMsg.MissingPaths, []string{outB}) {
		t.Fatalf("without b's output in the cache: %+v", failedMsg)
	}
	f.srv.Cache.Put(entryB)
	ss.Assign("build:c", job)
	if end, ok := f.waitEnd(ss, "build:c").(*wire.JobCompleted); !ok {
		t.Fatalf("build of c: %+v", end)
	}
	f.noViolations(ss)
	outC := job.Builds[0].Outputs[0].Path
	if _, ok := f.srv.Cache.Get(outC); !ok {
		t.Fatalf("c's output was not uploaded")
	}
	if !strings.Contains(ss.Log("build:c"), "building c") {
		t.Fatalf("log %q", ss.Log("build:c"))
	}
	var pulled []string
	for _, m := range ss.Messages() {
		// c1 pulled the .drv closure before it found b's output missing; c the outputs.
		if r, ok := m.(*wire.NarRequest); ok && (r.JobID == "build:c" || r.JobID == "build:c1") {
			pulled = append(pulled, r.Paths...)
		}
	}
	slices.Sort(pulled)
	if want := sorted(drvs["a"], drvs["b"], drvs["c"], outA, outB); !slices.Equal(pulled, want) {
		t.Fatalf("pulled %v, want %v", pulled, want)
	}
	var out *wire.JobUpdateBuildOutput
	for _, u := range updatesOf(ss, "build:c") {
		if bo, ok := u.(*wire.JobUpdateBuildOutput); ok {
			out = bo
		}
	}
	if out == nil || out.Substituted || len(out.Outputs) != 1 || out.Outputs[0].StorePath != outC || out.Outputs[0].Name != "out" {
		t.Fatalf("BuildOutput %+v", out)
	}
}

func (f *fixture) outputOf(drv string) string {
	f.t.Helper()
	drvs, err := f.nix.ShowDerivations(f.ctx, []string{drv}, false)
	if err != nil {
		f.t.Fatal(err)
	}
	return drvs[drv].Outputs["out"]
}

// gradient-server §6.3 timeouts: the BuildSpec's limits end a build as Timeout (wall clock
// and silence), a failing builder is Permanent.
func TestBuildFailuresAreClassified(t *testing.T) {
	f := newFixture(t, func(c *worker.Config) { c.MaxConcurrentBuilds = 3 })
	ss := f.start()
	drvs := f.evaluate("tests.*")
	ss.Assign("build:slow", f.buildJob(drvs["slow"], 2, 0))
	ss.Assign("build:silent", f.buildJob(drvs["silent"], 0, 2))
	ss.Assign("build:fail", f.buildJob(drvs["fail"], 0, 0))
	for job, want := range map[string]wire.BuildFailureKind{"build:slow": wire.BuildFailureKindTimeout,
		"build:silent": wire.BuildFailureKindTimeout, "build:fail": wire.BuildFailureKindPermanent} {
		m, ok := f.waitEnd(ss, job).(*wire.JobFailed)
		if !ok || m.Kind != want {
			t.Errorf("%s: %+v, want %v", job, m, want)
			continue
		}
		if bt, ok := m.Metrics.Value.BuildTimeMs.Get(); !m.Metrics.Valid || !ok || bt == 0 {
			t.Errorf("%s: metrics %+v", job, m.Metrics)
		}
	}
	if !strings.Contains(ss.Log("build:fail"), "failing") {
		t.Errorf("the failing builder's log: %q", ss.Log("build:fail"))
	}
	f.noViolations(ss)
	waitFor(t, "no builder left", func() bool { return nixexectest.SleepersLeft(f.flake.SleepArg) == 0 })
}

// gradient-server §6.5: AbortJob kills the build at once and is answered JobFailed Aborted.
func TestAbortJobKillsTheBuild(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	f.startSleeper(ss)
	ss.Abort("build:sleeper", "newer evaluation")
	m, ok := f.waitEnd(ss, "build:sleeper").(*wire.JobFailed)
	if !ok || m.Kind != wire.BuildFailureKindAborted {
		t.Fatalf("after AbortJob: %+v", m)
	}
	waitFor(t, "the builder to be gone", func() bool { return nixexectest.SleepersLeft(f.flake.SleepArg) == 0 })
	f.noViolations(ss)
}

// gradient-server §6.1: a full worker declines with "at capacity (n/m)".
func TestAFullWorkerDeclines(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	drvs := f.evaluate("tests.*")
	ss.Assign("build:1", f.buildJob(drvs["sleeper"], 0, 0))
	ss.Assign("build:2", f.buildJob(drvs["fail"], 0, 0))
	m, err := ss.Wait(f.ctx, func(m wire.ClientMessage) bool {
		r, ok := m.(*wire.AssignJobResponse)
		return ok && r.JobID == "build:2"
	})
	if err != nil {
		t.Fatal(err)
	}
	r := m.(*wire.AssignJobResponse)
	if reason, _ := r.Reason.Get(); r.Accepted || reason != "at capacity (1/1)" {
		t.Fatalf("second job: %+v", r)
	}
	ss.Abort("build:1", "test over")
	f.waitEnd(ss, "build:1")
}

// gradient-server §6.5 and gradient-server §6.6: a lost connection aborts the running job
// (no report), and the worker comes back with a full handshake and a new RequestJobList.
func TestLostConnectionAbortsJobsAndReconnects(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	f.startSleeper(ss)
	ss.Drop()
	next := f.session()
	waitFor(t, "the builder to be gone", func() bool { return nixexectest.SleepersLeft(f.flake.SleepArg) == 0 })
	if _, err := next.Wait(f.ctx, func(m wire.ClientMessage) bool { _, ok := m.(*wire.RequestJobList); return ok }); err != nil {
		t.Fatal(err)
	}
	for _, m := range next.Messages() {
		if jf, ok := m.(*wire.JobFailed); ok {
			t.Fatalf("the new session got a report of the old one: %+v", jf)
		}
	}
}

// gradient-server §6.6: Draining from the server ends the session, never the worker, which
// reconnects.
func TestServerDrainingEndsTheSessionNotTheWorker(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	ss.Drain()
	<-ss.Done()
	next := f.session()
	if next.Result.WorkerID != f.cfg.WorkerID {
		t.Fatalf("reconnected as %q", next.Result.WorkerID)
	}
}

// gradient-server §6.6: stopping the worker sends Draining, reports the running job
// Canceled, and closes.
func TestStoppingTheWorkerCancelsItsJobs(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	f.startSleeper(ss)
	f.stop()
	if err := <-f.result; err != nil {
		t.Fatal(err)
	}
	f.result <- nil // for the cleanup
	<-ss.Done()
	var draining, canceled bool
	for _, m := range ss.Messages() {
		switch m := m.(type) {
		case *wire.ClientDraining:
			draining = true
		case *wire.JobFailed:
			canceled = m.JobID == "build:sleeper" && m.Kind == wire.BuildFailureKindCanceled && draining
		}
	}
	if !draining || !canceled {
		t.Fatalf("Draining sent: %v; JobFailed Canceled after it: %v", draining, canceled)
	}
	if n := nixexectest.SleepersLeft(f.flake.SleepArg); n != 0 {
		t.Fatalf("%d builders left after the stop", n)
	}
}

// gradient-protocol §4.3: a changed peers file makes the running session ask for a reauth.
func TestChangedPeersFileAsksForReauth(t *testing.T) {
	f := newFixture(t, nil)
	ss := f.start()
	if err := writeFile(f.cfg.PeersFile, peerID+":"+token+"\nproj-b:token-b\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Wait(f.ctx, func(m wire.ClientMessage) bool { _, ok := m.(*wire.ReauthRequest); return ok }); err != nil {
		t.Fatal(err)
	}
	// The fake server answers with a challenge and an AuthUpdate; the session goes on.
	if _, err := ss.Wait(f.ctx, func(m wire.ClientMessage) bool { _, ok := m.(*wire.AuthResponse); return ok }); err != nil {
		t.Fatal(err)
	}
}
