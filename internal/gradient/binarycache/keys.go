package binarycache

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// ErrBadKey: a key text is not Nix's "name:base64" form of an ed25519 key.
var ErrBadKey = errors.New("binarycache: malformed signing key")

// SigningKey is a cache's ed25519 key with its Nix key name.
type SigningKey struct {
	name string
	priv ed25519.PrivateKey
}

// GenerateKey makes a key named name from rand.
func GenerateKey(name string, rand io.Reader) (SigningKey, error) {
	if err := checkKeyName(name); err != nil {
		return SigningKey{}, err
	}
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return SigningKey{}, fmt.Errorf("binarycache: generating a key: %w", err)
	}
	return SigningKey{name: name, priv: priv}, nil
}

// ParseSecretKey reads Nix's secret key text "name:base64(64-byte ed25519 private key)",
// as `nix key generate-secret` writes it.
func ParseSecretKey(s string) (SigningKey, error) {
	name, raw, err := splitKey(s, ed25519.PrivateKeySize)
	if err != nil {
		return SigningKey{}, err
	}
	return SigningKey{name: name, priv: ed25519.PrivateKey(raw)}, nil
}

func splitKey(s string, size int) (string, []byte, error) {
	name, b64, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || checkKeyName(name) != nil {
		return "", nil, fmt.Errorf("%w: want name:base64", ErrBadKey)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != size {
		return "", nil, fmt.Errorf("%w: key %q is not %d bytes of base64", ErrBadKey, name, size)
	}
	return name, raw, nil
}

// checkKeyName: Nix splits a key or signature at its first colon, so a name is non-empty
// and has none; whitespace would break the narinfo's Sig line.
func checkKeyName(name string) error {
	if name == "" || len(name) > 128 || strings.ContainsAny(name, ": \t\r\n") {
		return fmt.Errorf("%w: key name %q", ErrBadKey, name)
	}
	return nil
}

// Name is the key's name, the part of a signature before the colon.
func (k SigningKey) Name() string { return k.name }

// SecretText is the key in Nix's secret key form. It is a secret: seal it, never log it.
func (k SigningKey) SecretText() string {
	return k.name + ":" + base64.StdEncoding.EncodeToString(k.priv)
}

// PublicKey is the "name:base64" line for Nix's trusted-public-keys.
func (k SigningKey) PublicKey() string {
	pub := k.priv.Public().(ed25519.PublicKey)
	return k.name + ":" + base64.StdEncoding.EncodeToString(pub)
}

// Sign returns Nix's signature of a fingerprint: "name:base64(ed25519 signature)".
func (k SigningKey) Sign(fingerprint string) string {
	return k.name + ":" + base64.StdEncoding.EncodeToString(ed25519.Sign(k.priv, []byte(fingerprint)))
}

// String and LogValue keep the private key out of logs and error messages.
func (k SigningKey) String() string { return "signing key " + k.name }

// LogValue implements slog.LogValuer.
func (k SigningKey) LogValue() slog.Value { return slog.StringValue(k.String()) }

// Verify reports whether sig ("name:base64") is publicKey's ("name:base64") signature of
// fingerprint, as Nix checks a narinfo against trusted-public-keys.
func Verify(publicKey, fingerprint, sig string) bool {
	name, pub, err := splitKey(publicKey, ed25519.PublicKeySize)
	if err != nil {
		return false
	}
	sigName, b64, ok := strings.Cut(sig, ":")
	if !ok || sigName != name {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(ed25519.PublicKey(pub), []byte(fingerprint), raw)
}
