package aeadbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Purposes the server seals values for.
const (
	PurposeDialToken  = "gradient dial token v1"
	PurposeSigningKey = "gradient cache signing key v1"
	// PurposeStatusToken and PurposeNotifySecret seal a project's forge token and outgoing
	// webhook secret (gradient-server §12).
	PurposeStatusToken  = "gradient forge status token v1"
	PurposeNotifySecret = "gradient notify secret v1"
)

// KeyFile is where LoadOrCreate keeps the key, relative to the data directory.
const KeyFile = "keys/secret.key"

const keySize = 32

// ErrOpen is returned for a sealed value that does not open under this key and purpose:
// corrupt, sealed for another purpose, or sealed under another key.
var ErrOpen = errors.New("aeadbox: sealed value does not open (wrong key, purpose or corrupt)")

// Box seals and opens values under one key.
type Box struct{ aead cipher.AEAD }

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != keySize {
		return nil, fmt.Errorf("aeadbox: key is %d bytes, want %d", len(key), keySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	return &Box{aead: aead}, nil
}

// LoadOrCreate opens the key under dataDir, minting it (mode 0600, directory 0700) on first
// use. A key file of the wrong size or readable by others is refused rather than used.
func LoadOrCreate(dataDir string) (*Box, error) {
	path := filepath.Join(dataDir, KeyFile)
	key, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		key, err = createKey(path)
	}
	if err != nil {
		return nil, err
	}
	return New(key)
}

func readKey(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("aeadbox: %s is accessible to others (mode %v); want 0600", path, info.Mode().Perm())
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("aeadbox: %s holds %d bytes, want %d", path, len(key), keySize)
	}
	return key, nil
}

// createKey writes a fresh key with O_EXCL, so two processes starting at once cannot each
// mint their own; the loser reads the winner's.
func createKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	_, werr := f.Write(key)
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("aeadbox: writing %s: %w", path, err)
	}
	return key, nil
}

// Seal encrypts plaintext for purpose: a random nonce followed by the GCM ciphertext.
func (b *Box) Seal(purpose string, plaintext []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	return b.aead.Seal(nonce, nonce, plaintext, []byte(purpose)), nil
}

// Open decrypts a value Seal produced for the same purpose.
func (b *Box) Open(purpose string, sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrOpen
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(purpose))
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}
