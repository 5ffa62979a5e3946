// Package edkey holds what pace knows about Ed25519 public keys apart from signing: the text
// operators see and type (43 characters of unpadded base64url, always whole) and the check a
// key passes before a cluster records it (canonical encoding, on the curve, not small order).
// It is pure, and shared by identity (which mints keys) and fleet (which records them).
package edkey

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
)

// TextLen is the length of a key's text: 32 bytes of unpadded base64url.
const TextLen = 43

// Encoding is unpadded base64url, strict: one text per key (and per 32-byte seed in a key file).
var Encoding = base64.RawURLEncoding.Strict()

// ErrText refuses a key text that is not 43 characters of canonical
// unpadded base64url.
var ErrText = errors.New("a key is written as 43 characters of unpadded base64url")

// Text is how a public key is shown to operators and typed back
// (--cluster-admit n2=host:port@<key>): always whole.
func Text(pub ed25519.PublicKey) string { return Encoding.EncodeToString(pub) }

// Parse reads a key text and validates the key it names.
func Parse(text string) (ed25519.PublicKey, error) {
	if len(text) != TextLen {
		return nil, fmt.Errorf("%w: got %d characters", ErrText, len(text))
	}
	raw, err := Encoding.DecodeString(text)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: %q does not decode", ErrText, text)
	}
	pub := ed25519.PublicKey(raw)
	if err := Validate(pub); err != nil {
		return nil, fmt.Errorf("key %s: %w", text, err)
	}
	return pub, nil
}
