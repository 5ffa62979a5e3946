package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Log paging: one answer carries at most maxLogLimit bytes, defaultLogLimit unless asked.
const (
	defaultLogLimit = 1 << 20
	maxLogLimit     = 8 << 20
	maxListLimit    = 1000
	defaultReason   = "aborted through the API"
)

func (a *api) listEvaluations(w http.ResponseWriter, r *http.Request) error {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 0, 1, maxListLimit)
	if err != nil {
		return err
	}
	evals, err := a.store.ListEvaluations(r.Context(), p.ID, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, EvaluationList{Evaluations: mapSlice(evals, evaluationOf)})
	return nil
}

// startEvaluation queues an evaluation and kicks the dispatcher to offer it at once.
func (a *api) startEvaluation(w http.ResponseWriter, r *http.Request) error {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	var req StartEvaluationRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	branch, commit, err := a.headOf(r.Context(), p, req)
	if err != nil {
		return err
	}
	ne := store.NewEvaluation{ProjectID: p.ID, Commit: commit, Branch: branch}
	if len(req.Wildcards) > 0 {
		if err := checkWildcards(req.Wildcards); err != nil {
			return err
		}
		ne.Wildcards = req.Wildcards
	}
	e, err := a.store.CreateEvaluation(r.Context(), ne)
	if err != nil {
		return err
	}
	a.live.Kick()
	writeJSON(w, http.StatusCreated, evaluationOf(e))
	return nil
}

func (a *api) getEvaluation(ctx context.Context, id string) (store.Evaluation, error) {
	e, err := a.store.GetEvaluation(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return e, notFound("evaluation %q not found", id)
	}
	return e, err
}

func (a *api) getBuild(ctx context.Context, id string) (store.BuildInfo, error) {
	b, err := a.store.GetBuild(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return b, notFound("build %q not found", id)
	}
	return b, err
}

func (a *api) showEvaluation(w http.ResponseWriter, r *http.Request) error {
	e, err := a.getEvaluation(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	builds, err := a.store.EvaluationBuilds(r.Context(), e.ID)
	if err != nil {
		return err
	}
	msgs, err := a.store.EvaluationMessages(r.Context(), e.ID)
	if err != nil {
		return err
	}
	statuses, err := a.evaluationStatuses(r.Context(), e.ID)
	if err != nil {
		return err
	}
	d := EvaluationDetail{Evaluation: evaluationOf(e), Builds: mapSlice(builds, buildOf), Messages: mapSlice(msgs, messageOf),
		Statuses: statuses}
	a.explainWaits(&d, e.ProjectID)
	writeJSON(w, http.StatusOK, d)
	return nil
}

// explainWaits fills in what the evaluation and its builds wait for while they are queued.
func (a *api) explainWaits(d *EvaluationDetail, project string) {
	if d.Evaluation.StatusCode == int(store.EvalQueued) {
		d.Evaluation.Waiting = a.live.WaitReason(project, store.JobEval, "")
	}
	for i, b := range d.Builds {
		if b.StatusCode == int(store.BuildQueued) {
			d.Builds[i].Waiting = a.live.WaitReason(project, store.JobBuild, b.System)
		}
	}
}

func (a *api) showBuild(w http.ResponseWriter, r *http.Request) error {
	b, err := a.getBuild(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	attempts, err := a.store.BuildAttempts(r.Context(), b.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BuildDetail{Build: buildOf(b), Attempts: mapSlice(attempts, attemptOf)})
	return nil
}

// queryInt reads an optional integer query parameter within [lo, hi]; def when absent.
func queryInt(r *http.Request, name string, def, lo, hi int64) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, badRequest("%s must be an integer from %d to %d", name, lo, hi)
	}
	return v, nil
}
