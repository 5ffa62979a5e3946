package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// settledEvaluation evaluates ds (the first an entry point), records the flake source,
// builds everything and returns the Completed evaluation with its build IDs by name.
func (e *env) settledEvaluation(source string, ds ...store.Derivation) (store.Evaluation, map[string]string) {
	ev, a := e.evalJob()
	check(e.t, e.s.RecordFlakeSource(e.ctx, a.ID, storePath(source)))
	ds[0] = entry(ds[0])
	must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: a.ID, Derivations: ds}))
	must(e.s.CompleteEvaluationJob(e.ctx, a.ID))
	builds := map[string]string{}
	for i := len(ds) - 1; i >= 0; i-- { // dependencies last in ds: build them first
		b := e.build(ev.ID, ds[i].Pname)
		builds[ds[i].Pname] = b.ID
		a := e.claim(b.ID, workerA)
		check(e.t, e.s.AppendBuildLog(e.ctx, a.ID, []byte("log of "+ds[i].Pname)))
		must(e.s.CompleteBuild(e.ctx, a.ID, false))
	}
	e.wantEvalStatus(ev.ID, store.EvalCompleted)
	return ev, builds
}

var retentionTests = []test{
	{"GraphListsEachEvaluationsPathsAndEveryCachedPath/15", func(t *testing.T, e *env) {
		ev, _ := e.settledEvaluation("src", drv("app", "lib"), drv("lib"))
		queued := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "beef"}))
		pending := cachedPath("pending")
		pending.FileHash, pending.FileSize = "", 0
		check(t, e.s.PutCachedPath(e.ctx, cachedPath("app"), []string{e.cache.ID}))
		check(t, e.s.PutCachedPath(e.ctx, pending, nil))
		g := must(e.s.RetentionGraph(e.ctx))
		if len(g.Evaluations) != 2 {
			t.Fatalf("evaluations %+v", g.Evaluations)
		}
		got := g.Evaluations[0]
		if got.ID != ev.ID || got.ProjectID != e.project.ID || got.Status != store.EvalCompleted || !got.CreatedAt.Equal(e.clock.Now()) {
			t.Errorf("evaluation %+v", got)
		}
		want := sorted(storePath("src"), drvPath("app"), storePath("app"), drvPath("lib"), storePath("lib"))
		if paths := sorted(got.StorePaths...); !slices.Equal(paths, want) {
			t.Errorf("paths %v, want %v", paths, want)
		}
		if q := g.Evaluations[1]; q.ID != queued.ID || q.Status != store.EvalQueued || len(q.StorePaths) != 0 {
			t.Errorf("queued evaluation %+v", q)
		}
		if len(g.Paths) != 2 {
			t.Fatalf("paths %+v", g.Paths)
		}
		for _, p := range g.Paths {
			if p.StorePath == storePath("app") && (p.FileSize != 400 || len(p.References) != 1) {
				t.Errorf("cached path %+v", p)
			}
		}
	}},
	{"DeletedPathsAreNoLongerCached/15", func(t *testing.T, e *env) {
		for _, n := range []string{"a", "b"} {
			check(t, e.s.PutCachedPath(e.ctx, cachedPath(n), []string{e.cache.ID}))
		}
		ha, _ := store.StoreHash(storePath("a"))
		hx, _ := store.StoreHash(storePath("x"))
		if gone := must(e.s.DeleteCachedPaths(e.ctx, []string{ha, hx})); !slices.Equal(gone, []string{ha}) {
			t.Errorf("deleted %v, want only %s (x was never cached)", gone, ha)
		}
		got := must(e.s.LookupCachedPaths(e.ctx, []string{e.cache.ID}, []string{storePath("a"), storePath("b")}))
		if _, ok := got[storePath("a")]; ok || len(got) != 1 {
			t.Errorf("after the delete: %v", got)
		}
	}},
	{"OldSettledEvaluationsArePrunedUnlessKept/15", func(t *testing.T, e *env) {
		old, _ := e.settledEvaluation("s1", drv("a"))
		kept, _ := e.settledEvaluation("s2", drv("b"))
		running := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "c1"}))
		e.clock.Advance(time.Hour)
		fresh, _ := e.settledEvaluation("s3", drv("c"))
		if n := must(e.s.PruneEvaluations(e.ctx, e.clock.Now().Add(-time.Minute), []string{kept.ID})); n != 1 {
			t.Errorf("pruned %d evaluations, want 1", n)
		}
		if _, err := e.s.GetEvaluation(e.ctx, old.ID); err == nil {
			t.Errorf("the old evaluation is still there")
		}
		for _, id := range []string{kept.ID, running.ID, fresh.ID} {
			must(e.s.GetEvaluation(e.ctx, id))
		}
		must(e.s.GetBuild(e.ctx, e.build(fresh.ID, "c").ID)) // builds are shared and stay
	}},
	{"OldLogsArePrunedUnlessAKeptEvaluationNeedsTheBuild/15", func(t *testing.T, e *env) {
		_, oldBuilds := e.settledEvaluation("s1", drv("a"))
		kept, keptBuilds := e.settledEvaluation("s2", drv("b"))
		e.clock.Advance(time.Hour)
		_, freshBuilds := e.settledEvaluation("s3", drv("c"))
		if n := must(e.s.PruneBuildLogs(e.ctx, e.clock.Now().Add(-time.Minute), []string{kept.ID})); n != 1 {
			t.Errorf("pruned %d logs, want 1", n)
		}
		for build, want := range map[string]string{oldBuilds["a"]: "", keptBuilds["b"]: "log of b", freshBuilds["c"]: "log of c"} {
			att := must(e.s.BuildAttempts(e.ctx, build))[0]
			if got := string(must(e.s.ReadBuildLog(e.ctx, att.ID, 0, 0))); got != want {
				t.Errorf("log of build %s: %q, want %q", build, got, want)
			}
		}
	}},
}
