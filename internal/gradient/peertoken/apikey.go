package peertoken

import (
	"encoding/base64"
	"io"
	"strings"
)

// APIKeyPrefix starts every API key and every Authorization value that carries one.
const APIKeyPrefix = "GRAD"

// APIKeyBytes is the amount of randomness in a minted API key.
const APIKeyBytes = 32

// maxAPIKeyLen bounds the part after "GRAD" in a presented key; ours are 43 characters.
const maxAPIKeyLen = 512

// MintAPIKey returns a fresh API key ("GRAD" + 32 random bytes in unpadded base64url) and
// the hash the server stores for it: the lowercase SHA-256 hex of the part after "GRAD".
// The key is shown once; only the hash is kept.
func MintAPIKey(rand io.Reader) (key, hash string, err error) {
	buf, err := randomBytes(rand, APIKeyBytes)
	if err != nil {
		return "", "", err
	}
	secret := base64.RawURLEncoding.EncodeToString(buf)
	return APIKeyPrefix + secret, SHA256Hex(secret), nil
}

// APIKeyHash reads an Authorization header value, `GRAD<key>` or `Bearer GRAD<key>` (the
// scheme matched case-insensitively, as HTTP schemes are), and returns the stored-form hash
// of the key to look up. ok is false for anything else: another scheme, an empty or
// oversized key, or a key containing whitespace or control characters.
func APIKeyHash(presented string) (hash string, ok bool) {
	v := strings.TrimSpace(presented)
	if scheme, rest, found := strings.Cut(v, " "); found && strings.EqualFold(scheme, "Bearer") {
		v = strings.TrimLeft(rest, " ")
	}
	secret, found := strings.CutPrefix(v, APIKeyPrefix)
	if !found || secret == "" || len(secret) > maxAPIKeyLen || !printableASCII(secret) {
		return "", false
	}
	return SHA256Hex(secret), true
}

// printableASCII reports whether s is visible ASCII only (no spaces or controls).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
