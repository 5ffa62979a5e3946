package narstore_test

import (
	"testing"
	"time"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/narstore/narstoretest"
)

// BenchmarkCommit stages a 256 MiB NAR (zstd level 6, about 4:1) in 512 KiB writes and
// commits it: the server's share of an upload without the socket. MB/s counts NAR bytes;
// write-ms is staging (page cache and the running SHA-256), commit-ms the verification
// (streaming decompression and the NAR's SHA-256), fsync and rename.
func BenchmarkCommit(b *testing.B) {
	obj := narstoretest.Make(narstoretest.NAR(256<<20, 42))
	s, err := narstore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(obj.NAR)))
	var writing, committing time.Duration
	for b.Loop() {
		t0 := time.Now()
		st, err := s.Stage("bench")
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < len(obj.Compressed); off += chunk {
			end := min(off+chunk, len(obj.Compressed))
			if err := st.Write(int64(off), obj.Compressed[off:end]); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		if err := st.Commit(hashA, obj.Expect); err != nil {
			b.Fatal(err)
		}
		writing, committing = writing+t1.Sub(t0), committing+time.Since(t1)
	}
	b.ReportMetric(float64(writing.Milliseconds())/float64(b.N), "write-ms/op")
	b.ReportMetric(float64(committing.Milliseconds())/float64(b.N), "commit-ms/op")
}
