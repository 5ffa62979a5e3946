package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
	"github.com/google/uuid"
)

// resolveProject finds a project by ID (a UUID) or by name.
func (a *api) resolveProject(ctx context.Context, ref string) (store.Project, error) {
	return resolveRef(ctx, "project", ref, a.store.GetProject, a.store.ProjectByName)
}

// resolveCache finds a cache by ID (a UUID) or by name.
func (a *api) resolveCache(ctx context.Context, ref string) (store.Cache, error) {
	return resolveRef(ctx, "cache", ref, a.store.GetCache, a.store.CacheByName)
}

// resolveRef looks ref up with byID when it is a UUID, else with byName; names are never
// UUIDs (checkName), so the two cannot be confused. A miss is a 404 naming what.
func resolveRef[T any](ctx context.Context, what, ref string, byID, byName func(context.Context, string) (T, error)) (T, error) {
	lookup := byName
	if uuid.Validate(ref) == nil {
		lookup = byID
	}
	v, err := lookup(ctx, ref)
	if errors.Is(err, store.ErrNotFound) {
		return v, notFound("%s %q not found", what, ref)
	}
	return v, err
}

func (a *api) listProjects(w http.ResponseWriter, r *http.Request) error {
	ps, err := a.store.ListProjects(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ProjectList{Projects: mapSlice(ps, projectOf)})
	return nil
}

func (a *api) createProject(w http.ResponseWriter, r *http.Request) error {
	var req CreateProjectRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	if err := firstError(checkName("project", req.Name), checkRepoURL(req.RepoURL),
		checkBranch(req.Branch), checkWildcards(req.Wildcards)); err != nil {
		return err
	}
	p, err := a.store.CreateProject(r.Context(), store.NewProject{Name: req.Name, RepoURL: req.RepoURL,
		Branch: req.Branch, Wildcards: req.Wildcards, ForceEvaluation: req.ForceEvaluation})
	if errors.Is(err, store.ErrConflict) {
		return conflict(CodeConflict, "a project named %q already exists", req.Name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, projectOf(p))
	return nil
}

func (a *api) showProject(w http.ResponseWriter, r *http.Request) error {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	out := projectOf(p)
	if out.Caches, err = a.cacheNamesOf(r.Context(), p.ID); err != nil {
		return err
	}
	if out.Triggers, err = a.triggersOf(r.Context(), p.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// cacheNamesOf lists the names of the caches a project subscribes to.
func (a *api) cacheNamesOf(ctx context.Context, projectID string) ([]string, error) {
	ids, err := a.store.CachesOfProjects(ctx, []string{projectID})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		c, err := a.store.GetCache(ctx, id)
		if err != nil {
			return nil, err
		}
		names = append(names, c.Name)
	}
	return names, nil
}

func (a *api) subscribe(w http.ResponseWriter, r *http.Request) error {
	p, c, err := a.projectAndCache(r)
	if err != nil {
		return err
	}
	if err := a.store.SubscribeCache(r.Context(), p.ID, c.ID); err != nil {
		return err
	}
	if err := a.projectWorkersChanged(r.Context(), p.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *api) unsubscribe(w http.ResponseWriter, r *http.Request) error {
	p, c, err := a.projectAndCache(r)
	if err != nil {
		return err
	}
	err = a.store.UnsubscribeCache(r.Context(), p.ID, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("project %q is not subscribed to cache %q", p.Name, c.Name)
	}
	if err != nil {
		return err
	}
	if err := a.projectWorkersChanged(r.Context(), p.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *api) projectAndCache(r *http.Request) (store.Project, store.Cache, error) {
	p, err := a.resolveProject(r.Context(), r.PathValue("project"))
	if err != nil {
		return p, store.Cache{}, err
	}
	c, err := a.resolveCache(r.Context(), r.PathValue("cache"))
	return p, c, err
}

// listCaches lists every cache, or only its own for a pinned key.
func (a *api) listCaches(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.store.ListCaches(r.Context())
	if err != nil {
		return err
	}
	out := CacheList{Caches: []Cache{}}
	for _, c := range cs {
		if mayReadCache(r.Context(), c.ID) {
			out.Caches = append(out.Caches, a.cacheView(c))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (a *api) createCache(w http.ResponseWriter, r *http.Request) error {
	var req CreateCacheRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	if err := checkName("cache", req.Name); err != nil {
		return err
	}
	sealed, err := a.newCacheKey(req.Name)
	if err != nil {
		return fmt.Errorf("making the cache's signing key: %w", err)
	}
	c, err := a.store.CreateCache(r.Context(), store.NewCache{Name: req.Name, Public: req.Public, SigningKeyEnc: sealed})
	if errors.Is(err, store.ErrConflict) {
		return conflict(CodeConflict, "a cache named %q already exists", req.Name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a.cacheView(c))
	return nil
}

func (a *api) showCache(w http.ResponseWriter, r *http.Request) error {
	c, err := a.readableCache(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a.cacheView(c))
	return nil
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
