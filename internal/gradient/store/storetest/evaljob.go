package storetest

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

var evalJobTests = []test{
	{"PhasesThenBuildingThenCompleted/6.2", func(t *testing.T, e *env) {
		ev, job := e.evalJob()
		for _, phase := range []store.EvaluationStatus{store.EvalFetching, store.EvalEvaluatingFlake, store.EvalEvaluatingDerivation} {
			check(t, e.s.SetEvaluationPhase(e.ctx, job.ID, phase))
			e.wantEvalStatus(ev.ID, phase)
		}
		wantErr(t, e.s.SetEvaluationPhase(e.ctx, job.ID, store.EvalCompleted), store.ErrInvalid)
		check(t, e.s.RecordFlakeSource(e.ctx, job.ID, storePath("source")))
		must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{drv("a")}}))
		fx := must(e.s.CompleteEvaluationJob(e.ctx, job.ID))
		if len(fx.Settled) != 0 {
			t.Errorf("settled with a build queued: %+v", fx.Settled)
		}
		got := must(e.s.GetEvaluation(e.ctx, ev.ID))
		if got.Status != store.EvalBuilding || got.FlakeSource != storePath("source") || got.EvalDispatches != 1 {
			t.Errorf("after the flake job: %+v", got)
		}
		fx = e.complete(e.build(ev.ID, "a").ID)
		want := []store.SettledEvaluation{{EvaluationID: ev.ID, Status: store.EvalCompleted}}
		if diff := cmp.Diff(want, fx.Settled); diff != "" {
			t.Errorf("settled (-want +got):\n%s", diff)
		}
		if evs := must(e.s.ListEvaluations(e.ctx, e.project.ID, 10)); len(evs) != 1 || evs[0].Status != store.EvalCompleted {
			t.Errorf("ListEvaluations %+v", evs)
		}
	}},
	{"NothingToBuildCompletesAtOnce/6.4", func(t *testing.T, e *env) {
		ev, job := e.evalJob()
		fx := must(e.s.CompleteEvaluationJob(e.ctx, job.ID))
		if len(fx.Settled) != 1 || fx.Settled[0].Status != store.EvalCompleted {
			t.Errorf("settled %+v", fx.Settled)
		}
		e.wantEvalStatus(ev.ID, store.EvalCompleted)
	}},
	{"ErrorMessagesFailTheEvaluation/6.4", func(t *testing.T, e *env) {
		ev, job := e.evalJob()
		must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: []store.Derivation{drv("a")},
			Warnings: []string{"no match for checks.*"}, Errors: []string{"attribute 'broken' failed"}}))
		check(t, e.s.AddEvaluationMessages(e.ctx, ev.ID, []store.Message{{Level: store.LevelNotice, Source: "fetch", Text: "ok"}}))
		must(e.s.CompleteEvaluationJob(e.ctx, job.ID))
		e.complete(e.build(ev.ID, "a").ID)
		e.wantEvalStatus(ev.ID, store.EvalFailed)
		var got []store.Message
		for _, m := range must(e.s.EvaluationMessages(e.ctx, ev.ID)) {
			got = append(got, store.Message{Level: m.Level, Source: m.Source, Text: m.Text})
		}
		want := []store.Message{{Level: store.LevelWarning, Source: "eval", Text: "no match for checks.*"},
			{Level: store.LevelError, Source: "eval", Text: "attribute 'broken' failed"},
			{Level: store.LevelNotice, Source: "fetch", Text: "ok"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("messages (-want +got):\n%s", diff)
		}
	}},
	{"FailedBuildFailsTheEvaluation/6.4", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b"))
		e.complete(e.build(ev.ID, "a").ID)
		fx := must(e.s.FailBuild(e.ctx, e.claim(e.build(ev.ID, "b").ID, workerA).ID, store.BuildFailure{Kind: store.FailTimeout}))
		want := []store.SettledEvaluation{{EvaluationID: ev.ID, Status: store.EvalFailed}}
		if diff := cmp.Diff(want, fx.Settled); diff != "" {
			t.Errorf("settled (-want +got):\n%s", diff)
		}
	}},
	{"TransientFlakeJobRetriesUpToThreeAttempts/6.4", func(t *testing.T, e *env) {
		ev, job := e.evalJob()
		for i := 1; i <= 3; i++ {
			fx := must(e.s.FailEvaluationJob(e.ctx, job.ID, store.BuildFailure{Kind: store.FailTransient, Reason: "network"}))
			if i < 3 {
				if !cmp.Equal(jobIDs(fx.Requeued), []string{ev.ID}) {
					t.Fatalf("attempt %d: requeued %v", i, fx.Requeued)
				}
				e.wantEvalStatus(ev.ID, store.EvalQueued)
				job = must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA))
				continue
			}
			if len(fx.Settled) != 1 || fx.Settled[0].Status != store.EvalFailed {
				t.Errorf("third transient failure: %+v", fx)
			}
		}
		if got := must(e.s.GetEvaluation(e.ctx, ev.ID)); got.Attempts != 3 || got.Status != store.EvalFailed {
			t.Errorf("evaluation %+v", got)
		}
	}},
	{"CanceledFlakeJobRequeuesWithoutAttempt/6.4", func(t *testing.T, e *env) {
		ev, job := e.evalJob()
		check(t, e.s.SetEvaluationPhase(e.ctx, job.ID, store.EvalEvaluatingFlake))
		must(e.s.FailEvaluationJob(e.ctx, job.ID, store.BuildFailure{Kind: store.FailCanceled}))
		if got := must(e.s.GetEvaluation(e.ctx, ev.ID)); got.Status != store.EvalQueued || got.Attempts != 0 {
			t.Errorf("after cancel: %+v", got)
		}
		fx := must(e.s.FailEvaluationJob(e.ctx, must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA)).ID,
			store.BuildFailure{Kind: store.FailPermanent, Reason: "no flake.nix"}))
		if len(fx.Settled) != 1 || fx.Settled[0].Status != store.EvalFailed {
			t.Errorf("permanent flake failure: %+v", fx)
		}
	}},
	{"AbortEvaluationClosesItsWork/6.5", func(t *testing.T, e *env) {
		ev, job, _ := e.evaluate(drv("a"), drv("b"), drv("shared"))
		running := e.claim(e.build(ev.ID, "a").ID, workerB)
		keeper := e.evaluateDone(drv("shared"))
		fx := must(e.s.AbortEvaluation(e.ctx, ev.ID, "superseded"))
		e.wantEvalStatus(ev.ID, store.EvalAborted)
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"a": store.BuildAborted, "b": store.BuildAborted,
			"shared": store.BuildQueued})
		var closed []string
		for _, c := range fx.Closed {
			closed = append(closed, c.AssignmentID)
		}
		if diff := cmp.Diff(sorted(job.ID, running.ID), sorted(closed...)); diff != "" {
			t.Errorf("closed assignments (-want +got):\n%s", diff)
		}
		_, err := e.s.CompleteBuild(e.ctx, running.ID, false)
		wantErr(t, err, store.ErrStaleAssignment)
		if fx := must(e.s.AbortEvaluation(e.ctx, ev.ID, "again")); len(fx.Closed)+len(fx.Builds) != 0 {
			t.Errorf("aborting twice changed %+v", fx)
		}
		e.wantEvalStatus(keeper.ID, store.EvalBuilding)
	}},
	{"AbortBuildNoCascadeEvaluationSettles/6.4", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b", "a"))
		fx := must(e.s.AbortBuild(e.ctx, e.build(ev.ID, "a").ID, "operator"))
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"a": store.BuildAborted, "b": store.BuildCreated})
		if len(fx.Settled) != 1 || fx.Settled[0].Status != store.EvalFailed {
			t.Errorf("settled %+v", fx.Settled)
		}
	}},
}
