package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

var dispatchTests = []test{
	{"CandidatesMatchProjectSystemAndFeatures/6.1", func(t *testing.T, e *env) {
		arm, builtin, kvm := drv("arm"), drv("fetch"), drv("vm")
		arm.System, builtin.System, kvm.RequiredFeatures = "aarch64-linux", "builtin", []string{"kvm"}
		ev, _, _ := e.evaluate(drv("x86"), arm, builtin, kvm)
		other := e.newProject("other")
		ev2 := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: other.ID, Commit: "1"}))
		job2 := must(e.s.Claim(e.ctx, store.EvalJob(ev2.ID), workerB))
		must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job2.ID, Derivations: []store.Derivation{drv("theirs")}}))
		id := func(name string) string { return e.build(ev.ID, name).ID }
		cases := []struct {
			name               string
			projects, systems  []string
			features, wantJobs []string
		}{
			{"x86 without features", []string{e.project.ID}, []string{"x86_64-linux"}, nil, []string{id("x86"), id("fetch")}},
			{"x86 with kvm", []string{e.project.ID}, []string{"x86_64-linux"}, []string{"kvm", "big-parallel"},
				[]string{id("x86"), id("fetch"), id("vm")}},
			{"arm", []string{e.project.ID}, []string{"aarch64-linux"}, nil, []string{id("arm"), id("fetch")}},
			{"no systems runs builtin only", []string{e.project.ID}, nil, nil, []string{id("fetch")}},
			{"other project only", []string{other.ID}, []string{"x86_64-linux"}, nil, []string{e.build(ev2.ID, "theirs").ID}},
			{"no authorized project", nil, []string{"x86_64-linux"}, nil, nil},
		}
		for _, c := range cases {
			got := must(e.s.Candidates(e.ctx, store.CandidateQuery{Kind: store.JobBuild, Projects: c.projects,
				Systems: c.systems, Features: c.features, Limit: 100}))
			var ids []string
			for i, cand := range got {
				ids = append(ids, cand.Job.ID)
				if i > 0 && got[i-1].Job.ID >= cand.Job.ID {
					t.Errorf("%s: candidates out of job-ID order", c.name)
				}
			}
			if diff := cmp.Diff(sorted(c.wantJobs...), sorted(ids...)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
	}},
	{"CandidatesPagePastFilteredBuilds/6.1", func(t *testing.T, e *env) {
		var ds []store.Derivation
		for i := range 300 {
			d := drv(fmt.Sprintf("p%03d", i))
			if i < 280 {
				d.RequiredFeatures = []string{"big"}
			}
			ds = append(ds, d)
		}
		_, job := e.evalJob()
		for start := 0; start < len(ds); start += 50 {
			must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: ds[start : start+50]}))
		}
		got := must(e.s.Candidates(e.ctx, store.CandidateQuery{Kind: store.JobBuild, Projects: []string{e.project.ID},
			Systems: []string{"x86_64-linux"}, Limit: 3}))
		if len(got) != 3 {
			t.Errorf("got %d candidates past 280 builds needing a missing feature, want 3", len(got))
		}
	}},
	{"EvalCandidatesExcludeOpenAssignments/6.1", func(t *testing.T, e *env) {
		ev := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "abc"}))
		if got := e.candidates(store.JobEval); !cmp.Equal(got, []string{ev.ID}) {
			t.Fatalf("eval candidates %v", got)
		}
		a := must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA))
		if a.Eval == nil || a.Eval.Commit != "abc" || !cmp.Equal(a.Eval.Wildcards, []string{"packages.*"}) {
			t.Errorf("eval assignment %+v", a.Eval)
		}
		if got := e.candidates(store.JobEval); len(got) != 0 {
			t.Errorf("claimed evaluation still a candidate: %v", got)
		}
		_, err := e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerB)
		wantErr(t, err, store.ErrLostRace)
		fx := must(e.s.DeclineAssignment(e.ctx, a.ID))
		if !cmp.Equal(jobIDs(fx.Requeued), []string{ev.ID}) || must(e.s.GetEvaluation(e.ctx, ev.ID)).EvalDispatches != 0 {
			t.Errorf("decline: requeued %v, dispatches %d", fx.Requeued, must(e.s.GetEvaluation(e.ctx, ev.ID)).EvalDispatches)
		}
		if got := e.candidates(store.JobEval); !cmp.Equal(got, []string{ev.ID}) {
			t.Errorf("declined evaluation is not a candidate again: %v", got)
		}
	}},
	{"ClaimedBuildIsBuildingAndNotACandidate/6.1", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"))
		b := e.build(ev.ID, "a")
		a := e.claim(b.ID, workerA)
		if e.buildStatus(b.ID) != store.BuildBuilding || len(e.candidates(store.JobBuild)) != 0 {
			t.Errorf("claimed build: status %s, candidates %v", e.buildStatus(b.ID), e.candidates(store.JobBuild))
		}
		_, err := e.s.Claim(e.ctx, store.BuildJob(b.ID), workerB)
		wantErr(t, err, store.ErrLostRace)
		open := must(e.s.OpenAssignments(e.ctx, workerA))
		if len(open) != 1 || open[0].AssignmentID != a.ID || open[0].Job != store.BuildJob(b.ID) {
			t.Errorf("open assignments %+v", open)
		}
	}},
	{"DeclineRequeuesWithoutAttempt/6.1", func(t *testing.T, e *env) {
		ev, _, _ := e.evaluate(drv("a"))
		b := e.build(ev.ID, "a")
		a := e.claim(b.ID, workerA)
		fx := must(e.s.DeclineAssignment(e.ctx, a.ID))
		got := must(e.s.GetBuild(e.ctx, b.ID))
		if got.Status != store.BuildQueued || got.Attempt != 0 || !cmp.Equal(jobIDs(fx.Requeued), []string{b.ID}) {
			t.Errorf("after decline: %+v, requeued %v", got, fx.Requeued)
		}
		_, err := e.s.CompleteBuild(e.ctx, a.ID, false)
		wantErr(t, err, store.ErrStaleAssignment)
	}},
	{"StaleAndMismatchedReportsAreRefused/6.1", func(t *testing.T, e *env) {
		ev, job, _ := e.evaluate(drv("a"))
		b := e.claim(e.build(ev.ID, "a").ID, workerA)
		wantErr(t, e.s.SetEvaluationPhase(e.ctx, b.ID, store.EvalFetching), store.ErrStaleAssignment)
		_, err := e.s.CompleteBuild(e.ctx, job.ID, false)
		wantErr(t, err, store.ErrStaleAssignment)
		must(e.s.CompleteBuild(e.ctx, b.ID, false))
		_, err = e.s.FailBuild(e.ctx, b.ID, store.BuildFailure{Kind: store.FailPermanent})
		wantErr(t, err, store.ErrStaleAssignment)
		wantErr(t, e.s.AppendBuildLog(e.ctx, b.ID, []byte("late")), store.ErrStaleAssignment)
		if st := e.buildStatus(b.Job.ID); st != store.BuildCompleted {
			t.Errorf("a stale failure changed the build to %s", st)
		}
	}},
	{"TwoClaimersOneWinner/6.1", func(t *testing.T, e *env) {
		var ds []store.Derivation
		for i := range 10 {
			ds = append(ds, drv(fmt.Sprintf("race%d", i)))
		}
		ev, _, _ := e.evaluate(ds...)
		for i := range 10 {
			id := e.build(ev.ID, fmt.Sprintf("race%d", i)).ID
			wins := claimConcurrently(t, e, store.BuildJob(id), 2)
			if wins != 1 {
				t.Errorf("build %d: %d claimers won, want exactly 1", i, wins)
			}
		}
		evs := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "x"}))
		if wins := claimConcurrently(t, e, store.EvalJob(evs.ID), 4); wins != 1 {
			t.Errorf("evaluation: %d claimers won, want exactly 1", wins)
		}
	}},
	{"ManyWorkersClaimEachJobOnce/6.1", func(t *testing.T, e *env) {
		var ds []store.Derivation
		for i := range 40 {
			ds = append(ds, drv(fmt.Sprintf("job%02d", i)))
		}
		e.evaluate(ds...)
		claimed := map[string]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, id := range claimUntilEmpty(t, e, fmt.Sprintf("worker-%d", w)) {
					mu.Lock()
					claimed[id]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(claimed) != 40 {
			t.Errorf("%d of 40 builds claimed", len(claimed))
		}
		for id, n := range claimed {
			if n != 1 {
				t.Errorf("build %s claimed %d times", id, n)
			}
		}
	}},
	{"TransientBackoffHoldsTheBuildBack/6.4", func(t *testing.T, e *env) {
		ev, _, _ := e.evaluate(drv("a"))
		b := e.build(ev.ID, "a")
		must(e.s.FailBuild(e.ctx, e.claim(b.ID, workerA).ID, store.BuildFailure{Kind: store.FailTransient}))
		if got := e.candidates(store.JobBuild); len(got) != 0 {
			t.Errorf("candidate during backoff: %v", got)
		}
		_, err := e.s.Claim(e.ctx, store.BuildJob(b.ID), workerA)
		wantErr(t, err, store.ErrLostRace)
		e.clock.Advance(30 * time.Second)
		if got := e.candidates(store.JobBuild); !cmp.Equal(got, []string{b.ID}) {
			t.Errorf("after the backoff: candidates %v", got)
		}
		e.claim(b.ID, workerA)
	}},
}

// claimUntilEmpty is one worker's RequestJob loop: candidates, then claims in order (a lost
// race tries the next), until nothing is left; it returns the builds it claimed.
func claimUntilEmpty(t *testing.T, e *env, worker string) []string {
	var mine []string
	for {
		cs, err := e.s.Candidates(e.ctx, store.CandidateQuery{Kind: store.JobBuild, Projects: []string{e.project.ID},
			Systems: []string{"x86_64-linux"}, Limit: 3})
		if err != nil || len(cs) == 0 {
			if err != nil {
				t.Error(err)
			}
			return mine
		}
		for _, c := range cs {
			_, err := e.s.Claim(e.ctx, c.Job, worker)
			if err == nil {
				mine = append(mine, c.Job.ID)
				break
			}
			if !errors.Is(err, store.ErrLostRace) {
				t.Error(err)
				return mine
			}
		}
	}
}

// claimConcurrently has n goroutines claim one job at once and counts the winners; every
// loser must get ErrLostRace.
func claimConcurrently(t *testing.T, e *env, job store.JobRef, n int) int {
	var wins int
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := e.s.Claim(e.ctx, job, fmt.Sprintf("racer-%d", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrLostRace):
				t.Errorf("claimer %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	return wins
}
