package lease

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"

	"github.com/buildfleet/buildfleet/internal/pace/cachekey"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// tokenEncoding is unpadded base64url, strict: a token has exactly one text.
var tokenEncoding = base64.RawURLEncoding.Strict()

// Signer signs a labelled field list (wire.AppendLabelledMessage) with a
// node's identity key. The identity package's Key satisfies it.
type Signer interface {
	Sign(label string, fields ...[]byte) []byte
}

// Token is a decoded lease token whose signature has not been checked yet.
type Token struct {
	Claims    Claims
	packed    []byte
	signature []byte
}

// Issue validates the claims, signs them with the scheduler's identity key
// and returns the token text that goes into the grant.
func Issue(c Claims, signer Signer) (string, error) {
	if err := c.Validate(); err != nil {
		return "", fmt.Errorf("issue lease: %w", err)
	}
	packed := c.appendPacked(make([]byte, 0, maxPackedLen))
	sig := signer.Sign(wire.LabelLease, packed)
	if len(sig) != ed25519.SignatureSize {
		return "", fmt.Errorf("issue lease: signer returned %d signature bytes", len(sig))
	}
	raw := appendRaw(make([]byte, 0, len(packed)+len(sig)+2*wire.FieldPrefixLen), packed, sig)
	return tokenEncoding.EncodeToString(raw), nil
}

// appendRaw appends the undecorated token: fieldlist[packed, signature].
func appendRaw(dst, packed, sig []byte) []byte {
	return wire.AppendField(wire.AppendField(dst, packed), sig)
}

// Parse decodes a token without verifying it: every refusal wraps
// ErrMalformedToken. The length is checked before anything is decoded.
func Parse(text string) (*Token, error) {
	if len(text) == 0 || len(text) > MaxTokenLen {
		return nil, fmt.Errorf("%w: token of %d characters (1..%d allowed)", ErrMalformedToken, len(text), MaxTokenLen)
	}
	raw, err := tokenEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: not unpadded base64url: %w", ErrMalformedToken, err)
	}
	if tokenEncoding.EncodedLen(len(raw)) != len(text) {
		// The decoder skips CR and LF; a token has exactly one spelling.
		return nil, fmt.Errorf("%w: line breaks inside the token", ErrMalformedToken)
	}
	var buf [2][]byte
	f, err := wire.SplitFields(buf[:0], raw, 2)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedToken, err)
	}
	if len(f[1]) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%w: signature of %d bytes", ErrMalformedToken, len(f[1]))
	}
	c, err := parsePacked(f[0])
	if err != nil {
		return nil, err
	}
	return &Token{Claims: c, packed: f[0], signature: f[1]}, nil
}

// SignatureValid reports whether pub signed these claims as a lease.
func (t *Token) SignatureValid(pub ed25519.PublicKey) bool {
	if len(pub) != ed25519.PublicKeySize {
		return false
	}
	var buf [maxPackedLen + 64]byte
	msg := wire.AppendLabelledMessage(buf[:0], wire.LabelLease, t.packed)
	return ed25519.Verify(pub, msg, t.signature)
}

// SpentID names the grant in a spent set: a digest of the signed claims, so
// two tokens are one grant exactly when they carry the same claims.
func (t *Token) SpentID() [32]byte { return cachekey.Content(t.packed) }
