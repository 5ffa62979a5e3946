package retention

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPlanDeletesExactlyTheUnreachable: on random graphs, evaluations and times, no deleted
// path is reachable from a root, and every path no root reaches is deleted. Reachability is
// recomputed here by a fixpoint over the edges, independent of the planner's walk.
func TestPlanDeletesExactlyTheUnreachable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "paths")
		now := t0.Add(100 * 24 * time.Hour)
		paths := make([]Path, n)
		for i := range paths {
			paths[i] = Path{Hash: fmt.Sprintf("%032d", i), Size: int64(rapid.IntRange(0, 1000).Draw(t, "size")),
				Stored: t0.Add(time.Duration(rapid.IntRange(0, 100*24).Draw(t, "stored")) * time.Hour)}
			if rapid.Bool().Draw(t, "fetched") {
				paths[i].Fetched = paths[i].Stored.Add(time.Duration(rapid.IntRange(0, 24*30).Draw(t, "after")) * time.Hour)
			}
			for range rapid.IntRange(0, 4).Draw(t, "refs") {
				// Some references name paths that are not cached.
				paths[i].Refs = append(paths[i].Refs, fmt.Sprintf("%032d", rapid.IntRange(0, n+3).Draw(t, "ref")))
			}
		}
		var evals []Evaluation
		for i := range rapid.IntRange(0, 8).Draw(t, "evaluations") {
			e := Evaluation{ID: fmt.Sprintf("e%d", i), Project: rapid.SampledFrom([]string{"p", "q"}).Draw(t, "project"),
				Branch:  rapid.SampledFrom([]string{"", "main", "dev"}).Draw(t, "branch"),
				Created: t0.Add(time.Duration(rapid.IntRange(0, 100).Draw(t, "created")) * 24 * time.Hour),
				Settled: rapid.IntRange(0, 4).Draw(t, "unsettled") > 0}
			for range rapid.IntRange(0, 4).Draw(t, "evalPaths") {
				e.Paths = append(e.Paths, fmt.Sprintf("%032d", rapid.IntRange(0, n+3).Draw(t, "evalPath")))
			}
			evals = append(evals, e)
		}
		pol := Policy{KeepEvaluations: rapid.IntRange(1, 3).Draw(t, "keep"),
			KeepFetched: time.Duration(rapid.IntRange(0, 40).Draw(t, "ttlDays")) * 24 * time.Hour}

		plan := Make(now, pol, evals, paths)

		roots := map[string]bool{}
		kept := Kept(pol, evals)
		for _, e := range evals {
			if kept[e.ID] {
				for _, p := range e.Paths {
					roots[p] = true
				}
			}
		}
		for _, p := range paths {
			if pol.KeepFetched > 0 && p.lastUsed().After(now.Add(-pol.KeepFetched)) {
				roots[p.Hash] = true
			}
		}
		reach := fixpoint(paths, roots)
		gone := map[string]bool{}
		for _, d := range plan.Delete {
			if reach[d.Hash] {
				t.Fatalf("deleted %s, which a root reaches", d.Hash)
			}
			if d.Since.After(now) {
				t.Fatalf("deleted %s unreachable since %v, after now", d.Hash, d.Since)
			}
			gone[d.Hash] = true
		}
		for _, p := range paths {
			if !reach[p.Hash] && !gone[p.Hash] {
				t.Fatalf("kept %s, which no root reaches", p.Hash)
			}
		}
		if plan.KeptPaths+len(plan.Delete) != len(paths) {
			t.Fatalf("%d kept + %d deleted of %d", plan.KeptPaths, len(plan.Delete), len(paths))
		}
	})
}

// fixpoint marks the cached roots and then, until nothing changes, every cached path a
// marked path references.
func fixpoint(paths []Path, roots map[string]bool) map[string]bool {
	cached := map[string]bool{}
	for _, p := range paths {
		cached[p.Hash] = true
	}
	reach := map[string]bool{}
	for r := range roots {
		if cached[r] {
			reach[r] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, p := range paths {
			if !reach[p.Hash] {
				continue
			}
			for _, r := range p.Refs {
				if cached[r] && !reach[r] {
					reach[r], changed = true, true
				}
			}
		}
	}
	return reach
}
