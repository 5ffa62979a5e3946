package relational

import (
	"context"
	"errors"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// CachedPathByHash implements store.CachedPaths.
func (s *Store) CachedPathByHash(ctx context.Context, cacheID, storeHash string) (store.CachedPath, error) {
	return s.cachedPathInCache(ctx, "cached path by hash", cacheID, "cp.store_hash", storeHash)
}

// CachedPathByFileHash implements store.CachedPaths.
func (s *Store) CachedPathByFileHash(ctx context.Context, cacheID, fileHash string) (store.CachedPath, error) {
	return s.cachedPathInCache(ctx, "cached path by file hash", cacheID, "cp.file_hash", fileHash)
}

// cachedPathInCache reads the first fully stored row of cacheID whose column equals value,
// with cacheID's signature.
func (s *Store) cachedPathInCache(ctx context.Context, op, cacheID, column, value string) (store.CachedPath, error) {
	var out store.CachedPath
	if !validID(cacheID) || value == "" {
		return out, fmt.Errorf("%s: cache %q, %q: %w", op, cacheID, value, store.ErrNotFound)
	}
	err := s.read(ctx, op, func(tx Tx) error {
		var err error
		out, err = scanCachedPath(tx.QueryRow(ctx, `SELECT `+cachedPathColumns+` FROM cached_path cp
			JOIN cached_path_signature sg ON sg.cached_path_id = cp.id
			WHERE sg.cache_id = $1 AND `+column+` = $2 AND cp.file_hash IS NOT NULL
			ORDER BY cp.store_hash LIMIT 1`, cacheID, value))
		if errors.Is(err, ErrNoRows) {
			return fmt.Errorf("%q in cache %s: %w", value, cacheID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return addSignatures(ctx, tx, []string{cacheID}, map[string]*store.CachedPath{out.StoreHash: &out})
	})
	return out, err
}
