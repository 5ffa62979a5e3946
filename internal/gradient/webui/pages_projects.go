package webui

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// evalRow is an evaluation in a list.
type evalRow struct {
	store.Evaluation
	State, Status, Took string
}

func evalRowOf(e store.Evaluation) evalRow {
	return evalRow{Evaluation: e, State: evalState(e.Status), Status: e.Status.String(), Took: since(e.CreatedAt, e.UpdatedAt)}
}

type projectCard struct {
	Project     store.Project
	Evaluations []evalRow
}

// projectsPage lists every project with its last five evaluations.
func (u *UI) projectsPage(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.mayRead(w, r, v) {
		return
	}
	ps, err := u.cfg.Store.ListProjects(r.Context())
	if err != nil {
		u.failErr(w, r, v, err)
		return
	}
	cards := make([]projectCard, 0, len(ps))
	for _, p := range ps {
		evals, err := u.cfg.Store.ListEvaluations(r.Context(), p.ID, 5)
		if err != nil {
			u.failErr(w, r, v, err)
			return
		}
		cards = append(cards, projectCard{Project: p, Evaluations: mapRows(evals, evalRowOf)})
	}
	u.render(w, r, v, http.StatusOK, "projects", cards)
}

// projectPage is one project with its evaluation history (the newest 100).
func (u *UI) projectPage(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !u.mayRead(w, r, v) {
		return
	}
	p, err := u.project(r.Context(), r.PathValue("project"))
	if err != nil {
		u.notFoundOr(w, r, v, err, "There is no such project.")
		return
	}
	evals, err := u.cfg.Store.ListEvaluations(r.Context(), p.ID, 100)
	if err != nil {
		u.failErr(w, r, v, err)
		return
	}
	u.render(w, r, v, http.StatusOK, "project", projectCard{Project: p, Evaluations: mapRows(evals, evalRowOf)})
}

// project finds a project by ID or name, as the API does.
func (u *UI) project(ctx context.Context, ref string) (store.Project, error) {
	if uuid.Validate(ref) == nil {
		return u.cfg.Store.GetProject(ctx, ref)
	}
	return u.cfg.Store.ProjectByName(ctx, ref)
}

// notFoundOr answers 404 with msg for ErrNotFound, 500 otherwise.
func (u *UI) notFoundOr(w http.ResponseWriter, r *http.Request, v viewer, err error, msg string) {
	if errors.Is(err, store.ErrNotFound) {
		u.fail(w, r, v, http.StatusNotFound, msg)
		return
	}
	u.failErr(w, r, v, err)
}

func mapRows[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
