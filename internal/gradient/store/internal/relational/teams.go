package relational

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// ListTeams implements store.Reads.
func (s *Store) ListTeams(ctx context.Context) ([]store.Team, error) {
	var out []store.Team
	err := s.read(ctx, "list teams", func(tx Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT id, name, created_at FROM team ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t store.Team
			var created Timestamp
			if err := rows.Scan(&t.ID, &t.Name, &created); err != nil {
				return err
			}
			t.CreatedAt = created.Time
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
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
	var out []store.TeamGrant
	err := s.read(ctx, "list team grants", func(tx Tx) error {
		out = nil
		rows, err := tx.Query(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var g store.TeamGrant
			if err := rows.Scan(&g.TeamID, &g.ProjectID, &g.Workers); err != nil {
				return err
			}
			out = append(out, g)
		}
		return rows.Err()
	})
	return out, err
}
