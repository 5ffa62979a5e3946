package aeadbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
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

// TestConcurrentStartsShareOneKey starts many servers' key loading at once on fresh data
// directories: every one must succeed, and all must hold the same key (a value one seals,
// every other opens). Many rounds, so the window between a create and its write would be hit.
func TestConcurrentStartsShareOneKey(t *testing.T) {
	const rounds, starters = 10, 8
	for range rounds {
		dir := t.TempDir()
		boxes := make([]*Box, starters)
		errs := make([]error, starters)
		var ready, done sync.WaitGroup
		gate := make(chan struct{})
		for i := range starters {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				<-gate
				boxes[i], errs[i] = LoadOrCreate(dir)
			}()
		}
		ready.Wait()
		close(gate)
		done.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("starter %d: %v", i, err)
			}
		}
		sealed, err := boxes[0].Seal(PurposeDialToken, []byte("shared"))
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range boxes {
			if got, err := b.Open(PurposeDialToken, sealed); err != nil || string(got) != "shared" {
				t.Fatalf("starter %d holds another key: %q, %v", i, got, err)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "keys", ".secret.key-*")); len(left) != 0 {
			t.Fatalf("temporary key files left behind: %v", left)
		}
	}
}

// TestTheKeyFileIsNeverSeenPartial watches the key path while keys are created: whoever
// looks finds no file or a whole key, never an empty or short one (which a second server
// starting at that moment would refuse).
func TestTheKeyFileIsNeverSeenPartial(t *testing.T) {
	for round := range 20 {
		dir := t.TempDir()
		path := filepath.Join(dir, KeyFile)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		seen := make(chan int, 1)
		go func() {
			defer close(seen)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if info, err := os.Stat(path); err == nil && info.Size() != keySize {
					seen <- int(info.Size())
					return
				}
			}
		}()
		_, err := LoadOrCreate(dir)
		close(stop)
		if n, partial := <-seen; partial {
			t.Fatalf("round %d: the key file was seen with %d bytes", round, n)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
