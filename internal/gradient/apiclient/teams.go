package apiclient

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
)

// ListTeams lists every team with its workers and granting projects.
func (c *Client) ListTeams(ctx context.Context) ([]api.Team, error) {
	var out api.TeamList
	err := c.do(ctx, "GET", "/teams", nil, &out)
	return out.Teams, err
}

// CreateTeam creates a team.
func (c *Client) CreateTeam(ctx context.Context, name string) (api.Team, error) {
	var out api.Team
	err := c.do(ctx, "POST", "/teams", api.CreateTeamRequest{Name: name}, &out)
	return out, err
}

// Team shows a team by ID or name.
func (c *Client) Team(ctx context.Context, ref string) (api.Team, error) {
	var out api.Team
	err := c.do(ctx, "GET", "/teams/"+seg(ref), nil, &out)
	return out, err
}

// RegisterTeamWorker registers a worker ID on a team; the answer holds the token, shown once.
func (c *Client) RegisterTeamWorker(ctx context.Context, team string, req api.RegisterTeamWorkerRequest) (api.RegisterTeamWorkerResponse, error) {
	var out api.RegisterTeamWorkerResponse
	err := c.do(ctx, "POST", "/teams/"+seg(team)+"/workers", req, &out)
	return out, err
}

// SetTeamWorkerEnabled disables or re-enables a team worker.
func (c *Client) SetTeamWorkerEnabled(ctx context.Context, team, workerID string, enabled bool) (api.TeamWorker, error) {
	var out api.TeamWorker
	err := c.do(ctx, "PATCH", "/teams/"+seg(team)+"/workers/"+seg(workerID), api.SetActiveRequest{Active: &enabled}, &out)
	return out, err
}

// GrantTeam lets a project use a team's workers (idempotent).
func (c *Client) GrantTeam(ctx context.Context, project, team string) error {
	return c.do(ctx, "PUT", "/projects/"+seg(project)+"/teams/"+seg(team), nil, nil)
}

// RevokeTeam withdraws a project's grant of a team's workers.
func (c *Client) RevokeTeam(ctx context.Context, project, team string) error {
	return c.do(ctx, "DELETE", "/projects/"+seg(project)+"/teams/"+seg(team), nil, nil)
}

// ProjectWorkers lists the workers that may serve a project, live only when their session
// authenticated for it.
func (c *Client) ProjectWorkers(ctx context.Context, project string) ([]api.Worker, error) {
	var out api.WorkerList
	err := c.do(ctx, "GET", "/projects/"+seg(project)+"/workers", nil, &out)
	return out.Workers, err
}
