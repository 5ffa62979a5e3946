package store_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// blobPath spells the documented layout: objects/<first byte>/<hex BLAKE3-256 of the key>.
func blobPath(dir string, key []byte) string {
	d := blake3.Sum256(key)
	return filepath.Join(dir, "objects", fmt.Sprintf("%02x", d[0]), hex.EncodeToString(d[:]))
}

// blobSize is a blob's size on disk: 20-byte header, key, value, 4-byte checksum.
func blobSize(key, value []byte) int64 { return int64(24 + len(key) + len(value)) }

// valueFor derives a value from its key, so any reader can tell a right value from a torn one.
func valueFor(key string, size int) []byte {
	h := blake3.New()
	_, _ = h.WriteString(key)
	v := make([]byte, size)
	_, _ = h.Digest().Read(v)
	return v
}

// sizeFor draws a value size for key, deterministic so a parent process can recompute it.
func sizeFor(key string, minSize, maxSize int) int {
	d := blake3.Sum256([]byte(key))
	return minSize + int(binary.BigEndian.Uint32(d[:])%uint32(maxSize-minSize+1))
}

func openStore(t testing.TB, opts store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(opts)
	if err != nil {
		t.Fatalf("Open(%+v): %v", opts, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func mustPut(t testing.TB, s *store.Store, key string, value []byte) {
	t.Helper()
	if err := s.Put([]byte(key), value); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func mustGet(t testing.TB, s *store.Store, key string, want []byte) {
	t.Helper()
	got, err := s.Get([]byte(key))
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %d bytes, not the %d bytes stored", key, len(got), len(want))
	}
}

func mustMiss(t testing.TB, s *store.Store, key string) {
	t.Helper()
	if v, err := s.Get([]byte(key)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(%q) = %d bytes, %v; want ErrNotFound", key, len(v), err)
	}
}

// walkStore lists the files under dir/objects: blob bytes in total, and temp files.
func walkStore(t testing.TB, dir string) (blobs int, bytes int64, temps []string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(dir, "objects"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), "tmp-") {
			temps = append(temps, path)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		blobs++
		bytes += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return blobs, bytes, temps
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
