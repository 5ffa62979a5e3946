package relational

import (
	"context"
	"fmt"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// CreateProject implements store.Admin.
func (s *Store) CreateProject(ctx context.Context, p store.NewProject) (store.Project, error) {
	if strings.TrimSpace(p.Name) == "" || p.RepoURL == "" {
		return store.Project{}, fmt.Errorf("create project: name and repository URL required: %w", store.ErrInvalid)
	}
	out := store.Project{ID: newID(), Name: p.Name, RepoURL: p.RepoURL, Branch: p.Branch,
		Wildcards: p.Wildcards, HasSSHKey: len(p.SSHKeyEnc) > 0, ForceEvaluation: p.ForceEvaluation, CreatedAt: s.clock()}
	err := s.write(ctx, "create project", func(tx Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO project (id, name, repo_url, branch, wildcards, ssh_key_enc, force_evaluation, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			out.ID, out.Name, out.RepoURL, out.Branch, encodeList(out.Wildcards), nilIfEmpty(p.SSHKeyEnc), out.ForceEvaluation, out.CreatedAt)
		return s.conflict(err, "project name", p.Name)
	})
	return out, err
}

// CreateCache implements store.Admin.
func (s *Store) CreateCache(ctx context.Context, c store.NewCache) (store.Cache, error) {
	if strings.TrimSpace(c.Name) == "" {
		return store.Cache{}, fmt.Errorf("create cache: name required: %w", store.ErrInvalid)
	}
	out := store.Cache{ID: newID(), Name: c.Name, Public: c.Public, SigningKeyEnc: c.SigningKeyEnc, CreatedAt: s.clock()}
	err := s.write(ctx, "create cache", func(tx Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO cache (id, name, public, signing_key_enc, created_at) VALUES ($1, $2, $3, $4, $5)`,
			out.ID, out.Name, out.Public, nilIfEmpty(c.SigningKeyEnc), out.CreatedAt)
		return s.conflict(err, "cache name", c.Name)
	})
	return out, err
}

// SubscribeCache implements store.Admin.
func (s *Store) SubscribeCache(ctx context.Context, projectID, cacheID string) error {
	return s.write(ctx, "subscribe cache", func(tx Tx) error {
		if err := mustExist(ctx, tx, "project", projectID); err != nil {
			return err
		}
		if err := mustExist(ctx, tx, "cache", cacheID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO project_cache (project_id, cache_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			projectID, cacheID)
		return err
	})
}

// UnsubscribeCache implements store.Admin.
func (s *Store) UnsubscribeCache(ctx context.Context, projectID, cacheID string) error {
	if !validID(projectID) || !validID(cacheID) {
		return fmt.Errorf("unsubscribe cache: %w", store.ErrNotFound)
	}
	return s.write(ctx, "unsubscribe cache", func(tx Tx) error {
		n, err := tx.Exec(ctx, `DELETE FROM project_cache WHERE project_id = $1 AND cache_id = $2`, projectID, cacheID)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return err
	})
}

// CreateTeam implements store.Admin.
func (s *Store) CreateTeam(ctx context.Context, name string) (store.Team, error) {
	if strings.TrimSpace(name) == "" {
		return store.Team{}, fmt.Errorf("create team: name required: %w", store.ErrInvalid)
	}
	out := store.Team{ID: newID(), Name: name, CreatedAt: s.clock()}
	err := s.write(ctx, "create team", func(tx Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO team (id, name, created_at) VALUES ($1, $2, $3)`, out.ID, out.Name, out.CreatedAt)
		return s.conflict(err, "team name", name)
	})
	return out, err
}

// SetTeamGrant implements store.Admin.
func (s *Store) SetTeamGrant(ctx context.Context, g store.TeamGrant) error {
	return s.write(ctx, "set team grant", func(tx Tx) error {
		if err := mustExist(ctx, tx, "team", g.TeamID); err != nil {
			return err
		}
		if err := mustExist(ctx, tx, "project", g.ProjectID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO team_grant (team_id, project_id, workers) VALUES ($1, $2, $3)
			ON CONFLICT (team_id, project_id) DO UPDATE SET workers = excluded.workers`, g.TeamID, g.ProjectID, g.Workers)
		return err
	})
}

// CreateAPIKey implements store.Admin.
func (s *Store) CreateAPIKey(ctx context.Context, k store.NewAPIKey) (store.APIKey, error) {
	var out store.APIKey
	err := s.write(ctx, "create api key", func(tx Tx) error {
		var err error
		out, err = s.insertAPIKey(ctx, tx, k)
		return err
	})
	return out, err
}

// BootstrapAPIKey implements store.Admin.
func (s *Store) BootstrapAPIKey(ctx context.Context, k store.NewAPIKey) (store.APIKey, error) {
	var out store.APIKey
	err := s.write(ctx, "bootstrap api key", func(tx Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM api_key`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return store.ErrAlreadyBootstrapped
		}
		var err error
		out, err = s.insertAPIKey(ctx, tx, k)
		return err
	})
	return out, err
}

func (s *Store) insertAPIKey(ctx context.Context, tx Tx, k store.NewAPIKey) (store.APIKey, error) {
	if k.KeyHash == "" || k.Owner == "" {
		return store.APIKey{}, fmt.Errorf("owner and key hash required: %w", store.ErrInvalid)
	}
	if k.CacheID != "" {
		if err := mustExist(ctx, tx, "cache", k.CacheID); err != nil {
			return store.APIKey{}, err
		}
	}
	out := store.APIKey{ID: newID(), Owner: k.Owner, KeyHash: k.KeyHash, CacheID: k.CacheID, CreatedAt: s.clock()}
	_, err := tx.Exec(ctx, `INSERT INTO api_key (id, owner, key_hash, cache_id, created_at) VALUES ($1, $2, $3, $4, $5)`,
		out.ID, out.Owner, out.KeyHash, nilIfEmptyString(out.CacheID), out.CreatedAt)
	return out, s.conflict(err, "api key", "(hash)")
}

// RevokeAPIKey implements store.Admin.
func (s *Store) RevokeAPIKey(ctx context.Context, id string) error {
	if !validID(id) {
		return fmt.Errorf("revoke api key %q: %w", id, store.ErrNotFound)
	}
	return s.write(ctx, "revoke api key", func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE api_key SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, s.clock())
		if err == nil && n == 0 {
			err = fmt.Errorf("api key %q: %w", id, store.ErrNotFound)
		}
		return err
	})
}

// mustExist returns ErrNotFound unless table has a row with this id. table is a constant.
func mustExist(ctx context.Context, tx Tx, table, id string) error {
	if !validID(id) {
		return fmt.Errorf("%s %q: %w", table, id, store.ErrNotFound)
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM `+table+` WHERE id = $1`, id).Scan(&one)
	return notFound(err, table, id)
}

// conflict maps a unique violation to store.ErrConflict.
func (s *Store) conflict(err error, what, value string) error {
	if err != nil && s.db.IsUniqueViolation(err) {
		return fmt.Errorf("%s %q: %w", what, value, store.ErrConflict)
	}
	return err
}

func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

func nilIfEmptyString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
