package relational

import (
	"context"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

const projectColumns = `id, name, repo_url, branch, wildcards, ssh_key_enc IS NOT NULL, force_evaluation, created_at`

func scanProject(r Row) (store.Project, error) {
	var p store.Project
	var wildcards string
	var created Timestamp
	if err := r.Scan(&p.ID, &p.Name, &p.RepoURL, &p.Branch, &wildcards, &p.HasSSHKey, &p.ForceEvaluation, &created); err != nil {
		return p, err
	}
	p.CreatedAt = created.Time
	var err error
	p.Wildcards, err = decodeList(wildcards)
	return p, err
}

func getProject(ctx context.Context, tx Tx, id string) (store.Project, error) {
	if !validID(id) {
		return store.Project{}, notFound(ErrNoRows, "project", id)
	}
	p, err := scanProject(tx.QueryRow(ctx, `SELECT `+projectColumns+` FROM project WHERE id = $1`, id))
	return p, notFound(err, "project", id)
}

// GetProject implements store.Reads.
func (s *Store) GetProject(ctx context.Context, id string) (store.Project, error) {
	var out store.Project
	err := s.read(ctx, "get project", func(tx Tx) error {
		var err error
		out, err = getProject(ctx, tx, id)
		return err
	})
	return out, err
}

// ProjectByName implements store.Reads.
func (s *Store) ProjectByName(ctx context.Context, name string) (store.Project, error) {
	var out store.Project
	err := s.read(ctx, "project by name", func(tx Tx) error {
		var err error
		out, err = scanProject(tx.QueryRow(ctx, `SELECT `+projectColumns+` FROM project WHERE name = $1`, name))
		return notFound(err, "project", name)
	})
	return out, err
}

// ListProjects implements store.Reads.
func (s *Store) ListProjects(ctx context.Context) ([]store.Project, error) {
	return readAll(ctx, s, "list projects", scanProject, `SELECT `+projectColumns+` FROM project ORDER BY name`)
}

const cacheColumns = `id, name, public, signing_key_enc, created_at`

func scanCache(r Row) (store.Cache, error) {
	var c store.Cache
	var created Timestamp
	err := r.Scan(&c.ID, &c.Name, &c.Public, &c.SigningKeyEnc, &created)
	c.CreatedAt = created.Time
	return c, err
}

// GetCache implements store.Reads.
func (s *Store) GetCache(ctx context.Context, id string) (store.Cache, error) {
	if !validID(id) {
		return store.Cache{}, notFound(ErrNoRows, "cache", id)
	}
	var out store.Cache
	err := s.read(ctx, "get cache", func(tx Tx) error {
		var err error
		out, err = scanCache(tx.QueryRow(ctx, `SELECT `+cacheColumns+` FROM cache WHERE id = $1`, id))
		return notFound(err, "cache", id)
	})
	return out, err
}

// CacheByName implements store.Reads.
func (s *Store) CacheByName(ctx context.Context, name string) (store.Cache, error) {
	var out store.Cache
	err := s.read(ctx, "cache by name", func(tx Tx) error {
		var err error
		out, err = scanCache(tx.QueryRow(ctx, `SELECT `+cacheColumns+` FROM cache WHERE name = $1`, name))
		return notFound(err, "cache", name)
	})
	return out, err
}

// ListCaches implements store.Reads.
func (s *Store) ListCaches(ctx context.Context) ([]store.Cache, error) {
	return readAll(ctx, s, "list caches", scanCache, `SELECT `+cacheColumns+` FROM cache ORDER BY name`)
}

const apiKeyColumns = `id, owner, key_hash, COALESCE(CAST(cache_id AS TEXT), ''), created_at, revoked_at`

func scanAPIKey(r Row) (store.APIKey, error) {
	var k store.APIKey
	var created, revoked Timestamp
	err := r.Scan(&k.ID, &k.Owner, &k.KeyHash, &k.CacheID, &created, &revoked)
	k.CreatedAt, k.RevokedAt = created.Time, revoked.Time
	return k, err
}

// LookupAPIKey implements store.Reads.
func (s *Store) LookupAPIKey(ctx context.Context, keyHash string) (store.APIKey, error) {
	var out store.APIKey
	err := s.read(ctx, "lookup api key", func(tx Tx) error {
		var err error
		out, err = scanAPIKey(tx.QueryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_key
			WHERE key_hash = $1 AND revoked_at IS NULL`, keyHash))
		return notFound(err, "api key", "(hash)")
	})
	return out, err
}

// ListAPIKeys implements store.Reads.
func (s *Store) ListAPIKeys(ctx context.Context) ([]store.APIKey, error) {
	return readAll(ctx, s, "list api keys", scanAPIKey, `SELECT `+apiKeyColumns+` FROM api_key ORDER BY created_at, id`)
}
