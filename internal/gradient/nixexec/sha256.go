package nixexec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

// ErrBadHash: a hash string is in none of the forms Nix or gradient use.
var ErrBadHash = errors.New("nixexec: unrecognised hash")

// SHA256Text is how gradient writes a SHA-256 on the wire: "sha256:<nix32>"
// (gradient-server §10.2).
func SHA256Text(sum []byte) string { return "sha256:" + nixhash.EncodeBase32(sum) }

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

// sriSHA256 writes a SHA-256 in Nix's SRI form.
func sriSHA256(sum []byte) string { return nixhash.SHA256(sum).SRI() }
