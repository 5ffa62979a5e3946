package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

// corruptAndReopen stores key=value, closes, applies damage to the blob file and reopens.
func corruptAndReopen(t *testing.T, damage func(path string)) (*store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "key", valueFor("key", 4096))
	_ = s.Close()
	damage(blobPath(dir, []byte("key")))
	return openStore(t, store.Options{Dir: dir, MaxMemory: 1 << 20}), dir
}

func flipByteAt(offset func(size int64) int64) func(string) {
	return func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			panic(err)
		}
		b[offset(int64(len(b)))] ^= 0x40
		if err := os.WriteFile(path, b, 0o644); err != nil {
			panic(err)
		}
	}
}

func TestCacheCorruptedBlob(t *testing.T) {
	for name, damage := range map[string]func(string){
		"value byte":    flipByteAt(func(n int64) int64 { return n / 2 }),
		"key byte":      flipByteAt(func(int64) int64 { return 20 }),
		"magic":         flipByteAt(func(int64) int64 { return 0 }),
		"value length":  flipByteAt(func(int64) int64 { return 18 }),
		"checksum byte": flipByteAt(func(n int64) int64 { return n - 1 }),
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := corruptAndReopen(t, damage)
			mustMiss(t, s, "key")
			if fileExists(blobPath(dir, []byte("key"))) {
				t.Fatal("the corrupt blob was not removed")
			}
			st := s.Stats()
			if st.CorruptRemoved != 1 || st.Disk.Items != 0 || st.Disk.Bytes != 0 || st.Memory.Items != 0 {
				t.Fatalf("after a corrupt read: %+v", st)
			}
			mustMiss(t, s, "key") // and it stays a plain miss
			if s.Stats().CorruptRemoved != 1 {
				t.Fatal("a second read counted the same corruption again")
			}
		})
	}
}

func TestTruncatedBlobIsAMiss(t *testing.T) {
	for name, keep := range map[string]int64{
		"mid-value":            2000,
		"last byte missing":    24 + 3 + 4096 - 1,
		"shorter than headers": 10,
		"empty":                0,
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := corruptAndReopen(t, func(path string) {
				if err := os.Truncate(path, keep); err != nil {
					panic(err)
				}
			})
			mustMiss(t, s, "key")
			if fileExists(blobPath(dir, []byte("key"))) {
				t.Fatal("the truncated blob was not removed")
			}
			if st := s.Stats(); st.CorruptRemoved != 1 || st.Disk.Items != 0 {
				t.Fatalf("after a truncated blob: %+v", st)
			}
		})
	}
}

func TestStrayTempFilesAreIgnoredAndSwept(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "key", []byte("value"))
	_ = s.Close()
	shard := filepath.Dir(blobPath(dir, []byte("key")))
	strays := []string{filepath.Join(shard, "tmp-12345"), filepath.Join(dir, "objects", "00", "tmp-torn"), filepath.Join(dir, "tmp-format-1")}
	for _, p := range strays {
		if err := os.WriteFile(p, []byte("PCSB half a blob"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	foreign := filepath.Join(shard, "README")
	if err := os.WriteFile(foreign, []byte("not ours"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, store.Options{Dir: dir})
	for _, p := range strays {
		if fileExists(p) {
			t.Fatalf("stray temp file %s survived Open", p)
		}
	}
	if !fileExists(foreign) {
		t.Fatal("Open removed a file that is not the store's")
	}
	mustGet(t, s, "key", []byte("value"))
	if st := s.Stats(); st.TempFilesSwept != uint64(len(strays)) || st.Disk.Items != 1 {
		t.Fatalf("swept %d temp files, indexed %d blobs; want %d, 1", st.TempFilesSwept, st.Disk.Items, len(strays))
	}
}
