package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

type keyContext struct{}

// callerKey is the authenticated API key of the request.
func callerKey(ctx context.Context) store.APIKey {
	k, _ := ctx.Value(keyContext{}).(store.APIKey)
	return k
}

// authenticate admits requests with an active API key and logs every request (route,
// status, duration, key ID; never the Authorization header).
func (a *api) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := a.now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		key, err := a.lookupKey(r)
		if err != nil {
			rec.Header().Set("WWW-Authenticate", `Bearer realm="gradient"`)
			a.fail(rec, r, err)
		} else {
			next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), keyContext{}, key)))
		}
		a.log.LogAttrs(r.Context(), levelFor(rec.status), "api request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rec.status),
			slog.Duration("duration", a.now().Sub(start)), slog.String("key_id", key.ID))
	})
}

func (a *api) lookupKey(r *http.Request) (store.APIKey, error) {
	header := r.Header.Get("Authorization")
	if k, ok := a.fromSessionOrCaller(r); ok && header == "" {
		return k, nil
	}
	if header == "" {
		return store.APIKey{}, unauthorized("an API key is required: Authorization: GRAD<key>")
	}
	hash, ok := peertoken.APIKeyHash(header)
	if !ok {
		return store.APIKey{}, unauthorized("malformed Authorization header: want GRAD<key> or Bearer GRAD<key>")
	}
	key, err := a.store.LookupAPIKey(r.Context(), hash)
	if errors.Is(err, store.ErrNotFound) {
		return store.APIKey{}, unauthorized("unknown or revoked API key")
	}
	if err != nil {
		return store.APIKey{}, fmt.Errorf("look up api key: %w", err)
	}
	return key, nil
}

// authorize applies a route's scope: a key pinned to a cache may only use cache-read routes
// (whose handlers then check the cache itself).
func (a *api) authorize(r *http.Request, s scope) error {
	if allows(callerKey(r.Context()), s) {
		return nil
	}
	return forbidden("this API key is pinned to one cache and may only read it")
}

// allows is the scope rule: a key pinned to a cache may only use cache-read routes.
func allows(key store.APIKey, s scope) bool { return key.CacheID == "" || s == scopeCacheRead }

// mayReadCache reports whether the caller may read the cache.
func mayReadCache(ctx context.Context, cacheID string) bool {
	return MayReadCache(callerKey(ctx), cacheID)
}

// statusRecorder remembers the status written, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
