package binarycache

import (
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/buildfleet/buildfleet/internal/gradient/aeadbox"
)

// DefaultKeyHost starts key names when the server names no host.
const DefaultKeyHost = "gradient"

// maxOpenKeys bounds the memo of opened keys (one per cache and key version).
const maxOpenKeys = 1024

// Keys makes, seals and opens the caches' signing keys.
type Keys struct {
	box  *aeadbox.Box
	host string
	rand io.Reader

	mu   sync.Mutex
	open map[string]SigningKey // sealed bytes -> opened key: unsealing once per key
}

// NewKeys seals keys with box. host starts every key name ("" means DefaultKeyHost; a
// port or characters a key name cannot hold are dropped). rand nil means crypto/rand.
func NewKeys(box *aeadbox.Box, host string, rand io.Reader) *Keys {
	return &Keys{box: box, host: keyHost(host), rand: rand, open: map[string]SigningKey{}}
}

func keyHost(host string) string {
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	host = strings.Map(func(r rune) rune {
		if r <= ' ' || r == ':' || r >= 0x7f {
			return -1
		}
		return r
	}, host)
	if host == "" {
		return DefaultKeyHost
	}
	return host
}

// KeyName is the name of a cache's first key: "<host>-<cache>-1".
func (k *Keys) KeyName(cacheName string) string { return k.host + "-" + cacheName + "-1" }

// Create makes a new key for a cache and returns it sealed (store.NewCache.SigningKeyEnc)
// with its public key line.
func (k *Keys) Create(cacheName string) (sealed []byte, publicKey string, err error) {
	r := k.rand
	if r == nil {
		r = rand.Reader
	}
	key, err := GenerateKey(k.KeyName(cacheName), r)
	if err != nil {
		return nil, "", err
	}
	sealed, err = k.box.Seal(aeadbox.PurposeSigningKey, []byte(key.SecretText()))
	if err != nil {
		return nil, "", fmt.Errorf("binarycache: sealing the key of cache %s: %w", cacheName, err)
	}
	return sealed, key.PublicKey(), nil
}

// Open unseals a cache's key.
func (k *Keys) Open(sealed []byte) (SigningKey, error) {
	k.mu.Lock()
	key, ok := k.open[string(sealed)]
	k.mu.Unlock()
	if ok {
		return key, nil
	}
	text, err := k.box.Open(aeadbox.PurposeSigningKey, sealed)
	if err != nil {
		return SigningKey{}, fmt.Errorf("binarycache: opening a signing key: %w", err)
	}
	if key, err = ParseSecretKey(string(text)); err != nil {
		return SigningKey{}, err
	}
	k.mu.Lock()
	if len(k.open) >= maxOpenKeys {
		clear(k.open)
	}
	k.open[string(sealed)] = key
	k.mu.Unlock()
	return key, nil
}

// PublicKey is the trusted-public-keys line of a sealed key.
func (k *Keys) PublicKey(sealed []byte) (string, error) {
	key, err := k.Open(sealed)
	if err != nil {
		return "", err
	}
	return key.PublicKey(), nil
}
