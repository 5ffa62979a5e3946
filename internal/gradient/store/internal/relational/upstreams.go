package relational

import (
	"context"
	"fmt"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// AddCacheUpstream implements store.Upstreams.
func (s *Store) AddCacheUpstream(ctx context.Context, u store.CacheUpstream) error {
	if u.URL == "" || u.PublicKey == "" {
		return fmt.Errorf("add cache upstream: url and key required: %w", store.ErrInvalid)
	}
	return s.write(ctx, "add cache upstream", func(tx Tx) error {
		if err := mustExist(ctx, tx, "cache", u.CacheID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO cache_upstream (cache_id, url, public_key, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (cache_id, url) DO UPDATE SET public_key = excluded.public_key`,
			u.CacheID, u.URL, u.PublicKey, s.clock())
		return err
	})
}

// RemoveCacheUpstream implements store.Upstreams.
func (s *Store) RemoveCacheUpstream(ctx context.Context, cacheID, url string) error {
	if !validID(cacheID) {
		return fmt.Errorf("remove cache upstream: cache %q: %w", cacheID, store.ErrNotFound)
	}
	return s.write(ctx, "remove cache upstream", func(tx Tx) error {
		n, err := tx.Exec(ctx, `DELETE FROM cache_upstream WHERE cache_id = $1 AND url = $2`, cacheID, url)
		if err == nil && n == 0 {
			err = fmt.Errorf("upstream %q of cache %s: %w", url, cacheID, store.ErrNotFound)
		}
		return err
	})
}

// ListCacheUpstreams implements store.Upstreams.
func (s *Store) ListCacheUpstreams(ctx context.Context, cacheIDs []string) ([]store.CacheUpstream, error) {
	caches := slices.DeleteFunc(slices.Clone(cacheIDs), func(id string) bool { return !validID(id) })
	if len(caches) == 0 {
		return nil, nil
	}
	return readAll(ctx, s, "list cache upstreams", func(r Row) (store.CacheUpstream, error) {
		var u store.CacheUpstream
		var created Timestamp
		err := r.Scan(&u.CacheID, &u.URL, &u.PublicKey, &created)
		u.CreatedAt = created.Time
		return u, err
	}, `SELECT cache_id, url, public_key, created_at FROM cache_upstream
		WHERE cache_id IN (`+placeholders(1, len(caches))+`) ORDER BY cache_id, created_at, url`, stringArgs(caches)...)
}
