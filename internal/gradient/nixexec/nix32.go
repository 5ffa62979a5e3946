package nixexec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

// ErrBadHash: a hash string is in none of the forms Nix or gradient use.
var ErrBadHash = errors.New("nixexec: unrecognised hash")

// Nix32 encodes b in Nix's base-32 (nixhash holds the one implementation).
func Nix32(b []byte) string { return nixhash.EncodeBase32(b) }

// DecodeNix32 reverses Nix32 for a hash of size bytes.
func DecodeNix32(s string, size int) ([]byte, error) {
	if len(s) != nixhash.EncodedLen(size) {
		return nil, fmt.Errorf("%w: nix32 of %d bytes needs %d characters, got %d", ErrBadHash, size, nixhash.EncodedLen(size), len(s))
	}
	out, err := nixhash.DecodeBase32(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHash, err)
	}
	return out, nil
}

// SHA256Text is how gradient writes a SHA-256 on the wire: "sha256:<nix32>" (spec §10 Q2).
func SHA256Text(sum []byte) string { return "sha256:" + Nix32(sum) }

// ParseSHA256 reads a SHA-256 written as Nix SRI ("sha256-<base64>"), "sha256:<nix32>",
// "sha256:<hex>", or bare nix32 (52 characters) or hex (64 characters), as Nix's own
// commands print them.
func ParseSHA256(s string) ([]byte, error) {
	if !strings.HasPrefix(s, "sha256-") && !strings.HasPrefix(s, "sha256:") {
		s = "sha256:" + s
	}
	sum, err := nixhash.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHash, err)
	}
	return sum[:], nil
}

// SRIToNix32 converts Nix's SRI form ("sha256-<base64>") to "sha256:<nix32>".
func SRIToNix32(sri string) (string, error) {
	if !strings.HasPrefix(sri, "sha256-") {
		return "", fmt.Errorf("%w: %q is not a sha256 SRI hash", ErrBadHash, sri)
	}
	sum, err := ParseSHA256(sri)
	if err != nil {
		return "", err
	}
	return SHA256Text(sum), nil
}

// sriSHA256 writes a SHA-256 in Nix's SRI form.
func sriSHA256(sum []byte) string { return nixhash.SHA256(sum).SRI() }
