package storetest

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

var graphTests = []test{
	{"StartableBuildsQueueAtOnce/6.2", func(t *testing.T, e *env) {
		ev, _, fx := e.evaluate(drv("a"), drv("b"), entry(drv("c", "a", "b")))
		a, b, c := e.build(ev.ID, "a"), e.build(ev.ID, "b"), e.build(ev.ID, "c")
		if diff := cmp.Diff(sorted(a.ID, b.ID), jobIDs(fx.Startable)); diff != "" {
			t.Errorf("startable (-want +got):\n%s", diff)
		}
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"a": store.BuildQueued, "b": store.BuildQueued, "c": store.BuildCreated})
		if !cmp.Equal(c.EntryPoints, []string{"packages.x86_64-linux.c"}) || len(a.EntryPoints) != 0 {
			t.Errorf("entry points: c %v, a %v", c.EntryPoints, a.EntryPoints)
		}
		fx = e.complete(a.ID)
		if len(fx.Startable) != 0 {
			t.Errorf("c startable with b unbuilt: %v", fx.Startable)
		}
		fx = e.complete(b.ID)
		if diff := cmp.Diff([]string{c.ID}, jobIDs(fx.Startable)); diff != "" {
			t.Errorf("completing the last dependency (-want +got startable):\n%s", diff)
		}
	}},
	{"ForwardReferencedDependencies/6.2", func(t *testing.T, e *env) {
		ev, job := e.evalJob()
		fx := must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{drv("c", "a", "b")}}))
		if len(fx.Startable) != 0 {
			t.Fatalf("c startable before its dependencies are described: %v", fx.Startable)
		}
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"c": store.BuildCreated})
		fx = must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{drv("a"), drv("b", "a")}}))
		a, b, c := e.build(ev.ID, "a"), e.build(ev.ID, "b"), e.build(ev.ID, "c")
		if diff := cmp.Diff([]string{a.ID}, jobIDs(fx.Startable)); diff != "" {
			t.Errorf("second batch startable (-want +got):\n%s", diff)
		}
		if got := jobIDs(e.complete(a.ID).Startable); !cmp.Equal(got, []string{b.ID}) {
			t.Errorf("after a: startable %v, want only b (c also needs b)", got)
		}
		if got := jobIDs(e.complete(b.ID).Startable); !cmp.Equal(got, []string{c.ID}) {
			t.Errorf("after b: startable %v, want c", got)
		}
	}},
	{"BuildsAreSharedAcrossEvaluations/9", func(t *testing.T, e *env) {
		ev1, _, _ := e.evaluate(drv("a"))
		a := e.build(ev1.ID, "a")
		e.complete(a.ID)
		ev2, _, fx := e.evaluate(drv("a"), drv("c", "a"))
		if got := e.build(ev2.ID, "a").ID; got != a.ID {
			t.Errorf("second evaluation got build %s for a, want the shared %s", got, a.ID)
		}
		c := e.build(ev2.ID, "c")
		if !cmp.Equal(jobIDs(fx.Startable), []string{c.ID}) {
			t.Errorf("c needs only the completed a: startable %v", fx.Startable)
		}
	}},
	{"KnownSubtreesJoinTheEvaluation/6.2", func(t *testing.T, e *env) {
		ev1 := e.evaluateDone(drv("a"), drv("b", "a"))
		ev2, _, _ := e.evaluate(drv("c", "b")) // b and a are known: not re-sent
		got := map[string]bool{}
		for _, b := range must(e.s.EvaluationBuilds(e.ctx, ev2.ID)) {
			got[b.DrvPath] = true
		}
		if !got[drvPath("a")] || !got[drvPath("b")] || !got[drvPath("c")] {
			t.Errorf("evaluation 2 builds %v, want a, b and c", got)
		}
		e.wantEvalStatus(ev1.ID, store.EvalBuilding)
	}},
	{"ResentBatchIsIdempotent/6.2", func(t *testing.T, e *env) {
		ev, job, _ := e.evaluate(drv("a"), drv("b", "a"))
		fx := must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{drv("a"), drv("b", "a")}}))
		if len(fx.Startable) != 0 || len(must(e.s.EvaluationBuilds(e.ctx, ev.ID))) != 2 {
			t.Errorf("resent batch: startable %v, builds %d", fx.Startable, len(must(e.s.EvaluationBuilds(e.ctx, ev.ID))))
		}
	}},
	{"LateBuildNeedingFailedBuildFailsAtOnce/6.4", func(t *testing.T, e *env) {
		ev1, _, _ := e.evaluate(drv("a"))
		a := e.claim(e.build(ev1.ID, "a").ID, workerA)
		must(e.s.FailBuild(e.ctx, a.ID, store.BuildFailure{Kind: store.FailPermanent}))
		ev2, _, fx := e.evaluate(drv("c", "a"), drv("d", "c"), drv("x"))
		e.wantBuildStatus(ev2.ID, map[string]store.BuildStatus{"c": store.BuildDependencyFailed,
			"d": store.BuildDependencyFailed, "x": store.BuildQueued})
		if !cmp.Equal(jobIDs(fx.Startable), []string{e.build(ev2.ID, "x").ID}) {
			t.Errorf("startable %v", fx.Startable)
		}
	}},
	{"AbortedBuildRevivesForANewEvaluation", func(t *testing.T, e *env) {
		ev1, _, _ := e.evaluate(drv("a"))
		a := e.build(ev1.ID, "a")
		must(e.s.AbortEvaluation(e.ctx, ev1.ID, "superseded"))
		if st := e.buildStatus(a.ID); st != store.BuildAborted {
			t.Fatalf("a after abort: %s", st)
		}
		_, _, fx := e.evaluate(drv("a"))
		if !cmp.Equal(jobIDs(fx.Startable), []string{a.ID}) || e.buildStatus(a.ID) != store.BuildQueued {
			t.Errorf("a not revived: startable %v status %s", fx.Startable, e.buildStatus(a.ID))
		}
	}},
	{"KnownDerivationsHaveCompleteClosures/6.2", func(t *testing.T, e *env) {
		_, job, _ := e.evaluate(drv("a"), drv("b", "a"), drv("c", "missing"))
		got := must(e.s.KnownDerivations(e.ctx, []string{drvPath("a"), drvPath("b"), drvPath("c"), drvPath("missing"), drvPath("never")}))
		if diff := cmp.Diff(sorted(drvPath("a"), drvPath("b")), got); diff != "" {
			t.Errorf("known (-want +got):\n%s", diff)
		}
		must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{drv("missing")}}))
		if got := must(e.s.KnownDerivations(e.ctx, []string{drvPath("c")})); len(got) != 1 {
			t.Errorf("c after its dependency was described: known %v", got)
		}
	}},
	{"InvalidBatchRefused", func(t *testing.T, e *env) {
		_, job := e.evalJob()
		bad := drv("a")
		bad.System = ""
		_, err := e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{bad}})
		wantErr(t, err, store.ErrInvalid)
		_, err = e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: "0190ffff-0000-7000-8000-000000000000"})
		wantErr(t, err, store.ErrStaleAssignment)
	}},
	{"ClaimCarriesTheBuildSpec/6.3", func(t *testing.T, e *env) {
		own, silent := uint64(2), uint64(0)
		d := drv("a")
		d.TimeoutSecs, d.MaxSilentSecs = &own, &silent
		d.RequiredFeatures, d.IsFixedOutput = []string{"kvm"}, true
		d.Outputs = append(d.Outputs, store.Output{Name: "dev", Path: storePath("a-dev")})
		ev, _, _ := e.evaluate(d, drv("b"))
		a := e.claim(e.build(ev.ID, "a").ID, workerA)
		want := &store.BuildAssignment{BuildID: a.Job.ID, DrvPath: drvPath("a"), System: "x86_64-linux",
			RequiredFeatures: []string{"kvm"}, IsFixedOutput: true, TimeoutSecs: &own, MaxSilentSecs: &silent,
			Outputs: []store.Output{{Name: "dev", Path: storePath("a-dev")}, {Name: "out", Path: storePath("a")}}}
		if diff := cmp.Diff(want, a.Build); diff != "" {
			t.Errorf("build assignment (-want +got):\n%s", diff)
		}
		b := e.claim(e.build(ev.ID, "b").ID, workerA)
		if b.Build.TimeoutSecs != nil || b.Build.MaxSilentSecs != nil {
			t.Errorf("a derivation without limits claims %v/%v, want none (server defaults)", b.Build.TimeoutSecs, b.Build.MaxSilentSecs)
		}
		if a.Job.String() != "build:"+a.Job.ID || b.ID == a.ID {
			t.Errorf("job id %s, assignment ids %s %s", a.Job, a.ID, b.ID)
		}
	}},
}
