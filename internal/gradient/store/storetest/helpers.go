package storetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

const (
	workerA = "0190a000-0000-7000-8000-00000000000a"
	workerB = "0190b000-0000-7000-8000-00000000000b"
)

// evalJob creates an evaluation of e.project and claims its flake job for workerA.
func (e *env) evalJob() (store.Evaluation, store.Assignment) {
	ev := must(e.s.CreateEvaluation(e.ctx, store.NewEvaluation{ProjectID: e.project.ID, Commit: "c0ffee"}))
	a := must(e.s.Claim(e.ctx, store.EvalJob(ev.ID), workerA))
	return ev, a
}

// evaluate runs a flake job that reports ds in one EvalResult batch and leaves the job open.
func (e *env) evaluate(ds ...store.Derivation) (store.Evaluation, store.Assignment, store.Effects) {
	ev, a := e.evalJob()
	fx := must(e.s.AddEvalResult(e.ctx, store.EvalBatch{AssignmentID: a.ID, Derivations: ds}))
	return ev, a, fx
}

// evaluateDone is evaluate followed by JobCompleted.
func (e *env) evaluateDone(ds ...store.Derivation) store.Evaluation {
	ev, a, _ := e.evaluate(ds...)
	must(e.s.CompleteEvaluationJob(e.ctx, a.ID))
	return ev
}

// build finds the build of the named derivation among an evaluation's builds.
func (e *env) build(evalID, name string) store.BuildInfo {
	e.t.Helper()
	for _, b := range must(e.s.EvaluationBuilds(e.ctx, evalID)) {
		if b.DrvPath == drvPath(name) {
			return b
		}
	}
	e.t.Fatalf("evaluation %s has no build of %s", evalID, name)
	return store.BuildInfo{}
}

// buildStatus reads a build's status.
func (e *env) buildStatus(id string) store.BuildStatus {
	return must(e.s.GetBuild(e.ctx, id)).Status
}

func (e *env) evalStatus(id string) store.EvaluationStatus {
	return must(e.s.GetEvaluation(e.ctx, id)).Status
}

// claim claims a build for a worker, failing the test when it cannot.
func (e *env) claim(buildID, worker string) store.Assignment {
	return must(e.s.Claim(e.ctx, store.BuildJob(buildID), worker))
}

// complete claims and completes a build.
func (e *env) complete(buildID string) store.Effects {
	a := e.claim(buildID, workerA)
	return must(e.s.CompleteBuild(e.ctx, a.ID, false))
}

// wantBuildStatus checks the named builds' statuses.
func (e *env) wantBuildStatus(evalID string, want map[string]store.BuildStatus) {
	e.t.Helper()
	for name, st := range want {
		if got := e.build(evalID, name).Status; got != st {
			e.t.Errorf("build %s: status %s, want %s", name, got, st)
		}
	}
}

func (e *env) wantEvalStatus(id string, want store.EvaluationStatus) {
	e.t.Helper()
	if got := e.evalStatus(id); got != want {
		e.t.Errorf("evaluation status %s, want %s", got, want)
	}
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}

// jobIDs lists the IDs of jobs, sorted.
func jobIDs(jobs []store.JobRef) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	slices.Sort(out)
	return out
}

func sorted(ids ...string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// candidates asks for every startable build workerA may run on x86_64-linux.
func (e *env) candidates(kind store.JobKind) []string {
	cs := must(e.s.Candidates(e.ctx, store.CandidateQuery{Kind: kind, Projects: []string{e.project.ID},
		Systems: []string{"x86_64-linux"}, Limit: 1000}))
	var out []string
	for _, c := range cs {
		out = append(out, c.Job.ID)
	}
	return out
}
