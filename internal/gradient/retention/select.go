package retention

import (
	"cmp"
	"slices"
)

// choose splits the evaluations into the roots (the newest KeepEvaluations of each project
// and branch, and every unsettled one) and the rest, each of those with the moment it
// stopped being a root: when the evaluation KeepEvaluations places newer was created.
func choose(pol Policy, evals []Evaluation) (kept []Evaluation, dropped []superseded) {
	n := max(pol.KeepEvaluations, 1)
	groups := map[[2]string][]Evaluation{}
	for _, e := range evals {
		k := [2]string{e.Project, e.Branch}
		groups[k] = append(groups[k], e)
	}
	for _, g := range groups {
		slices.SortFunc(g, newestFirst)
		for i, e := range g {
			switch {
			case i < n || !e.Settled:
				kept = append(kept, e)
			default:
				dropped = append(dropped, superseded{Evaluation: e, at: g[i-n].Created})
			}
		}
	}
	slices.SortFunc(kept, newestFirst)
	return kept, dropped
}

// Kept lists the IDs of the evaluations the planner keeps as roots.
func Kept(pol Policy, evals []Evaluation) map[string]bool {
	kept, _ := choose(pol, evals)
	out := make(map[string]bool, len(kept))
	for _, e := range kept {
		out[e.ID] = true
	}
	return out
}

// newestFirst orders by creation, newest first, then by ID (IDs are time-ordered).
func newestFirst(a, b Evaluation) int {
	if c := b.Created.Compare(a.Created); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}
