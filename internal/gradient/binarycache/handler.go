package binarycache

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
	"github.com/buildfleet/buildfleet/internal/gradient/store"
)

// storeCallTimeout bounds the store calls of one request.
const storeCallTimeout = 30 * time.Second

// Store is what the binary cache reads and writes (store.Store satisfies it).
type Store interface {
	CacheByName(ctx context.Context, name string) (store.Cache, error)
	LookupAPIKey(ctx context.Context, keyHash string) (store.APIKey, error)
	CachedPathByHash(ctx context.Context, cacheID, storeHash string) (store.CachedPath, error)
	CachedPathByFileHash(ctx context.Context, cacheID, fileHash string) (store.CachedPath, error)
	SignCachedPath(ctx context.Context, storeHash, cacheID, signature string) error
	DemoteCachedPath(ctx context.Context, storeHash string) error
	MarkFetched(ctx context.Context, storeHash string) error
}

// Config configures a Handler. Store and NARs are required.
type Config struct {
	Store Store
	NARs  *narstore.Store
	// Keys opens the caches' signing keys; nil (or a cache without a key) serves
	// narinfos unsigned, which Nix accepts only from a trusted or unverified store.
	Keys *Keys
	// DenyAnonymous is --anonymous-cache=false: public caches need a key too.
	DenyAnonymous bool
	Logger        *slog.Logger
}

// Handler serves the binary cache routes and admits cache sessions.
type Handler struct {
	cfg Config
	log *slog.Logger
}

// New returns a handler; mount it with Register.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg, log: cfg.Logger}
}

// Register mounts GET /cache/{cache}/nix-cache-info, /cache/{cache}/{hash}.narinfo and
// /cache/{cache}/nar/{file_hash}.nar.zst on mux (GET patterns answer HEAD too). The
// server's /cache/{cache}/proto is more specific and stays its own.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /cache/{cache}/nix-cache-info", h.serveCacheInfo)
	mux.HandleFunc("GET /cache/{cache}/{file}", h.serveNarInfo)
	mux.HandleFunc("GET /cache/{cache}/nar/{file}", h.serveNAR)
}

func (h *Handler) serveCacheInfo(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Admit(r, r.PathValue("cache")); err != nil {
		h.WriteRefusal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/x-nix-cache-info")
	w.Write([]byte(cacheInfo()))
}

// serveNarInfo answers {hash}.narinfo: 404 unless the cache holds the path with its object
// stored whole (a row whose object is gone or the wrong size is demoted on the spot).
func (h *Handler) serveNarInfo(w http.ResponseWriter, r *http.Request) {
	hash, ok := strings.CutSuffix(r.PathValue("file"), ".narinfo")
	if !ok || len(hash) != 32 || !nixhash.IsBase32(hash) {
		http.NotFound(w, r)
		return
	}
	acc, err := h.Admit(r, r.PathValue("cache"))
	if err != nil {
		h.WriteRefusal(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeCallTimeout)
	defer cancel()
	row, err := h.cfg.Store.CachedPathByHash(ctx, acc.Cache.ID, hash)
	if h.lookupFailed(w, r, err) {
		return
	}
	if !h.objectPresent(ctx, row) {
		http.NotFound(w, r)
		return
	}
	info, err := NarInfoOf(row)
	if err != nil {
		h.log.Warn("binary cache: a row cannot be served", "store_hash", hash, "err", err)
		http.NotFound(w, r)
		return
	}
	if info.Signatures, err = h.sign(ctx, acc.Cache, row, info); err != nil {
		h.log.Error("binary cache: signing failed", "cache", acc.Cache.Name, "err", err)
		http.Error(w, "the cache's signing key is unavailable", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/x-nix-narinfo")
	w.Write([]byte(info.String()))
}

// lookupFailed answers a failed row lookup: 404 for a miss, 500 for a store failure (never
// a false miss, gradient-protocol §7.2).
func (h *Handler) lookupFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, store.ErrNotFound):
		http.NotFound(w, r)
	default:
		h.log.Warn("binary cache lookup failed", "path", r.URL.Path, "err", err)
		http.Error(w, "the cache state could not be read", http.StatusInternalServerError)
	}
	return true
}

// objectPresent checks that the row's object is stored with the recorded size, demoting
// the row when it is not.
func (h *Handler) objectPresent(ctx context.Context, row store.CachedPath) bool {
	ok, size, err := h.cfg.NARs.Has(row.StoreHash)
	switch {
	case err != nil:
		h.log.Warn("binary cache: NAR storage unreadable", "store_hash", row.StoreHash, "err", err)
		return false
	case !ok:
		h.demote(ctx, row.StoreHash, "the stored object is missing")
		return false
	case size != row.FileSize:
		h.demote(ctx, row.StoreHash, "the stored object's size differs from the record")
		return false
	}
	return true
}

// sign is the cache's signature of the path, recorded when the stored one differs (a new
// path, or a key rotation). A cache without a key signs nothing.
func (h *Handler) sign(ctx context.Context, c store.Cache, row store.CachedPath, info NarInfo) ([]string, error) {
	if h.cfg.Keys == nil || len(c.SigningKeyEnc) == 0 {
		return nil, nil
	}
	key, err := h.cfg.Keys.Open(c.SigningKeyEnc)
	if err != nil {
		return nil, err
	}
	sig := key.Sign(info.Fingerprint())
	for _, s := range row.Signatures {
		if s.CacheID == c.ID && s.Signature == sig {
			return []string{sig}, nil
		}
	}
	if err := h.cfg.Store.SignCachedPath(ctx, row.StoreHash, c.ID, sig); err != nil {
		h.log.Warn("binary cache: recording a signature failed", "store_hash", row.StoreHash, "err", err)
	}
	return []string{sig}, nil
}
