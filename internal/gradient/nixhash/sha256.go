package nixhash

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// SHA256 is a SHA-256 digest, the only hash type gradient's cache uses for NAR and file
// hashes.
type SHA256 [sha256.Size]byte

const (
	sha256Prefix = "sha256:"
	sriPrefix    = "sha256-"
)

// Parse reads a SHA-256 written as "sha256:<nix32>", "sha256:<hex>" or SRI
// "sha256-<base64>". Other algorithms and bare digests are refused: the prefix is what
// says which algorithm the digest belongs to.
func Parse(s string) (SHA256, error) {
	var h SHA256
	if b64, ok := strings.CutPrefix(s, sriPrefix); ok {
		if len(b64) != base64.StdEncoding.EncodedLen(len(h)) {
			return h, fmt.Errorf("%w: SRI digest of %d characters, want %d", ErrInvalid, len(b64), base64.StdEncoding.EncodedLen(len(h)))
		}
		n, err := base64.StdEncoding.Decode(h[:], []byte(b64))
		if err != nil || n != len(h) {
			return SHA256{}, fmt.Errorf("%w: SRI digest is not base64 of 32 bytes", ErrInvalid)
		}
		return h, nil
	}
	body, ok := strings.CutPrefix(s, sha256Prefix)
	if !ok {
		return h, fmt.Errorf("%w: %.80q is not a sha256 hash", ErrInvalid, s)
	}
	switch len(body) {
	case EncodedLen(len(h)):
		b, err := DecodeBase32(body)
		if err != nil {
			return h, err
		}
		copy(h[:], b)
		return h, nil
	case hex.EncodedLen(len(h)):
		if _, err := hex.Decode(h[:], []byte(body)); err != nil {
			return SHA256{}, fmt.Errorf("%w: hex digest: %v", ErrInvalid, err)
		}
		return h, nil
	}
	return h, fmt.Errorf("%w: sha256 digest of %d characters (want 52 nix32 or 64 hex)", ErrInvalid, len(body))
}

// Canonical rewrites a hash text in any form Parse accepts as "sha256:<nix32>".
func Canonical(s string) (string, error) {
	h, err := Parse(s)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// Sum returns the SHA-256 of b.
func Sum(b []byte) SHA256 { return sha256.Sum256(b) }

// String is the canonical form, "sha256:<nix32>".
func (h SHA256) String() string { return sha256Prefix + EncodeBase32(h[:]) }

// Hex is "sha256:<hex>".
func (h SHA256) Hex() string { return sha256Prefix + hex.EncodeToString(h[:]) }

// SRI is "sha256-<base64>".
func (h SHA256) SRI() string { return sriPrefix + base64.StdEncoding.EncodeToString(h[:]) }

// Equal compares in constant time (a hash may be checked against a peer's claim).
func (h SHA256) Equal(o SHA256) bool { return subtle.ConstantTimeCompare(h[:], o[:]) == 1 }

// IsZero reports whether h is the zero value (no digest).
func (h SHA256) IsZero() bool { return h == SHA256{} }
