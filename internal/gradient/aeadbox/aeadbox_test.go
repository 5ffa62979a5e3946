package aeadbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"
)

func TestLoadOrCreateKeepsOneKey(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", info, err)
	}
	sealed, err := a.Seal(PurposeDialToken, []byte("token"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Open(PurposeDialToken, sealed); err != nil || string(got) != "token" {
		t.Fatalf("reopened box: %q, %v", got, err)
	}
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	box, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := box.Seal(PurposeDialToken, []byte("secret"))
	if _, err := box.Open(PurposeSigningKey, sealed); !errors.Is(err, ErrOpen) {
		t.Errorf("open under another purpose = %v, want ErrOpen", err)
	}
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	if _, err := box.Open(PurposeDialToken, flipped); !errors.Is(err, ErrOpen) {
		t.Errorf("open of a flipped byte = %v, want ErrOpen", err)
	}
	if _, err := box.Open(PurposeDialToken, sealed[:5]); !errors.Is(err, ErrOpen) {
		t.Errorf("open of a short value = %v, want ErrOpen", err)
	}
	other, _ := New(bytes.Repeat([]byte{7}, keySize))
	if _, err := other.Open(PurposeDialToken, sealed); !errors.Is(err, ErrOpen) {
		t.Errorf("open under another key = %v, want ErrOpen", err)
	}
	keyPath := filepath.Join(dir, KeyFile)
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(dir); err == nil {
		t.Error("a world-readable key file was used")
	}
	if err := os.WriteFile(keyPath, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(keyPath, 0o600)
	if _, err := LoadOrCreate(dir); err == nil {
		t.Error("a 5-byte key file was used")
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	box, err := New(bytes.Repeat([]byte{1}, keySize))
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		plain := rapid.SliceOf(rapid.Byte()).Draw(t, "plain")
		purpose := rapid.SampledFrom([]string{PurposeDialToken, PurposeSigningKey}).Draw(t, "purpose")
		sealed, err := box.Seal(purpose, plain)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(sealed, plain) && len(plain) > 8 {
			t.Fatalf("sealed value contains the plaintext")
		}
		got, err := box.Open(purpose, sealed)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("round trip: %x, %v; want %x", got, err, plain)
		}
	})
}
