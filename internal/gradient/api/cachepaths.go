package api

import (
	"errors"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// listCachePaths is GET /caches/{cache}/paths: what a cache holds, newest first.
func (a *api) listCachePaths(w http.ResponseWriter, r *http.Request) error {
	c, err := a.readableCache(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	paths, err := a.store.ListCachedPaths(r.Context(), c.ID, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, CachePathList{Cache: c.Name, Paths: mapSlice(paths, cachedPathOf)})
	return nil
}

// readableCache resolves {cache} for a caller that may read it. A key pinned to one cache
// learns nothing about other caches, not even whether they exist.
func (a *api) readableCache(r *http.Request) (store.Cache, error) {
	c, err := a.resolveCache(r.Context(), r.PathValue("cache"))
	var he *httpError
	unknown := errors.As(err, &he) && he.status == http.StatusNotFound
	if err != nil && !unknown {
		return store.Cache{}, err
	}
	if callerKey(r.Context()).CacheID != "" && (unknown || !mayReadCache(r.Context(), c.ID)) {
		return store.Cache{}, forbidden("this API key may only read its own cache")
	}
	return c, err
}

func cachedPathOf(p store.CachedPath) CachedPath {
	return CachedPath{StorePath: p.StorePath, NarHash: p.NarHash, NarSize: p.NarSize, FileHash: p.FileHash,
		FileSize: p.FileSize, References: nonNil(p.References), Deriver: p.Deriver, CreatedAt: p.CreatedAt}
}
