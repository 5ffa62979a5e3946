package api

import "github.com/buildfleet/buildfleet/internal/gradient/store"

// CacheKeys makes and reads the caches' narinfo signing keys (binarycache.Keys implements
// it): a key is made with its cache, stored sealed, and only its public half is shown.
type CacheKeys interface {
	// Create makes a cache's key: sealed for store.NewCache.SigningKeyEnc, and the
	// "name:base64" public key for Nix's trusted-public-keys.
	Create(cacheName string) (sealed []byte, publicKey string, err error)
	// PublicKey is the public key of a sealed key.
	PublicKey(sealed []byte) (string, error)
}

// cacheView is a cache as the API shows it, with its public key when it has one.
func (a *api) cacheView(c store.Cache) Cache {
	out := cacheOf(c)
	if a.keys != nil && len(c.SigningKeyEnc) > 0 {
		if pk, err := a.keys.PublicKey(c.SigningKeyEnc); err == nil {
			out.PublicKey = pk
		} else {
			a.log.Warn("a cache's signing key does not open", "cache", c.Name, "err", err)
		}
	}
	return out
}

// newCacheKey is the sealed key of a cache being created; nil without CacheKeys.
func (a *api) newCacheKey(name string) ([]byte, error) {
	if a.keys == nil {
		return nil, nil
	}
	sealed, _, err := a.keys.Create(name)
	return sealed, err
}
