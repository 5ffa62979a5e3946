package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// modes are the three shapes a Store can take.
func modes(t *testing.T) map[string]store.Options {
	return map[string]store.Options{
		"disk":        {Dir: t.TempDir()},
		"memory+disk": {Dir: t.TempDir(), MaxMemory: 1 << 20},
		"memory":      {MaxMemory: 1 << 20},
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	for name, opts := range modes(t) {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, opts)
			for _, size := range []int{0, 1, 4 << 10, 300 << 10} {
				key := strings.Repeat("k", 64) + string(rune('a'+size%26))
				v := valueFor(key, size)
				mustPut(t, s, key, v)
				mustGet(t, s, key, v)
			}
		})
	}
}

func TestMissIsErrNotFound(t *testing.T) {
	for name, opts := range modes(t) {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, opts)
			mustMiss(t, s, "absent")
			if st := s.Stats(); st.Misses != 1 || st.Hits != 0 {
				t.Fatalf("stats after one miss: hits %d misses %d", st.Hits, st.Misses)
			}
		})
	}
}

func TestOverwriteReplacesTheValue(t *testing.T) {
	for name, opts := range modes(t) {
		t.Run(name, func(t *testing.T) {
			s := openStore(t, opts)
			mustPut(t, s, "k", []byte("first"))
			mustPut(t, s, "k", []byte("second, longer"))
			mustGet(t, s, "k", []byte("second, longer"))
			st := s.Stats()
			if opts.Dir != "" && (st.Disk.Items != 1 || st.Disk.Bytes != blobSize([]byte("k"), []byte("second, longer"))) {
				t.Fatalf("disk accounting after overwrite: %d items, %d bytes", st.Disk.Items, st.Disk.Bytes)
			}
		})
	}
}

func TestKeysAreValidated(t *testing.T) {
	s := openStore(t, store.Options{Dir: t.TempDir(), MaxMemory: 1 << 20})
	for name, key := range map[string][]byte{
		"empty":             {},
		"longer than 1 KiB": bytes.Repeat([]byte{'k'}, store.MaxKeyLen+1),
		"cohort prefix":     []byte("\x01cohort:default"),
		"member prefix":     []byte("\x02member:abc"),
	} {
		if err := s.Put(key, []byte("v")); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Put(%s): %v, want ErrInvalidKey", name, err)
		}
		if _, err := s.Get(key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Get(%s): %v, want ErrInvalidKey", name, err)
		}
		if _, err := s.Delete(key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Delete(%s): %v, want ErrInvalidKey", name, err)
		}
	}
	if err := s.Put(bytes.Repeat([]byte{'k'}, store.MaxKeyLen), []byte("v")); err != nil {
		t.Fatalf("a key of exactly MaxKeyLen bytes was refused: %v", err)
	}
}

func TestInternalRecordsUseTheReservedPrefixesOnly(t *testing.T) {
	s := openStore(t, store.Options{Dir: t.TempDir()})
	cohort := []byte("\x01cohort:default")
	if err := s.PutInternal(cohort, []byte("members")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetInternal(cohort); err != nil || string(v) != "members" {
		t.Fatalf("GetInternal = %q, %v", v, err)
	}
	if err := s.PutInternal([]byte("client-key"), []byte("v")); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("PutInternal of a client key: %v, want ErrInvalidKey", err)
	}
	if ok, err := s.DeleteInternal(cohort); !ok || err != nil {
		t.Fatalf("DeleteInternal = %v, %v", ok, err)
	}
}

func TestDeleteRemovesFromBothTiers(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, store.Options{Dir: dir, MaxMemory: 1 << 20})
	mustPut(t, s, "k", []byte("v"))
	present, err := s.Delete([]byte("k"))
	if !present || err != nil {
		t.Fatalf("Delete = %v, %v; want true, nil", present, err)
	}
	mustMiss(t, s, "k")
	if fileExists(blobPath(dir, []byte("k"))) {
		t.Fatal("the blob file survived Delete")
	}
	if present, _ := s.Delete([]byte("k")); present {
		t.Fatal("a second Delete reported the key present")
	}
	if st := s.Stats(); st.Memory.Items != 0 || st.Disk.Items != 0 || st.Disk.Bytes != 0 {
		t.Fatalf("stats after Delete: %+v", st)
	}
}

func TestValuesSurviveCloseAndReopen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, store.Options{Dir: dir, MaxMemory: 1 << 20})
	want := map[string][]byte{}
	for i := range 50 {
		key := strings.Repeat("a", i+1)
		want[key] = valueFor(key, sizeFor(key, 0, 20<<10))
		mustPut(t, s, key, want[key])
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]byte("late"), nil); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Put after Close: %v, want ErrClosed", err)
	}
	s2 := openStore(t, store.Options{Dir: dir})
	for key, v := range want {
		mustGet(t, s2, key, v)
	}
	var total int64
	for key, v := range want {
		total += blobSize([]byte(key), v)
	}
	if st := s2.Stats(); st.Disk.Items != int64(len(want)) || st.Disk.Bytes != total {
		t.Fatalf("reopened index: %d items, %d bytes; want %d, %d", st.Disk.Items, st.Disk.Bytes, len(want), total)
	}
}

func TestMemoryTierHitNeedsNoDisk(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, store.Options{Dir: dir, MaxMemory: 1 << 20})
	mustPut(t, s, "k", []byte("value"))
	if err := os.Remove(blobPath(dir, []byte("k"))); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "k", []byte("value"))
	st := s.Stats()
	if st.Memory.Hits != 1 || st.Disk.Hits != 0 || st.Disk.Misses != 0 {
		t.Fatalf("memory hits %d, disk hits %d, disk misses %d; want 1, 0, 0", st.Memory.Hits, st.Disk.Hits, st.Disk.Misses)
	}
}

func TestDiskHitFillsMemory(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, store.Options{Dir: dir})
	mustPut(t, s, "k", []byte("value"))
	_ = s.Close()
	s = openStore(t, store.Options{Dir: dir, MaxMemory: 1 << 20})
	mustGet(t, s, "k", []byte("value")) // from disk
	mustGet(t, s, "k", []byte("value")) // from memory
	if st := s.Stats(); st.Disk.Hits != 1 || st.Memory.Hits != 1 || st.Memory.Misses != 1 || st.Memory.Items != 1 {
		t.Fatalf("after two reads: %+v", st)
	}
}

func TestMemoryOnlyMode(t *testing.T) {
	s := openStore(t, store.Options{MaxMemory: 100})
	mustPut(t, s, "a", bytes.Repeat([]byte{1}, 40)) // 41 bytes with its key
	mustPut(t, s, "b", bytes.Repeat([]byte{2}, 40))
	mustGet(t, s, "a", bytes.Repeat([]byte{1}, 40)) // a is now the most recent
	mustPut(t, s, "c", bytes.Repeat([]byte{3}, 40)) // evicts b
	mustMiss(t, s, "b")
	mustGet(t, s, "a", bytes.Repeat([]byte{1}, 40))
	if err := s.Put([]byte("d"), make([]byte, 100)); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("Put larger than the memory budget: %v, want ErrTooLarge", err)
	}
	st := s.Stats()
	if st.Disk.Enabled || !st.Memory.Enabled || st.Memory.Evictions != 1 || st.Memory.Bytes > 100 {
		t.Fatalf("memory-only stats: %+v", st)
	}
}

func TestMemoryHitReturnsTheStoredBytesWithoutCopying(t *testing.T) {
	s := openStore(t, store.Options{MaxMemory: 1 << 20})
	v := []byte("shared")
	mustPut(t, s, "k", v)
	got, _ := s.Get([]byte("k"))
	if &got[0] != &v[0] {
		t.Fatal("a memory hit copied the value")
	}
}

func TestOpenWithoutAnyTierIsRefused(t *testing.T) {
	if _, err := store.Open(store.Options{}); !errors.Is(err, store.ErrNoTier) {
		t.Fatalf("Open with no directory and no memory: %v, want ErrNoTier", err)
	}
}

func TestValueLargerThanTheBudgetIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, store.Options{Dir: dir, MaxDisk: 1000})
	if err := s.Put([]byte("k"), make([]byte, 1000)); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("Put over the whole budget: %v, want ErrTooLarge", err)
	}
	mustPut(t, s, "small", make([]byte, 1000-24-5)) // exactly the budget
	if st := s.Stats(); st.Reserved != 0 || st.Disk.Bytes != 1000 {
		t.Fatalf("after refusal: reserved %d, used %d", st.Reserved, st.Disk.Bytes)
	}
}

func TestSecondOpenIsRefusedNamingThePath(t *testing.T) {
	dir := t.TempDir()
	openStore(t, store.Options{Dir: dir})
	_, err := store.Open(store.Options{Dir: dir})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Fatalf("refusal %q does not name %s", err, dir)
	}
}

func TestLockIsReleasedByClose(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	openStore(t, store.Options{Dir: dir})
}

func TestAnotherLayoutIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "FORMAT"), []byte("pace-store 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(store.Options{Dir: dir}); !errors.Is(err, store.ErrLayout) {
		t.Fatalf("Open of another layout: %v, want ErrLayout", err)
	}
}
