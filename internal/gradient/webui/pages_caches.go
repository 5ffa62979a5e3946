package webui

import (
	"net/http"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/api"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// cachePaths is how many of a cache's newest paths the page lists.
const cachePaths = 100

type cacheView struct {
	Name, URL, PublicKey string
	Public, More         bool
	Paths                []store.CachedPath
	Count                int
	NarBytes, FileBytes  int64
}

// cachesPage shows the caches the viewer may read (a pinned key: its own; signed out on a
// public server: the public ones), each with its nix.conf lines and newest paths.
func (u *UI) cachesPage(w http.ResponseWriter, r *http.Request, v viewer, _ api.LiveView) {
	if !v.signedIn && !u.cfg.Public {
		u.refuse(w, r, v)
		return
	}
	cs, err := u.cfg.Store.ListCaches(r.Context())
	if err != nil {
		u.failErr(w, r, v, err)
		return
	}
	var views []cacheView
	for _, c := range cs {
		if (v.signedIn && !api.MayReadCache(v.key, c.ID)) || (!v.signedIn && !c.Public) {
			continue
		}
		cv, err := u.cacheView(r, c)
		if err != nil {
			u.failErr(w, r, v, err)
			return
		}
		views = append(views, cv)
	}
	u.render(w, r, v, http.StatusOK, "caches", views)
}

func (u *UI) cacheView(r *http.Request, c store.Cache) (cacheView, error) {
	cv := cacheView{Name: c.Name, Public: c.Public, URL: strings.TrimRight(u.cfg.CacheURL, "/") + "/cache/" + c.Name}
	if u.cfg.CacheKeys != nil && len(c.SigningKeyEnc) > 0 {
		if pk, err := u.cfg.CacheKeys.PublicKey(c.SigningKeyEnc); err == nil {
			cv.PublicKey = pk
		}
	}
	paths, err := u.cfg.Store.ListCachedPaths(r.Context(), c.ID, cachePaths)
	if err != nil {
		return cv, err
	}
	cv.Paths, cv.Count, cv.More = paths, len(paths), len(paths) == cachePaths
	for _, p := range paths {
		cv.NarBytes += p.NarSize
		cv.FileBytes += p.FileSize
	}
	return cv, nil
}
