package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"pgregory.net/rapid"
)

var propertyTests = []test{
	{"RandomGraphsBatchesAndOutcomes/6.2/6.4", randomGraphProperty},
}

// graphModel is the expected state of one evaluation's builds.
type graphModel struct {
	deps  [][]int
	state []nodeState
}

type nodeState int

const (
	pending nodeState = iota
	completed
	failed
	doomed // DependencyFailed
)

func (m *graphModel) ready(i int) bool {
	if m.state[i] != pending {
		return false
	}
	for _, d := range m.deps[i] {
		if m.state[d] != completed {
			return false
		}
	}
	return true
}

// fail marks i failed and every pending build transitively needing it doomed.
func (m *graphModel) fail(i int) {
	m.state[i] = failed
	for changed := true; changed; {
		changed = false
		for j, ds := range m.deps {
			if m.state[j] != pending {
				continue
			}
			for _, d := range ds {
				if m.state[d] == failed || m.state[d] == doomed {
					m.state[j], changed = doomed, true
					break
				}
			}
		}
	}
}

// randomGraphProperty: for random DAGs reported in random batch orders (so dependencies are
// often forward references), and random orders of completions and permanent failures, the
// startable set always equals the model's ready set, every build ends as the model says,
// and the evaluation settles Completed exactly when nothing failed.
func randomGraphProperty(t *testing.T, e *env) {
	iteration := 0
	rapid.Check(t, func(rt *rapid.T) {
		iteration++
		prefix := fmt.Sprintf("g%d-", iteration)
		m, ds := randomGraph(rt, prefix)
		// A project per iteration: an iteration that fails while rapid shrinks leaves
		// builds queued, and they must not show up in the next one's candidates.
		p := e.newProject(prefix)
		ev := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: p.ID, Commit: prefix}))
		job := must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA))
		for _, batch := range randomBatches(rt, ds) {
			must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: job.ID, Derivations: batch}))
		}
		must(e.s.CompleteEvaluationJob(e.ctx, job.ID))
		ids := make([]string, len(ds))
		for i := range ds {
			ids[i] = e.build(ev.ID, fmt.Sprintf("%s%d", prefix, i)).ID
		}
		for step := 0; ; step++ {
			want := readySet(m, ids)
			got := sorted(candidateIDs(e, p.ID)...)
			if !slices.Equal(want, got) {
				rt.Fatalf("step %d: startable %v, model says %v", step, got, want)
			}
			if len(want) == 0 {
				break
			}
			pick := slices.Index(ids, rapid.SampledFrom(want).Draw(rt, "build"))
			a := must(e.s.Claim(e.ctx, store.BuildJob(ids[pick]), workerA))
			if rapid.IntRange(0, 5).Draw(rt, "outcome") == 0 {
				must(e.s.FailBuild(e.ctx, a.ID, store.BuildFailure{Kind: store.FailPermanent}))
				m.fail(pick)
			} else {
				must(e.s.CompleteBuild(e.ctx, a.ID, false))
				m.state[pick] = completed
			}
		}
		checkFinalStates(rt, e, m, ids, ev.ID)
	})
}

func candidateIDs(e *env, projectID string) []string {
	cs := must(e.s.Candidates(e.ctx, store.CandidateQuery{Kind: store.JobBuild, Projects: []string{projectID},
		Systems: []string{"x86_64-linux"}, Limit: 100}))
	var out []string
	for _, c := range cs {
		out = append(out, c.Job.ID)
	}
	return out
}

func randomGraph(rt *rapid.T, prefix string) (*graphModel, []store.Derivation) {
	n := rapid.IntRange(1, 10).Draw(rt, "n")
	m := &graphModel{deps: make([][]int, n), state: make([]nodeState, n)}
	ds := make([]store.Derivation, n)
	for i := range n {
		var names []string
		for j := range i {
			if rapid.IntRange(0, 2).Draw(rt, fmt.Sprintf("edge%d-%d", i, j)) == 0 {
				m.deps[i] = append(m.deps[i], j)
				names = append(names, fmt.Sprintf("%s%d", prefix, j))
			}
		}
		ds[i] = drv(fmt.Sprintf("%s%d", prefix, i), names...)
	}
	return m, ds
}

// randomBatches shuffles the derivations and cuts them into batches.
func randomBatches(rt *rapid.T, ds []store.Derivation) [][]store.Derivation {
	order := rapid.Permutation(ds).Draw(rt, "order")
	var out [][]store.Derivation
	for len(order) > 0 {
		k := rapid.IntRange(1, len(order)).Draw(rt, "batch")
		out = append(out, order[:k])
		order = order[k:]
	}
	return out
}

func readySet(m *graphModel, ids []string) []string {
	var out []string
	for i := range ids {
		if m.ready(i) {
			out = append(out, ids[i])
		}
	}
	return sorted(out...)
}

func checkFinalStates(rt *rapid.T, e *env, m *graphModel, ids []string, evalID string) {
	want := map[nodeState]store.BuildStatus{completed: store.BuildCompleted, failed: store.BuildFailedPermanent,
		doomed: store.BuildDependencyFailed}
	anyFailed := false
	for i, id := range ids {
		if st := e.buildStatus(id); st != want[m.state[i]] {
			rt.Fatalf("build %d: %s, model says %v", i, st, want[m.state[i]])
		}
		anyFailed = anyFailed || m.state[i] != completed
	}
	wantEval := store.EvalCompleted
	if anyFailed {
		wantEval = store.EvalFailed
	}
	if got := e.evalStatus(evalID); got != wantEval {
		rt.Fatalf("evaluation %s, want %s", got, wantEval)
	}
}
