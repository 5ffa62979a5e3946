package identity

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// Key is a node's Ed25519 identity key. Its private half never leaves the
// value: it formats and logs as its public text only.
type Key struct {
	private ed25519.PrivateKey
}

// ErrNoRandom: the random source failed while minting.
var ErrNoRandom = errors.New("the random source failed")

// NewKey mints a key from random (crypto/rand in production).
func NewKey(random io.Reader) (*Key, error) {
	var seed [ed25519.SeedSize]byte
	if _, err := io.ReadFull(random, seed[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoRandom, err)
	}
	return &Key{private: ed25519.NewKeyFromSeed(seed[:])}, nil
}

// Public is the key's public half.
func (k *Key) Public() ed25519.PublicKey { return k.private.Public().(ed25519.PublicKey) }

// PublicText is the public half as 43-character key text.
func (k *Key) PublicText() string { return edkey.Text(k.Public()) }

// Sign signs fieldlist[label, fields...]. label must be one of wire's
// construction labels; any other is a programming error and panics.
func (k *Key) Sign(label string, fields ...[]byte) []byte {
	mustBeLabel(label)
	return ed25519.Sign(k.private, wire.AppendLabelledMessage(nil, label, fields...))
}

// Verify reports whether signature is pub's over fieldlist[label,
// fields...]. It panics on a label wire does not define.
func Verify(pub ed25519.PublicKey, signature []byte, label string, fields ...[]byte) bool {
	mustBeLabel(label)
	if len(pub) != ed25519.PublicKeySize || len(signature) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(pub, wire.AppendLabelledMessage(nil, label, fields...), signature)
}

var knownLabels = wire.Labels()

func mustBeLabel(label string) {
	if !slices.Contains(knownLabels, label) {
		panic(fmt.Sprintf("identity: %q is not a wire signature label", label))
	}
}

// String shows the public half only.
func (k *Key) String() string {
	if k == nil || len(k.private) != ed25519.PrivateKeySize {
		return "identity key (none)"
	}
	return "identity key " + k.PublicText() + " (private half redacted)"
}

// Format makes every fmt verb, %#v and %x included, print String.
func (k *Key) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

// LogValue makes log/slog record the public half only.
func (k *Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// seed is the private seed, for the key file only.
func (k *Key) seed() []byte { return k.private.Seed() }
