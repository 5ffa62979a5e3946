package api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/buildfleet/buildfleet/internal/gradient/peertoken"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

func (a *api) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := a.store.ListAPIKeys(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, APIKeyList{APIKeys: mapSlice(keys, apiKeyOf)})
	return nil
}

// createAPIKey mints a key, stores its SHA-256 and answers with the key this one time.
func (a *api) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	var req CreateAPIKeyRequest
	if err := decodeBody(w, r, &req); err != nil {
		return err
	}
	if err := checkText("owner", req.Owner, true, maxTextLen); err != nil {
		return err
	}
	nk := store.NewAPIKey{Owner: req.Owner}
	if req.Cache != "" {
		c, err := a.resolveCache(r.Context(), req.Cache)
		if err != nil {
			return err
		}
		nk.CacheID = c.ID
	}
	key, hash, err := peertoken.MintAPIKey(a.rand)
	if err != nil {
		return err
	}
	nk.KeyHash = hash
	k, err := a.store.CreateAPIKey(r.Context(), nk)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, CreateAPIKeyResponse{APIKey: apiKeyOf(k), Key: key})
	return nil
}

// revokeAPIKey revokes a key, but never the last active unpinned one: bootstrap works only
// on an empty key table, so that would lock every administrator out for good.
func (a *api) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	keys, err := a.store.ListAPIKeys(r.Context())
	if err != nil {
		return err
	}
	isAdmin := func(k store.APIKey) bool { return k.RevokedAt.IsZero() && k.CacheID == "" }
	target := slices.IndexFunc(keys, func(k store.APIKey) bool { return k.ID == id })
	if target >= 0 && isAdmin(keys[target]) && countFunc(keys, isAdmin) == 1 {
		return conflict(CodeLastAdminKey, "refusing to revoke the last active admin API key; create another first")
	}
	err = a.store.RevokeAPIKey(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("API key %q not found or already revoked", id)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}
