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

// createKey writes a fresh key to a temporary file, fsyncs it, and links it into place.
// link(2) never replaces an existing file, so of two processes starting at once exactly one
// key wins, and the loser, whose link fails, reads the winner's; the key file is never seen
// empty or half written (an O_EXCL create would be, between the create and the write).
func createKey(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	tmp, err := writeTemp(dir, key)
	if err != nil {
		return nil, fmt.Errorf("aeadbox: writing a key under %s: %w", dir, err)
	}
	defer os.Remove(tmp)
	err = os.Link(tmp, path)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("aeadbox: %w", err)
	}
	return key, nil
}

// writeTemp writes key to a new mode-0600 file in dir, synced, and returns its path.
func writeTemp(dir string, key []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".secret.key-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(key)
	err = errors.Join(werr, f.Chmod(0o600), f.Sync(), f.Close())
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// syncDir makes the new link durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
