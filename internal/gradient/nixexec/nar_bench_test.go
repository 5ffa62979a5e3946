package nixexec

import (
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkNAREncoder is the zstd level 6 stage of an upload on NAR-like data (half
// repetitive text, half random bytes): the ceiling of DumpNAR's throughput on this machine.
func BenchmarkNAREncoder(b *testing.B) {
	data := make([]byte, 16<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		if (i>>12)%2 == 0 {
			data[i] = "the quick brown fox jumps over the lazy dog\n"[i%44]
		} else {
			data[i] = byte(rng.Uint32())
		}
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		enc, err := NewNAREncoder(io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := enc.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := enc.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
