package api

import (
	"context"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// abortEvaluation aborts an unfinished evaluation and the builds only it needs, then hands
// the effects to the live server, which sends AbortJob for every closed assignment.
func (a *api) abortEvaluation(w http.ResponseWriter, r *http.Request) error {
	reason, err := abortReason(w, r)
	if err != nil {
		return err
	}
	e, err := a.getEvaluation(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if e.Status.Terminal() {
		return conflict(CodeAlreadyDone, "evaluation %s already finished (%s)", e.ID, e.Status)
	}
	fx, err := a.store.AbortEvaluation(r.Context(), e.ID, reason)
	if err != nil {
		return err
	}
	a.apply(r.Context(), fx)
	if e, err = a.getEvaluation(r.Context(), e.ID); err != nil {
		return err
	}
	out := abortResponse(fx)
	ev := evaluationOf(e)
	out.Evaluation = &ev
	writeJSON(w, http.StatusOK, out)
	return nil
}

// abortBuild aborts one unfinished build (no cascade), then hands the effects on.
func (a *api) abortBuild(w http.ResponseWriter, r *http.Request) error {
	reason, err := abortReason(w, r)
	if err != nil {
		return err
	}
	b, err := a.getBuild(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if b.Status.Terminal() {
		return conflict(CodeAlreadyDone, "build %s already finished (%s)", b.ID, b.Status)
	}
	fx, err := a.store.AbortBuild(r.Context(), b.ID, reason)
	if err != nil {
		return err
	}
	a.apply(r.Context(), fx)
	if b, err = a.getBuild(r.Context(), b.ID); err != nil {
		return err
	}
	out := abortResponse(fx)
	bo := buildOf(b)
	out.Build = &bo
	writeJSON(w, http.StatusOK, out)
	return nil
}

// apply hands effects to the live server even if the client has gone: the store already
// committed the abort, and the workers must hear of it.
func (a *api) apply(ctx context.Context, fx store.Effects) {
	a.live.Apply(context.WithoutCancel(ctx), fx)
}

func abortReason(w http.ResponseWriter, r *http.Request) (string, error) {
	var req AbortRequest
	if err := decodeOptionalBody(w, r, &req); err != nil {
		return "", err
	}
	if err := checkText("reason", req.Reason, false, maxReasonLen); err != nil {
		return "", err
	}
	if req.Reason == "" {
		return defaultReason, nil
	}
	return req.Reason, nil
}

func abortResponse(fx store.Effects) AbortResponse {
	aborted := countFunc(fx.Builds, func(c store.BuildChange) bool { return c.Status == store.BuildAborted })
	return AbortResponse{AbortedBuilds: aborted, StoppedJobs: len(fx.Closed), SettledEvaluation: len(fx.Settled)}
}
