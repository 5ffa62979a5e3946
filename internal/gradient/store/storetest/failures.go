package storetest

import (
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/go-cmp/cmp"
)

var failureTests = []test{
	{"FailureKindTable/6.4", func(t *testing.T, e *env) {
		cases := []struct {
			kind          store.FailureKind
			status        store.BuildStatus // of the failed build
			dependent     store.BuildStatus // of a build needing it
			attemptsUsed  int
			attemptResult store.AttemptOutcome
		}{
			{store.FailTransient, store.BuildFailedTransient, store.BuildCreated, 1, store.AttemptFailed},
			{store.FailPermanent, store.BuildFailedPermanent, store.BuildDependencyFailed, 0, store.AttemptFailed},
			{store.FailTimeout, store.BuildFailedTimeout, store.BuildDependencyFailed, 0, store.AttemptFailed},
			{store.FailSubstituteUnavailable, store.BuildQueued, store.BuildCreated, 0, store.AttemptFailed},
			{store.FailCorruptEvalCache, store.BuildFailedTransient, store.BuildCreated, 1, store.AttemptFailed},
			{store.FailAborted, store.BuildAborted, store.BuildCreated, 0, store.AttemptAborted},
			{store.FailCanceled, store.BuildQueued, store.BuildCreated, 0, store.AttemptAborted},
		}
		for _, c := range cases {
			name := c.kind.String()
			ev := e.evaluateDone(drv(name), drv(name+"-user", name))
			b := e.build(ev.ID, name)
			a := e.claim(b.ID, workerA)
			must(e.s.FailBuild(e.ctx, a.ID, store.BuildFailure{Kind: c.kind, Reason: "boom"}))
			got := must(e.s.GetBuild(e.ctx, b.ID))
			if got.Status != c.status || got.Attempt != c.attemptsUsed {
				t.Errorf("%s: status %s attempt %d, want %s %d", name, got.Status, got.Attempt, c.status, c.attemptsUsed)
			}
			if dep := e.build(ev.ID, name+"-user").Status; dep != c.dependent {
				t.Errorf("%s: dependent %s, want %s", name, dep, c.dependent)
			}
			atts := must(e.s.BuildAttempts(e.ctx, b.ID))
			if len(atts) != 1 || atts[0].Outcome != c.attemptResult || atts[0].FinishedAt.IsZero() ||
				atts[0].FailureReason != name+": boom" || atts[0].AssignmentID != a.ID {
				t.Errorf("%s: attempts %+v", name, atts)
			}
		}
	}},
	{"TransientRetriesWithDoublingBackoffThenPermanent/6.4", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b", "a"))
		id := e.build(ev.ID, "a").ID
		for i, backoff := range []time.Duration{30 * time.Second, 60 * time.Second} {
			fx := must(e.s.FailBuild(e.ctx, e.claim(id, workerA).ID, store.BuildFailure{Kind: store.FailTransient}))
			want := []store.BuildChange{{BuildID: id, Status: store.BuildFailedTransient, NotBefore: e.clock.Now().Add(backoff)}}
			if diff := cmp.Diff(want, fx.Builds); diff != "" {
				t.Errorf("failure %d (-want +got):\n%s", i+1, diff)
			}
			if got := must(e.s.GetBuild(e.ctx, id)); !got.NotBefore.Equal(want[0].NotBefore) {
				t.Errorf("failure %d: stored not-before %v", i+1, got.NotBefore)
			}
			e.clock.Advance(backoff)
		}
		fx := must(e.s.FailBuild(e.ctx, e.claim(id, workerA).ID, store.BuildFailure{Kind: store.FailTransient}))
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"a": store.BuildFailedPermanent, "b": store.BuildDependencyFailed})
		if len(fx.Settled) != 1 || fx.Settled[0].Status != store.EvalFailed {
			t.Errorf("settled %+v", fx.Settled)
		}
		if n := len(must(e.s.BuildAttempts(e.ctx, id))); n != 3 {
			t.Errorf("%d attempts recorded, want 3", n)
		}
	}},
	{"PermanentFailureCascadesAcrossEvaluations/6.4", func(t *testing.T, e *env) {
		ev1 := e.evaluateDone(drv("a"), drv("b", "a"), drv("c", "b"))
		ev2 := e.evaluateDone(drv("d", "b"), drv("x"))
		fx := must(e.s.FailBuild(e.ctx, e.claim(e.build(ev1.ID, "a").ID, workerA).ID, store.BuildFailure{Kind: store.FailPermanent}))
		e.wantBuildStatus(ev1.ID, map[string]store.BuildStatus{"a": store.BuildFailedPermanent,
			"b": store.BuildDependencyFailed, "c": store.BuildDependencyFailed})
		e.wantBuildStatus(ev2.ID, map[string]store.BuildStatus{"d": store.BuildDependencyFailed, "x": store.BuildQueued})
		var changed []string
		for _, b := range fx.Builds {
			changed = append(changed, b.BuildID)
		}
		want := sorted(e.build(ev1.ID, "a").ID, e.build(ev1.ID, "b").ID, e.build(ev1.ID, "c").ID, e.build(ev2.ID, "d").ID)
		if diff := cmp.Diff(want, sorted(changed...)); diff != "" {
			t.Errorf("changed builds (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]store.SettledEvaluation{{EvaluationID: ev1.ID, Status: store.EvalFailed}}, fx.Settled); diff != "" {
			t.Errorf("settled (-want +got):\n%s", diff)
		}
		e.complete(e.build(ev2.ID, "x").ID)
		e.wantEvalStatus(ev2.ID, store.EvalFailed)
	}},
	{"CanceledDoesNotUseAnAttempt/6.4", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"))
		id := e.build(ev.ID, "a").ID
		for range 5 {
			fx := must(e.s.FailBuild(e.ctx, e.claim(id, workerA).ID, store.BuildFailure{Kind: store.FailCanceled}))
			if !cmp.Equal(jobIDs(fx.Startable), []string{id}) {
				t.Fatalf("canceled build not startable again: %+v", fx)
			}
		}
		if got := must(e.s.GetBuild(e.ctx, id)); got.Attempt != 0 || got.Status != store.BuildQueued {
			t.Errorf("after 5 cancels: %+v", got)
		}
	}},
	{"InputsUnavailableRebuildsTheProducer/6.4", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b", "a"))
		a, b := e.build(ev.ID, "a").ID, e.build(ev.ID, "b").ID
		e.complete(a)
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("a"), []string{e.cache.ID}))
		fx := must(e.s.FailBuild(e.ctx, e.claim(b, workerA).ID, store.BuildFailure{Kind: store.FailInputsUnavailable,
			MissingPaths: []string{storePath("a")}}))
		hash, _ := store.StoreHash(storePath("a"))
		if !cmp.Equal(fx.Demoted, []string{hash}) || !cmp.Equal(jobIDs(fx.Startable), []string{a}) {
			t.Errorf("effects %+v, want a's row demoted and a queued", fx)
		}
		if got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, []string{storePath("a")})); len(got) != 0 {
			t.Errorf("demoted path still cached: %v", got)
		}
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"a": store.BuildQueued, "b": store.BuildCreated})
		if got := jobIDs(e.complete(a).Startable); !cmp.Equal(got, []string{b}) {
			t.Errorf("rebuilt producer: startable %v", got)
		}
		for range 2 {
			must(e.s.FailBuild(e.ctx, e.claim(b, workerA).ID, store.BuildFailure{Kind: store.FailInputsUnavailable,
				MissingPaths: []string{storePath("not-produced-here")}}))
		}
		if st := e.buildStatus(b); st != store.BuildFailedPermanent {
			t.Errorf("after 3 loops: %s, want FailedPermanent", st)
		}
	}},
}
