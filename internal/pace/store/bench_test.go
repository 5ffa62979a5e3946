package store_test

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/store"
)

var benchSizes = []int{4 << 10, 64 << 10, 1 << 20}

// fillBench stores 16 values of size and returns their keys.
func fillBench(b *testing.B, s *store.Store, size int) [][]byte {
	keys := make([][]byte, 16)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "%064x", i)
		if err := s.Put(keys[i], valueFor(string(keys[i]), size)); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

func BenchmarkGet(b *testing.B) {
	for _, tier := range []string{"memory", "disk"} {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dKiB", tier, size>>10), func(b *testing.B) {
				opts := store.Options{Dir: b.TempDir(), Sync: store.SyncNever}
				if tier == "memory" {
					opts.MaxMemory = 64 << 20
				}
				s := openStore(b, opts)
				keys := fillBench(b, s, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := s.Get(keys[i%len(keys)]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkGetParallel is the pace-kv shape: many connections fetching 64 KiB values.
func BenchmarkGetParallel(b *testing.B) {
	for _, tier := range []string{"memory", "disk"} {
		b.Run(tier+"/64KiB", func(b *testing.B) {
			opts := store.Options{Dir: b.TempDir(), Sync: store.SyncNever}
			if tier == "memory" {
				opts.MaxMemory = 64 << 20
			}
			s := openStore(b, opts)
			keys := fillBench(b, s, 64<<10)
			b.SetBytes(64 << 10)
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := s.Get(keys[i%len(keys)]); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

func BenchmarkPut64KiB(b *testing.B) {
	for _, sync := range []store.SyncPolicy{store.SyncAlways, store.SyncNever} {
		name := map[store.SyncPolicy]string{store.SyncAlways: "sync", store.SyncNever: "nosync"}[sync]
		b.Run(name, func(b *testing.B) {
			s := openStore(b, store.Options{Dir: b.TempDir(), Sync: sync, MaxDisk: 256 << 20})
			v := valueFor("v", 64<<10)
			b.SetBytes(int64(len(v)))
			i := 0
			for b.Loop() {
				if err := s.Put(fmt.Appendf(nil, "%064x", i), v); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkDiskReadStrategy compares the two ways a disk hit could be served: reading the
// blob once into an exactly sized buffer and verifying it (what Get does), or streaming it
// through a checksumming reader (which can only detect corruption after the bytes went out).
func BenchmarkDiskReadStrategy(b *testing.B) {
	dir := b.TempDir()
	s := openStore(b, store.Options{Dir: dir, Sync: store.SyncNever})
	key := []byte("k")
	if err := s.Put(key, valueFor("k", 64<<10)); err != nil {
		b.Fatal(err)
	}
	path := blobPath(dir, key)
	table := crc32.MakeTable(crc32.Castagnoli)
	b.Run("whole-buffer", func(b *testing.B) {
		b.SetBytes(64 << 10)
		for b.Loop() {
			f, _ := os.Open(path)
			info, _ := f.Stat()
			buf := make([]byte, info.Size())
			_, _ = io.ReadFull(f, buf)
			_ = crc32.Checksum(buf[:len(buf)-4], table)
			_ = f.Close()
		}
	})
	b.Run("streaming-32KiB", func(b *testing.B) {
		b.SetBytes(64 << 10)
		chunk := make([]byte, 32<<10)
		for b.Loop() {
			f, _ := os.Open(path)
			h := crc32.New(table)
			_, _ = io.CopyBuffer(io.Discard, io.TeeReader(f, h), chunk)
			_ = f.Close()
		}
	})
}
