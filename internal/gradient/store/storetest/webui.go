package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// webUITests cover what the web UI adds (gradient-server §17).
var webUITests = []test{
	{"RetryRequeuesAFailedBuildAndRevivesWhatItDoomed/17", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b", "a"), drv("c", "b"), drv("z"), drv("y", "z", "b"))
		must(e.s.FailBuild(e.ctx, e.claim(e.build(ev.ID, "z").ID, workerA).ID, store.BuildFailure{Kind: store.FailPermanent}))
		a := e.build(ev.ID, "a").ID
		must(e.s.FailBuild(e.ctx, e.claim(a, workerA).ID, store.BuildFailure{Kind: store.FailPermanent}))
		if s := e.evalStatus(ev.ID); s != store.EvalFailed {
			t.Fatalf("evaluation %s before the retry", s)
		}
		fx := must(e.s.RetryBuild(e.ctx, a))
		// y still needs the failed z: it is doomed again; b and c wait for a.
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"a": store.BuildQueued, "b": store.BuildCreated,
			"c": store.BuildCreated, "z": store.BuildFailedPermanent, "y": store.BuildDependencyFailed})
		if len(fx.Startable) != 1 || fx.Startable[0] != store.BuildJob(a) {
			t.Errorf("startable %+v", fx.Startable)
		}
		if s := e.evalStatus(ev.ID); s != store.EvalBuilding {
			t.Errorf("evaluation %s after the retry, want Building", s)
		}
		if got := must(e.s.GetBuild(e.ctx, a)); got.Attempt != 0 {
			t.Errorf("attempt %d after the retry", got.Attempt)
		}
		must(e.s.CompleteBuild(e.ctx, e.claim(a, workerA).ID, false))
		e.wantBuildStatus(ev.ID, map[string]store.BuildStatus{"b": store.BuildQueued})
	}},
	{"RetryRefusesABuildThatHasNotFailed/17", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"))
		if _, err := e.s.RetryBuild(e.ctx, e.build(ev.ID, "a").ID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("retry of a queued build: %v, want ErrConflict", err)
		}
		if _, err := e.s.RetryBuild(e.ctx, "0190a000-0000-7000-8000-0000000000ff"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("retry of an unknown build: %v, want ErrNotFound", err)
		}
	}},
	{"EdgesAndOutputs/17", func(t *testing.T, e *env) {
		ev := e.evaluateDone(drv("a"), drv("b", "a"), drv("c", "a", "b"))
		a, b, c := e.build(ev.ID, "a").ID, e.build(ev.ID, "b").ID, e.build(ev.ID, "c").ID
		got := map[store.BuildEdge]bool{}
		for _, edge := range must(e.s.EvaluationEdges(e.ctx, ev.ID)) {
			got[edge] = true
		}
		want := map[store.BuildEdge]bool{{Build: b, DependsOn: a}: true, {Build: c, DependsOn: a}: true, {Build: c, DependsOn: b}: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("edges (-want +got):\n%s", diff)
		}
		outs := must(e.s.BuildOutputs(e.ctx, a))
		if diff := cmp.Diff([]store.Output{{Name: "out", Path: storePath("a")}}, outs); diff != "" {
			t.Errorf("outputs (-want +got):\n%s", diff)
		}
	}},
	{"CountsAndPagesOfBuilds/17", func(t *testing.T, e *env) {
		ev := e.evaluateDone(entry(drv("a")), drv("b", "a"), drv("c", "b"), drv("d"), drv("e"))
		must(e.s.FailBuild(e.ctx, e.claim(e.build(ev.ID, "a").ID, workerA).ID, store.BuildFailure{Kind: store.FailPermanent}))
		counts := must(e.s.EvaluationBuildCounts(e.ctx, ev.ID))
		want := map[store.BuildStatus]int{store.BuildFailedPermanent: 1, store.BuildDependencyFailed: 2, store.BuildQueued: 2}
		if diff := cmp.Diff(want, counts); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
		names := func(bs []store.BuildInfo) []string {
			var out []string
			for _, b := range bs {
				out = append(out, b.Pname)
			}
			return out
		}
		all := must(e.s.EvaluationBuildsPage(e.ctx, store.BuildPage{EvaluationID: ev.ID, Limit: 2, Offset: 1}))
		if diff := cmp.Diff([]string{"b", "c"}, names(all)); diff != "" {
			t.Errorf("page 2 of 2 (-want +got):\n%s", diff)
		}
		first := must(e.s.EvaluationBuildsPage(e.ctx, store.BuildPage{EvaluationID: ev.ID, Limit: 1}))
		if len(first) != 1 || len(first[0].EntryPoints) != 1 || first[0].EntryPoints[0] != "packages.x86_64-linux.a" {
			t.Errorf("first build %+v", first)
		}
		doomed := must(e.s.EvaluationBuildsPage(e.ctx, store.BuildPage{EvaluationID: ev.ID, Statuses: []store.BuildStatus{store.BuildDependencyFailed, store.BuildFailedPermanent}}))
		if diff := cmp.Diff([]string{"a", "b", "c"}, names(doomed)); diff != "" {
			t.Errorf("failed builds (-want +got):\n%s", diff)
		}
	}},
}
