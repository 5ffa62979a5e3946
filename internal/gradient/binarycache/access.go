package binarycache

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// Access is an admitted request: the cache it may read and who asked.
type Access struct {
	Cache store.Cache
	// KeyID is the API key's ID, "" for an anonymous caller.
	KeyID string
}

// Anonymous reports whether the caller presented no key (a /cache/{cache}/proto session
// then counts against the per-IP limit).
func (a Access) Anonymous() bool { return a.KeyID == "" }

// AccessError is a refused request; Status is the HTTP status to answer.
type AccessError struct {
	Status int
	Reason string
}

func (e *AccessError) Error() string { return fmt.Sprintf("binarycache: %d %s", e.Status, e.Reason) }

func refuse(status int, reason string) *AccessError {
	return &AccessError{Status: status, Reason: reason}
}

// Admit decides whether the request may read the named cache (see the package doc). A
// store failure is returned as is (answer 500); a refusal is an *AccessError.
func (h *Handler) Admit(r *http.Request, cacheName string) (Access, error) {
	key, presented, err := h.presentedKey(r)
	if err != nil {
		return Access{}, err
	}
	c, err := h.cfg.Store.CacheByName(r.Context(), cacheName)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Access{}, fmt.Errorf("binarycache: reading cache %q: %w", cacheName, err)
	}
	switch {
	case !presented && (!found || !c.Public || h.cfg.DenyAnonymous):
		return Access{}, refuse(http.StatusUnauthorized, "an API key is required: Authorization: GRAD<key>")
	case key.CacheID != "" && (!found || key.CacheID != c.ID):
		// A pinned key learns nothing about other caches, not even whether they exist.
		return Access{}, refuse(http.StatusForbidden, "this API key may only read its own cache")
	case !found:
		return Access{}, refuse(http.StatusNotFound, "no such cache")
	}
	return Access{Cache: c, KeyID: key.ID}, nil
}

// presentedKey reads and checks the request's API key: GRAD<key>, Bearer GRAD<key>, or
// HTTP Basic with GRAD<key> as the password (Nix's netrc). presented is false when the
// request carries no Authorization at all.
func (h *Handler) presentedKey(r *http.Request) (key store.APIKey, presented bool, err error) {
	header := r.Header.Get("Authorization")
	if header == "" {
		return store.APIKey{}, false, nil
	}
	if _, password, ok := r.BasicAuth(); ok {
		header = password
	}
	hash, ok := peertoken.APIKeyHash(header)
	if !ok {
		return store.APIKey{}, true, refuse(http.StatusUnauthorized, "malformed Authorization: want GRAD<key>, Bearer GRAD<key> or Basic with the key as password")
	}
	key, err = h.cfg.Store.LookupAPIKey(r.Context(), hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.APIKey{}, true, refuse(http.StatusUnauthorized, "unknown or revoked API key")
	case err != nil:
		return store.APIKey{}, true, fmt.Errorf("binarycache: looking up the API key: %w", err)
	}
	return key, true, nil
}

// WriteRefusal answers an Admit error: the refusal's status, or 500 for a store failure.
func (h *Handler) WriteRefusal(w http.ResponseWriter, r *http.Request, err error) {
	var ae *AccessError
	if !errors.As(err, &ae) {
		h.log.Warn("binary cache request failed", "path", r.URL.Path, "err", err)
		http.Error(w, "the cache state could not be read", http.StatusInternalServerError)
		return
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="gradient"`)
	}
	http.Error(w, ae.Reason, ae.Status)
}

// demote deletes a row whose object is gone or damaged, so it answers 404 from now on and
// the producing worker uploads the path again.
func (h *Handler) demote(ctx context.Context, storeHash, why string) {
	h.log.Warn("binary cache: demoting a path whose stored object is bad", "store_hash", storeHash, "why", why)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeCallTimeout)
	defer cancel()
	if err := h.cfg.Store.DemoteCachedPath(ctx, storeHash); err != nil {
		h.log.Warn("binary cache: demoting failed", "store_hash", storeHash, "err", err)
	}
}
