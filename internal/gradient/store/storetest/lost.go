package storetest

import (
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

var lostTests = []test{
	{"LostWorkerRequeuesItsJobs/6.5", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b"))
		a := e.claim(e.build(ev.ID, "a").ID, workerA)
		must(e.s.StartBuildAttempt(e.ctx, a.ID))
		other := e.claim(e.build(ev.ID, "b").ID, workerB)
		pending, job := e.evalJob()
		check(t, e.s.SetEvaluationPhase(e.ctx, job.ID, store.EvalEvaluatingFlake))
		fx := must(e.s.AbandonWorker(e.ctx, workerA, "heartbeat timeout"))
		if diff := cmp.Diff(sorted(a.Job.ID, pending.ID), jobIDs(fx.Requeued)); diff != "" {
			t.Errorf("requeued (-want +got):\n%s", diff)
		}
		got := must(e.s.GetBuild(e.ctx, a.Job.ID))
		if got.Status != store.BuildQueued || got.LostWorkerStreak != 1 || got.Attempt != 0 {
			t.Errorf("lost build %+v", got)
		}
		atts := must(e.s.BuildAttempts(e.ctx, a.Job.ID))
		if len(atts) != 1 || atts[0].Outcome != store.AttemptAborted || !strings.HasPrefix(atts[0].FailureReason, "WorkerLost") {
			t.Errorf("lost attempt %+v", atts)
		}
		e.wantEvalStatus(pending.ID, store.EvalQueued)
		if st := e.buildStatus(other.Job.ID); st != store.BuildBuilding {
			t.Errorf("another worker's build became %s", st)
		}
		if open := must(e.s.OpenAssignments(e.ctx, "")); len(open) != 1 || open[0].AssignmentID != other.ID {
			t.Errorf("open assignments after the loss: %+v", open)
		}
	}},
	{"TenLostWorkersInARowFailPermanent/6.5", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b", "a"))
		id := e.build(ev.ID, "a").ID
		for range 9 {
			e.claim(id, workerA)
			must(e.s.AbandonWorker(e.ctx, workerA, "gone"))
		}
		// A report that is not a loss breaks the streak.
		must(e.s.FailBuild(e.ctx, e.claim(id, workerA).ID, store.BuildFailure{Kind: store.FailCanceled}))
		for range 9 {
			e.claim(id, workerA)
			must(e.s.AbandonWorker(e.ctx, workerA, "gone"))
		}
		if st := e.buildStatus(id); st != store.BuildQueued {
			t.Fatalf("after 9 losses in a row: %s", st)
		}
		e.claim(id, workerA)
		fx := must(e.s.AbandonWorker(e.ctx, workerA, "gone"))
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"a": store.BuildFailedPermanent, "b": store.BuildDependencyFailed})
		if len(fx.Settled) != 1 || fx.Settled[0].Status != store.EvalFailed {
			t.Errorf("settled %+v", fx.Settled)
		}
	}},
	{"EvaluationFailsAfterTenDispatches/6.5", func(t *testing.T, e *env) {
		ev := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "x"}))
		for i := 1; i <= 10; i++ {
			must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA))
			fx := must(e.s.AbandonWorker(e.ctx, workerA, "gone"))
			if i < 10 && e.evalStatus(ev.ID) != store.EvalQueued {
				t.Fatalf("dispatch %d: %s", i, e.evalStatus(ev.ID))
			}
			if i == 10 && (len(fx.Settled) != 1 || fx.Settled[0].Status != store.EvalFailed) {
				t.Errorf("tenth loss: %+v", fx)
			}
		}
	}},
	{"RecoveryRequeuesInterruptedWorkInOneStep/6.6", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("running"), drv("queued"), drv("done"), drv("waiting", "running"))
		running := e.claim(e.build(ev.ID, "running").ID, workerA)
		check(t, e.s.AppendBuildLog(e.ctx, running.ID, []byte("building...\n")))
		e.complete(e.build(ev.ID, "done").ID)
		evaluating, job := e.evalJob()
		check(t, e.s.SetEvaluationPhase(e.ctx, job.ID, store.EvalEvaluatingDerivation))
		fetching, job2 := e.evalJob()
		check(t, e.s.SetEvaluationPhase(e.ctx, job2.ID, store.EvalFetching))
		claimedOnly, _ := e.evalJob()
		queued := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "q"}))

		got := must(e.s.RecoverInterruptedWork(e.ctx))
		if diff := cmp.Diff(store.Recovery{Assignments: 4, Attempts: 1, Builds: 1, Evaluations: 2}, got); diff != "" {
			t.Errorf("recovery counts (-want +got):\n%s", diff)
		}
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"running": store.BuildQueued, "queued": store.BuildQueued,
			"done": store.BuildCompleted, "waiting": store.BuildCreated})
		for _, id := range []string{evaluating.ID, fetching.ID, claimedOnly.ID, queued.ID} {
			e.wantEvalStatus(id, store.EvalQueued)
		}
		e.wantEvalStatus(ev.ID, store.EvalBuilding)
		if open := must(e.s.OpenAssignments(e.ctx, "")); len(open) != 0 {
			t.Errorf("open assignments after recovery: %+v", open)
		}
		if atts := must(e.s.BuildAttempts(e.ctx, running.Job.ID)); len(atts) != 1 || atts[0].Outcome != store.AttemptAborted {
			t.Errorf("interrupted attempt %+v", atts)
		}
		if n := len(e.candidates(store.JobEval)); n != 4 {
			t.Errorf("%d evaluations can be claimed after recovery, want 4", n)
		}
		if n := len(e.candidates(store.JobBuild)); n != 2 {
			t.Errorf("%d builds can be claimed after recovery, want 2", n)
		}
		_, err := e.s.CompleteBuild(e.ctx, running.ID, false)
		wantErr(t, err, store.ErrStaleAssignment) // a report from before the restart
	}},
}
