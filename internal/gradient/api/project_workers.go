package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// notForProject is a connected worker's offline reason in a project's worker list when its
// session did not authenticate for the project (gradient-protocol §4.3).
const notForProject = "connected, but not authenticated for this project"

// listProjectWorkers lists the workers that may serve a project — registered for it, or
// team workers of a team it grants — live only when their session authenticated for the
// project (gradient-protocol §4.3).
func (a *api) listProjectWorkers(w http.ResponseWriter, r *http.Request) error {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	ids, err := a.projectWorkerIDs(r.Context(), p.ID)
	if err != nil {
		return err
	}
	stored, err := a.store.ListWorkers(r.Context())
	if err != nil {
		return err
	}
	known := make(map[string]store.WorkerInfo, len(stored))
	for _, sw := range stored {
		known[sw.WorkerID] = sw
	}
	live := a.live.LiveWorkers()
	out := WorkerList{Workers: make([]Worker, 0, len(ids))}
	for _, id := range ids {
		info, ok := known[id]
		if !ok {
			info = store.WorkerInfo{WorkerID: id, Registered: true}
		}
		lw, connected := live[id]
		forProject := connected && slices.Contains(lw.Authorized, p.ID)
		wk := workerOf(info, lw, forProject)
		if connected && !forProject {
			wk.OfflineReason = notForProject
		}
		out.Workers = append(out.Workers, wk)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// projectWorkerIDs lists, sorted, the worker IDs registered for the project (active or not)
// and the team workers of every team the project grants.
func (a *api) projectWorkerIDs(ctx context.Context, projectID string) ([]string, error) {
	regs, err := a.store.ListRegistrations(ctx, "")
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, reg := range regs {
		if reg.PeerID == projectID {
			ids = append(ids, reg.WorkerID)
		}
	}
	teams, err := a.grantingTeams(ctx, projectID)
	if err != nil {
		return nil, err
	}
	for _, teamID := range teams {
		rows, err := a.store.ListTeamWorkers(ctx, teamID)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			ids = append(ids, row.WorkerID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}
