package relational

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// maxLookupPaths is gradient-protocol §7.2's cap on one CacheQuery.
const maxLookupPaths = 1000

// PutCachedPath implements store.CachedPaths.
func (s *Store) PutCachedPath(ctx context.Context, p store.CachedPath, cacheIDs []string) error {
	hash, err := store.StoreHash(p.StorePath)
	if err != nil || p.NarHash == "" || p.NarSize < 0 || p.FileSize < 0 {
		return fmt.Errorf("put cached path %q: store path, nar hash and sizes required: %w", p.StorePath, store.ErrInvalid)
	}
	return s.write(ctx, "put cached path", func(tx Tx) error {
		now := s.clock()
		var id string
		err := tx.QueryRow(ctx, `INSERT INTO cached_path (id, store_hash, store_path, nar_hash, nar_size, file_hash, file_size,
				path_references, deriver, ca, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (store_hash) DO UPDATE SET store_path = excluded.store_path, nar_hash = excluded.nar_hash,
				nar_size = excluded.nar_size, path_references = excluded.path_references, deriver = excluded.deriver,
				ca = excluded.ca, file_hash = COALESCE(excluded.file_hash, cached_path.file_hash),
				file_size = COALESCE(excluded.file_size, cached_path.file_size)
			RETURNING id`, newID(), hash, p.StorePath, p.NarHash, p.NarSize, nilIfEmptyString(p.FileHash),
			fileSize(p), encodeList(p.References), nilIfEmptyString(p.Deriver), nilIfEmptyString(p.CA), now).Scan(&id)
		if err != nil {
			return err
		}
		for _, cacheID := range cacheIDs {
			if err := mustExist(ctx, tx, "cache", cacheID); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO cached_path_signature (cached_path_id, cache_id) VALUES ($1, $2)
				ON CONFLICT DO NOTHING`, id, cacheID); err != nil {
				return err
			}
		}
		if p.FileHash == "" {
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE derivation_output SET cached_path_id = $1, is_cached = true WHERE path = $2`, id, p.StorePath)
		return err
	})
}

func fileSize(p store.CachedPath) any {
	if p.FileHash == "" {
		return nil
	}
	return p.FileSize
}

// SignCachedPath implements store.CachedPaths.
func (s *Store) SignCachedPath(ctx context.Context, storeHash, cacheID, signature string) error {
	if !validID(cacheID) {
		return fmt.Errorf("sign cached path: cache %q: %w", cacheID, store.ErrNotFound)
	}
	return s.write(ctx, "sign cached path", func(tx Tx) error {
		n, err := tx.Exec(ctx, `UPDATE cached_path_signature SET signature = $3
			WHERE cache_id = $2 AND cached_path_id = (SELECT id FROM cached_path WHERE store_hash = $1)`,
			storeHash, cacheID, signature)
		if err == nil && n == 0 {
			err = fmt.Errorf("path %s in cache %s: %w", storeHash, cacheID, store.ErrNotFound)
		}
		return err
	})
}

// LookupCachedPaths implements store.CachedPaths.
func (s *Store) LookupCachedPaths(ctx context.Context, cacheIDs, storePaths []string) (map[string]store.CachedPath, error) {
	if len(storePaths) > maxLookupPaths {
		return nil, fmt.Errorf("lookup cached paths: %d paths, at most %d: %w", len(storePaths), maxLookupPaths, store.ErrInvalid)
	}
	caches := slices.DeleteFunc(slices.Clone(cacheIDs), func(id string) bool { return !validID(id) })
	wanted := map[string][]string{} // store hash -> requested paths
	var hashes []string
	for _, p := range storePaths {
		if h, err := store.StoreHash(p); err == nil {
			if _, dup := wanted[h]; !dup {
				hashes = append(hashes, h)
			}
			wanted[h] = append(wanted[h], p)
		}
	}
	out := map[string]store.CachedPath{}
	if len(caches) == 0 || len(hashes) == 0 {
		return out, nil
	}
	err := s.read(ctx, "lookup cached paths", func(tx Tx) error {
		clear(out)
		found, err := visiblePaths(ctx, tx, caches, hashes)
		if err != nil {
			return err
		}
		if err := addSignatures(ctx, tx, caches, found); err != nil {
			return err
		}
		for h, cp := range found {
			for _, req := range wanted[h] {
				if path.Base(req) == path.Base(cp.StorePath) {
					out[req] = *cp
				}
			}
		}
		return nil
	})
	return out, err
}

// visiblePaths reads the fully stored rows among hashes that one of the caches holds.
func visiblePaths(ctx context.Context, tx Tx, caches, hashes []string) (map[string]*store.CachedPath, error) {
	found := map[string]*store.CachedPath{}
	for _, part := range chunks(hashes, inChunk) {
		args := append(stringArgs(caches), stringArgs(part)...)
		cps, err := queryAll(ctx, tx, scanCachedPath, `SELECT `+cachedPathColumns+` FROM cached_path cp
			WHERE cp.file_hash IS NOT NULL AND cp.store_hash IN (`+placeholders(len(caches)+1, len(part))+`)
				AND EXISTS (SELECT 1 FROM cached_path_signature sg WHERE sg.cached_path_id = cp.id
					AND sg.cache_id IN (`+placeholders(1, len(caches))+`))`, args...)
		if err != nil {
			return nil, err
		}
		for i := range cps {
			found[cps[i].StoreHash] = &cps[i]
		}
	}
	return found, nil
}

// ListCachedPaths implements store.Reads.
func (s *Store) ListCachedPaths(ctx context.Context, cacheID string, limit int) ([]store.CachedPath, error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, maxLookupPaths)
	if !validID(cacheID) {
		return nil, nil
	}
	return readAll(ctx, s, "list cached paths", scanCachedPath, `SELECT `+cachedPathColumns+` FROM cached_path cp
		JOIN cached_path_signature sg ON sg.cached_path_id = cp.id
		WHERE sg.cache_id = $1 AND cp.file_hash IS NOT NULL
		ORDER BY cp.created_at DESC, cp.store_path LIMIT $2`, cacheID, limit)
}

// cachedPathColumns are the columns scanCachedPath reads, from cached_path cp.
const cachedPathColumns = `cp.store_hash, cp.store_path, cp.nar_hash, cp.nar_size, cp.file_hash, cp.file_size,
	cp.path_references, COALESCE(cp.deriver, ''), COALESCE(cp.ca, ''), cp.created_at, cp.last_fetched_at`

func scanCachedPath(r Row) (store.CachedPath, error) {
	var cp store.CachedPath
	var refs string
	var created, fetched Timestamp
	if err := r.Scan(&cp.StoreHash, &cp.StorePath, &cp.NarHash, &cp.NarSize, &cp.FileHash, &cp.FileSize,
		&refs, &cp.Deriver, &cp.CA, &created, &fetched); err != nil {
		return cp, err
	}
	var err error
	cp.References, err = decodeList(refs)
	cp.CreatedAt, cp.LastFetchedAt = created.Time, fetched.Time
	return cp, err
}

func addSignatures(ctx context.Context, tx Tx, caches []string, found map[string]*store.CachedPath) error {
	hashes := make([]string, 0, len(found))
	for h := range found {
		hashes = append(hashes, h)
	}
	slices.Sort(hashes)
	for _, part := range chunks(hashes, inChunk) {
		args := append(stringArgs(caches), stringArgs(part)...)
		rows, err := tx.Query(ctx, `SELECT cp.store_hash, sg.cache_id, sg.signature FROM cached_path_signature sg
			JOIN cached_path cp ON cp.id = sg.cached_path_id
			WHERE sg.signature IS NOT NULL AND sg.cache_id IN (`+placeholders(1, len(caches))+`)
				AND cp.store_hash IN (`+placeholders(len(caches)+1, len(part))+`)
			ORDER BY cp.store_hash, sg.cache_id`, args...)
		if err != nil {
			return err
		}
		err = scanTriples(rows, func(h, cache, sig string) {
			found[h].Signatures = append(found[h].Signatures, store.Signature{CacheID: cache, Signature: sig})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func scanTriples(rows Rows, fn func(a, b, c string)) error {
	defer rows.Close()
	for rows.Next() {
		var a, b, c string
		if err := rows.Scan(&a, &b, &c); err != nil {
			return err
		}
		fn(a, b, c)
	}
	return rows.Err()
}

// CachesOfProjects implements store.CachedPaths.
func (s *Store) CachesOfProjects(ctx context.Context, projectIDs []string) ([]string, error) {
	ids := slices.DeleteFunc(slices.Clone(projectIDs), func(id string) bool { return !validID(id) })
	if len(ids) == 0 {
		return nil, nil
	}
	var out []string
	err := s.read(ctx, "caches of projects", func(tx Tx) error {
		var err error
		out, err = queryStrings(ctx, tx, `SELECT DISTINCT cache_id FROM project_cache
			WHERE project_id IN (`+placeholders(1, len(ids))+`) ORDER BY cache_id`, stringArgs(ids)...)
		return err
	})
	return out, err
}

// DemoteCachedPath implements store.CachedPaths; demoting an absent row is not an error.
func (s *Store) DemoteCachedPath(ctx context.Context, storeHash string) error {
	return s.write(ctx, "demote cached path", func(tx Tx) error {
		_, err := deleteCachedRows(ctx, tx, []string{storeHash})
		return err
	})
}

// deleteCachedRows deletes the rows of the store hashes (their signatures cascade), clears
// is_cached on the outputs that pointed at them, and returns the hashes that existed.
func deleteCachedRows(ctx context.Context, tx Tx, hashes []string) ([]string, error) {
	var out []string
	for _, part := range chunks(hashes, inChunk) {
		in := placeholders(1, len(part))
		if _, err := tx.Exec(ctx, `UPDATE derivation_output SET is_cached = false, cached_path_id = NULL
			WHERE cached_path_id IN (SELECT id FROM cached_path WHERE store_hash IN (`+in+`))`, stringArgs(part)...); err != nil {
			return nil, err
		}
		gone, err := queryStrings(ctx, tx, `DELETE FROM cached_path WHERE store_hash IN (`+in+`) RETURNING store_hash`,
			stringArgs(part)...)
		if err != nil {
			return nil, err
		}
		out = append(out, gone...)
	}
	return out, nil
}

// MarkFetched implements store.CachedPaths.
func (s *Store) MarkFetched(ctx context.Context, storeHash string) error {
	return s.write(ctx, "mark fetched", func(tx Tx) error {
		_, err := tx.Exec(ctx, `UPDATE cached_path SET last_fetched_at = $2 WHERE store_hash = $1`, storeHash, s.clock())
		return err
	})
}
