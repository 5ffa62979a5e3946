package store

import (
	"context"
	"time"
)

// CacheUpstream is an upstream binary cache a cache names, with the one public key whose
// signatures it trusts there (gradient-server §14).
type CacheUpstream struct {
	CacheID string
	// URL is the upstream's root (http, https or file), without a trailing slash.
	URL string
	// PublicKey is Nix's "name:base64" form of the ed25519 key its narinfos are signed with.
	PublicKey string
	CreatedAt time.Time
}

// Upstreams keeps the caches' upstream substituters (gradient-server §14).
type Upstreams interface {
	// AddCacheUpstream names an upstream of a cache, or replaces the key of one it names
	// already; ErrNotFound for an unknown cache. The caller validates URL and key.
	AddCacheUpstream(ctx context.Context, u CacheUpstream) error
	// RemoveCacheUpstream removes one; ErrNotFound when the cache does not name that URL.
	RemoveCacheUpstream(ctx context.Context, cacheID, url string) error
	// ListCacheUpstreams lists the upstreams of the caches, oldest first per cache, by cache.
	ListCacheUpstreams(ctx context.Context, cacheIDs []string) ([]CacheUpstream, error)
}
