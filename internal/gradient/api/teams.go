package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Teams (gradient-protocol §4.2): a team worker is registered once on a team, and every
// project that grants the team's workers can use it. Granting a team, enabling a team worker
// or registering one tells a watching LiveView, so a connected worker reauthenticates
// (gradient-protocol §4.3) and a project granting the team later joins its running session.

func (a *api) createTeam(w http.ResponseWriter, r *http.Request) error {
	var req CreateTeamRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	if err := checkName("team", req.Name); err != nil {
		return err
	}
	t, err := a.store.CreateTeam(r.Context(), req.Name)
	if errors.Is(err, store.ErrConflict) {
		return conflict(CodeConflict, "team %q already exists", req.Name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, Team{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt, Workers: []TeamWorker{}, Projects: []string{}})
	return nil
}

func (a *api) listTeams(w http.ResponseWriter, r *http.Request) error {
	teams, err := a.store.ListTeams(r.Context())
	if err != nil {
		return err
	}
	out := TeamList{Teams: make([]Team, 0, len(teams))}
	for _, t := range teams {
		full, err := a.teamOf(r.Context(), t)
		if err != nil {
			return err
		}
		out.Teams = append(out.Teams, full)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) showTeam(w http.ResponseWriter, r *http.Request) error {
	t, err := a.resolveTeam(r.Context(), r.PathValue("team"))
	if err != nil {
		return err
	}
	full, err := a.teamOf(r.Context(), t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, full)
	return nil
}

// resolveTeam finds a team by ID or by name (teams are few: one read of them all).
func (a *api) resolveTeam(ctx context.Context, ref string) (store.Team, error) {
	teams, err := a.store.ListTeams(ctx)
	if err != nil {
		return store.Team{}, err
	}
	i := slices.IndexFunc(teams, func(t store.Team) bool { return t.ID == ref || t.Name == ref })
	if i < 0 {
		return store.Team{}, notFound("team %q not found", ref)
	}
	return teams[i], nil
}

// teamOf is a team with its workers and the names of the projects granting them.
func (a *api) teamOf(ctx context.Context, t store.Team) (Team, error) {
	out := Team{ID: t.ID, Name: t.Name, CreatedAt: t.CreatedAt, Workers: []TeamWorker{}, Projects: []string{}}
	workers, err := a.store.ListTeamWorkers(ctx, t.ID)
	if err != nil {
		return out, err
	}
	out.Workers = mapSlice(workers, teamWorkerOf)
	grants, err := a.store.ListTeamGrants(ctx, t.ID)
	if err != nil {
		return out, err
	}
	for _, g := range grants {
		if !g.Workers {
			continue
		}
		p, err := a.store.GetProject(ctx, g.ProjectID)
		if err != nil {
			return out, err
		}
		out.Projects = append(out.Projects, p.Name)
	}
	slices.Sort(out.Projects)
	return out, nil
}

func teamWorkerOf(w store.TeamWorkerRow) TeamWorker {
	return TeamWorker{WorkerID: w.WorkerID, TeamID: w.TeamID, Enabled: w.Enabled, URL: w.URL,
		HasDialToken: w.HasDialToken, CreatedAt: w.CreatedAt}
}

// registerTeamWorker registers a worker ID on a team with a fresh token, stores only its
// argon2id hash (and, for a server-dialed worker, the sealed token), and answers with the
// token this one time. A worker ID that has registrations is refused (409 worker_id_taken).
func (a *api) registerTeamWorker(w http.ResponseWriter, r *http.Request) error {
	t, err := a.resolveTeam(r.Context(), r.PathValue("team"))
	if err != nil {
		return err
	}
	var req RegisterTeamWorkerRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	workerID, err := canonicalWorkerID(req.WorkerID)
	if err == nil && req.URL != "" {
		err = checkDialURL(req.URL)
	}
	if err != nil {
		return err
	}
	if req.URL != "" && a.seal == nil {
		return &httpError{http.StatusNotImplemented, CodeNotImplemented,
			"server-dialed team workers (url) need a dial-token key, which this server does not have"}
	}
	nr := store.NewRegistration{URL: req.URL}
	token, err := a.mintToken(&nr)
	if err != nil {
		return err
	}
	row, err := a.store.CreateTeamWorker(r.Context(), store.NewTeamWorker{TeamID: t.ID, WorkerID: workerID,
		TokenHash: nr.TokenHash, TokenEnc: nr.TokenEnc, URL: req.URL, Enabled: true})
	switch {
	case errors.Is(err, store.ErrConflict):
		return conflict(CodeConflict, "worker %s already is a team worker", workerID)
	case errors.Is(err, store.ErrWorkerIDTaken):
		return conflict(CodeWorkerIDTaken, "worker %s has registrations; it cannot also be a team worker", workerID)
	case err != nil:
		return err
	}
	resp := RegisterTeamWorkerResponse{TeamWorker: teamWorkerOf(row), Token: token, PeersFileLine: t.ID + ":" + token}
	if resp.Warnings, err = a.teamWarnings(r.Context(), t); err != nil {
		return err
	}
	a.registrationChanged(workerID)
	writeJSON(w, http.StatusCreated, resp)
	return nil
}

// teamWarnings says what will stop the team's workers from being admitted.
func (a *api) teamWarnings(ctx context.Context, t store.Team) ([]string, error) {
	grants, err := a.store.ListTeamGrants(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(grants, func(g store.TeamGrant) bool { return g.Workers }) {
		return nil, nil
	}
	return []string{fmt.Sprintf("no project grants team %q: its workers will be refused (403) until one does", t.Name)}, nil
}

// setTeamWorkerEnabled turns a team worker on or off; turning it off ends its live session
// with 403 "worker is deactivated" (gradient-protocol §4.3).
func (a *api) setTeamWorkerEnabled(w http.ResponseWriter, r *http.Request) error {
	t, err := a.resolveTeam(r.Context(), r.PathValue("team"))
	if err != nil {
		return err
	}
	workerID, active, err := activeRequest(w, r)
	if err != nil {
		return err
	}
	row, err := a.teamWorker(r.Context(), t, workerID)
	if err != nil {
		return err
	}
	if err := a.store.SetTeamWorkerEnabled(r.Context(), workerID, active); err != nil {
		return err
	}
	a.registrationChanged(workerID)
	row.Enabled = active
	writeJSON(w, http.StatusOK, teamWorkerOf(row))
	return nil
}

// teamWorker is the team's worker workerID, or 404.
func (a *api) teamWorker(ctx context.Context, t store.Team, workerID string) (store.TeamWorkerRow, error) {
	rows, err := a.store.ListTeamWorkers(ctx, t.ID)
	if err != nil {
		return store.TeamWorkerRow{}, err
	}
	i := slices.IndexFunc(rows, func(w store.TeamWorkerRow) bool { return w.WorkerID == workerID })
	if i < 0 {
		return store.TeamWorkerRow{}, notFound("worker %s is not a worker of team %q", workerID, t.Name)
	}
	return rows[i], nil
}

// grantTeam lets a project use a team's workers; connected team workers reauthenticate and
// take the project's jobs on their running sessions (gradient-protocol §4.2).
func (a *api) grantTeam(w http.ResponseWriter, r *http.Request) error {
	p, t, err := a.projectAndTeam(r)
	if err != nil {
		return err
	}
	if err := a.store.SetTeamGrant(r.Context(), store.TeamGrant{TeamID: t.ID, ProjectID: p.ID, Workers: true}); err != nil {
		return err
	}
	if err := a.teamWorkersChanged(r.Context(), t.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// revokeTeam withdraws a project's grant. Running sessions keep what they were granted (reauth
// never revokes, gradient-protocol §4.3); the next handshake no longer includes the project.
func (a *api) revokeTeam(w http.ResponseWriter, r *http.Request) error {
	p, t, err := a.projectAndTeam(r)
	if err != nil {
		return err
	}
	grants, err := a.store.ListTeamGrants(r.Context(), t.ID)
	if err != nil {
		return err
	}
	if !slices.Contains(grants, store.TeamGrant{TeamID: t.ID, ProjectID: p.ID, Workers: true}) {
		return notFound("project %q does not grant team %q", p.Name, t.Name)
	}
	if err := a.store.SetTeamGrant(r.Context(), store.TeamGrant{TeamID: t.ID, ProjectID: p.ID, Workers: false}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *api) projectAndTeam(r *http.Request) (store.Project, store.Team, error) {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return p, store.Team{}, err
	}
	t, err := a.resolveTeam(r.Context(), r.PathValue("team"))
	return p, t, err
}

// teamWorkersChanged tells a watching LiveView about every worker of the team.
func (a *api) teamWorkersChanged(ctx context.Context, teamID string) error {
	if _, ok := a.live.(RegistrationWatcher); !ok {
		return nil
	}
	rows, err := a.store.ListTeamWorkers(ctx, teamID)
	if err != nil {
		return err
	}
	for _, row := range rows {
		a.registrationChanged(row.WorkerID)
	}
	return nil
}

// grantingTeams is the IDs of the teams whose workers the project may use.
func (a *api) grantingTeams(ctx context.Context, projectID string) ([]string, error) {
	grants, err := a.store.ListTeamGrants(ctx, "")
	if err != nil {
		return nil, err
	}
	var teams []string
	for _, g := range grants {
		if g.ProjectID == projectID && g.Workers {
			teams = append(teams, g.TeamID)
		}
	}
	return teams, nil
}
