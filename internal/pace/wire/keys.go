package wire

// MaxCacheKeyLen bounds a cache key on the wire. pace-cc's keys are 64 hex
// characters; the bound only keeps an opaque key from being a payload.
const MaxCacheKeyLen = 1024

// CheckCacheKey applies the key rules of STORE, FETCH, CACHE-DROP and the
// SHARED-* verbs: a non-empty key of at most MaxCacheKeyLen bytes whose
// first byte is not 0x01 or 0x02, which are reserved for the store's
// internal prefetch-group keys (spec §5 Q6). A refused key is malformed.
func CheckCacheKey(key []byte) error {
	switch {
	case len(key) == 0:
		return malformed("empty cache key")
	case len(key) > MaxCacheKeyLen:
		return malformed("cache key of %d bytes (at most %d)", len(key), MaxCacheKeyLen)
	case key[0] == 0x01 || key[0] == 0x02:
		return malformed("cache keys starting with byte 0x%02x are reserved", key[0])
	}
	return nil
}
