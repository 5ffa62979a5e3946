package retention

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Path is one cached path as the planner sees it.
type Path struct {
	Hash    string    // store hash: the 32 characters naming the path
	Size    int64     // bytes it takes on disk
	Refs    []string  // store hashes of the paths it references
	Stored  time.Time // when it was recorded
	Fetched time.Time // last served; zero when never
}

// lastUsed is the later of the store and the last fetch.
func (p Path) lastUsed() time.Time {
	if p.Fetched.After(p.Stored) {
		return p.Fetched
	}
	return p.Stored
}

// Evaluation is one evaluation with the store hashes of what it made: its builds' outputs
// and .drv files and its flake source.
type Evaluation struct {
	ID, Project, Branch string
	Created             time.Time
	Settled             bool // reached a terminal status
	Paths               []string
}

// Policy is what the server keeps.
type Policy struct {
	// KeepEvaluations is how many of the newest evaluations of each project and branch are
	// roots; at least 1.
	KeepEvaluations int
	// KeepFetched keeps every path stored or fetched within it; 0 turns that off.
	KeepFetched time.Duration
}

// Deletion is a path the plan removes.
type Deletion struct {
	Hash   string
	Size   int64
	Since  time.Time // since when no root reaches it
	Reason string
}

// Plan is the planner's answer.
type Plan struct {
	KeptEvaluations []string // IDs of the root evaluations, sorted
	Roots           int      // root paths that are cached
	KeptPaths       int
	KeptBytes       int64
	Delete          []Deletion // by hash
	DeleteBytes     int64
}

// Make plans a collection at now.
func Make(now time.Time, pol Policy, evals []Evaluation, paths []Path) Plan {
	byHash := make(map[string]*Path, len(paths))
	for i := range paths {
		byHash[paths[i].Hash] = &paths[i]
	}
	kept, dropped := choose(pol, evals)
	reach := map[string]bool{}
	var plan Plan
	for _, h := range rootPaths(now, pol, kept, paths) {
		if byHash[h] != nil && !reach[h] {
			plan.Roots++
			walk(byHash, reach, h, nil)
		}
	}
	for _, e := range kept {
		plan.KeptEvaluations = append(plan.KeptEvaluations, e.ID)
	}
	slices.Sort(plan.KeptEvaluations)
	why := explain(byHash, reach, dropped)
	for _, p := range paths {
		if reach[p.Hash] {
			plan.KeptPaths++
			plan.KeptBytes += p.Size
			continue
		}
		d := deletion(now, pol, p, why[p.Hash])
		plan.Delete = append(plan.Delete, d)
		plan.DeleteBytes += d.Size
	}
	slices.SortFunc(plan.Delete, func(a, b Deletion) int { return cmp.Compare(a.Hash, b.Hash) })
	return plan
}

// rootPaths lists the hashes of the kept evaluations' paths and of recently used paths.
func rootPaths(now time.Time, pol Policy, kept []Evaluation, paths []Path) []string {
	var out []string
	for _, e := range kept {
		out = append(out, e.Paths...)
	}
	if pol.KeepFetched > 0 {
		cutoff := now.Add(-pol.KeepFetched)
		for _, p := range paths {
			if p.lastUsed().After(cutoff) {
				out = append(out, p.Hash)
			}
		}
	}
	return out
}

// walk marks everything reachable from h (iteratively: closures can be deep), calling
// visit for each path it marks.
func walk(byHash map[string]*Path, seen map[string]bool, h string, visit func(string)) {
	stack := []string{h}
	seen[h] = true
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visit != nil {
			visit(cur)
		}
		for _, r := range byHash[cur].Refs {
			if byHash[r] != nil && !seen[r] {
				seen[r] = true
				stack = append(stack, r)
			}
		}
	}
}

// superseded is a dropped evaluation and when it stopped being a root.
type superseded struct {
	Evaluation
	at time.Time
}

// explain finds, for each unreachable path, the dropped evaluation that held it last: the
// dropped evaluations are walked latest-superseded first, so the first to reach a path is
// the one whose drop made it unreachable.
func explain(byHash map[string]*Path, reach map[string]bool, dropped []superseded) map[string]superseded {
	slices.SortStableFunc(dropped, func(a, b superseded) int { return b.at.Compare(a.at) })
	seen := copySet(reach)
	out := map[string]superseded{}
	for _, e := range dropped {
		for _, h := range e.Paths {
			if byHash[h] != nil && !seen[h] {
				walk(byHash, seen, h, func(p string) { out[p] = e })
			}
		}
	}
	return out
}

func copySet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// deletion says why p goes and since when: the later of its evaluation's drop and the end of
// its TTL, never after now (a fetch stamped by a clock ahead of ours).
func deletion(now time.Time, pol Policy, p Path, by superseded) Deletion {
	d := Deletion{Hash: p.Hash, Size: p.Size, Since: p.lastUsed()}
	if pol.KeepFetched > 0 {
		d.Since = d.Since.Add(pol.KeepFetched)
	}
	if by.ID == "" {
		d.Reason = "in no evaluation's closure"
	} else {
		d.Reason = fmt.Sprintf("only in evaluation %s (%s), older than the newest %d", by.ID, groupName(by.Evaluation), pol.KeepEvaluations)
		if by.at.After(d.Since) {
			d.Since = by.at
		}
	}
	if pol.KeepFetched > 0 {
		d.Reason += fmt.Sprintf("; not stored or fetched for %s", pol.KeepFetched)
	}
	if d.Since.After(now) {
		d.Since = now
	}
	return d
}

func groupName(e Evaluation) string {
	if e.Branch == "" {
		return "project " + e.Project
	}
	return "project " + e.Project + ", branch " + e.Branch
}
