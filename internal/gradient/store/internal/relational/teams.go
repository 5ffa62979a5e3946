package relational

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// ListTeams implements store.Reads.
func (s *Store) ListTeams(ctx context.Context) ([]store.Team, error) {
	return readAll(ctx, s, "list teams", func(r Row) (store.Team, error) {
		var t store.Team
		var created Timestamp
		err := r.Scan(&t.ID, &t.Name, &created)
		t.CreatedAt = created.Time
		return t, err
	}, `SELECT id, name, created_at FROM team ORDER BY name`)
}

// ListTeamGrants implements store.Reads.
func (s *Store) ListTeamGrants(ctx context.Context, teamID string) ([]store.TeamGrant, error) {
	if teamID != "" && !validID(teamID) {
		return nil, nil
	}
	q := `SELECT team_id, project_id, workers FROM team_grant ORDER BY team_id, project_id`
	var args []any
	if teamID != "" {
		q = `SELECT team_id, project_id, workers FROM team_grant WHERE team_id = $1 ORDER BY project_id`
		args = append(args, teamID)
	}
	return readAll(ctx, s, "list team grants", func(r Row) (store.TeamGrant, error) {
		var g store.TeamGrant
		err := r.Scan(&g.TeamID, &g.ProjectID, &g.Workers)
		return g, err
	}, q, args...)
}
