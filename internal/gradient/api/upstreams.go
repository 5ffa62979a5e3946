package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/buildfleet/buildfleet/internal/gradient/upstream"
)

// Upstream is an upstream binary cache a cache names, with the key trusted there
// (gradient-server §14).
type Upstream struct {
	URL       string    `json:"url"`
	PublicKey string    `json:"public_key"`
	CreatedAt time.Time `json:"created_at"`
}

// UpstreamList is GET /caches/{cache}/upstreams.
type UpstreamList struct {
	Cache     string     `json:"cache"`
	Upstreams []Upstream `json:"upstreams"`
}

// AddUpstreamRequest is PUT /caches/{cache}/upstreams: adds the upstream, or replaces the
// key of one the cache names already.
type AddUpstreamRequest struct {
	URL       string `json:"url"`
	PublicKey string `json:"public_key"`
}

// listUpstreams is GET /caches/{cache}/upstreams, in the order they are asked.
func (a *api) listUpstreams(w http.ResponseWriter, r *http.Request) error {
	c, err := a.resolveCache(r.Context(), r.PathValue("cache"))
	if err != nil {
		return err
	}
	ups, err := a.store.ListCacheUpstreams(r.Context(), []string{c.ID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, UpstreamList{Cache: c.Name, Upstreams: mapSlice(ups, upstreamOf)})
	return nil
}

// addUpstream is PUT /caches/{cache}/upstreams: the URL must be http, https or file and
// the key Nix's "name:base64" public key.
func (a *api) addUpstream(w http.ResponseWriter, r *http.Request) error {
	var req AddUpstreamRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	c, err := a.resolveCache(r.Context(), r.PathValue("cache"))
	if err != nil {
		return err
	}
	u, err := upstream.CheckURL(req.URL)
	if err != nil {
		return badRequest("%v", err)
	}
	key, err := upstream.CheckKey(req.PublicKey)
	if err != nil {
		return badRequest("%v", err)
	}
	if err := a.store.AddCacheUpstream(r.Context(), store.CacheUpstream{CacheID: c.ID, URL: u, PublicKey: key}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Upstream{URL: u, PublicKey: key})
	return nil
}

// removeUpstream is DELETE /caches/{cache}/upstreams?url=URL.
func (a *api) removeUpstream(w http.ResponseWriter, r *http.Request) error {
	c, err := a.resolveCache(r.Context(), r.PathValue("cache"))
	if err != nil {
		return err
	}
	raw := r.URL.Query().Get("url")
	u, err := upstream.CheckURL(raw)
	if err != nil {
		u = raw // a URL stored before the checks changed can still be removed
	}
	err = a.store.RemoveCacheUpstream(r.Context(), c.ID, u)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("cache %q has no upstream %q", c.Name, raw)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func upstreamOf(u store.CacheUpstream) Upstream {
	return Upstream{URL: u.URL, PublicKey: u.PublicKey, CreatedAt: u.CreatedAt}
}
