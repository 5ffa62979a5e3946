package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// SessionKey finds the API key a web UI session cookie stands for (gradient-server §17);
// ok false when the request carries no live session.
type SessionKey func(r *http.Request) (key store.APIKey, ok bool)

type callerContext struct{}

// WithCaller is ctx carrying an already authenticated key: the web UI hands its actions to
// this handler in process, after its own session and CSRF checks, so a key may do there
// exactly what it may do here.
func WithCaller(ctx context.Context, key store.APIKey) context.Context {
	return context.WithValue(ctx, callerContext{}, key)
}

// MayAdminister reports whether a key may use the routes that are not cache reads: every
// key not pinned to one cache.
func MayAdminister(key store.APIKey) bool { return allows(key, scopeAdmin) }

// MayReadCache reports whether a key may read the cache.
func MayReadCache(key store.APIKey, cacheID string) bool {
	return key.CacheID == "" || key.CacheID == cacheID
}

// fromSessionOrCaller is the key of an in-process caller, or of a session cookie on a safe
// method: a cookie rides along on any request the browser makes, so it never authorizes a
// change here (the UI's forms carry a CSRF token and come in through WithCaller).
func (a *api) fromSessionOrCaller(r *http.Request) (store.APIKey, bool) {
	if k, ok := r.Context().Value(callerContext{}).(store.APIKey); ok {
		return k, true
	}
	if a.session == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return store.APIKey{}, false
	}
	return a.session(r)
}

// retryBuild queues a build that failed for good again, then hands the effects on (the
// dispatcher offers it at once). The body, if any, is an empty object.
func (a *api) retryBuild(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	if err := decodeOptionalBody(w, r, &req); err != nil {
		return err
	}
	b, err := a.getBuild(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	fx, err := a.store.RetryBuild(r.Context(), b.ID)
	if errors.Is(err, store.ErrConflict) {
		return conflict(CodeConflict, "build %s has not failed for good (%s)", b.ID, b.Status)
	}
	if err != nil {
		return err
	}
	a.apply(r.Context(), fx)
	if b, err = a.getBuild(r.Context(), b.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, buildOf(b))
	return nil
}
