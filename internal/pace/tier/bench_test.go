package tier

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// BenchmarkLocalMemoryHit is a FETCH answered from the memory half through ServeFrom, the
// path pace-cc's every hit takes.
func BenchmarkLocalMemoryHit(b *testing.B) {
	tr := newTier(b, Config{MaxMemory: 64 << 20})
	v := compileValue(b, string(make([]byte, 64<<10)))
	if r := tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", v)); r.Status != wire.StatusOk {
		b.Fatal(r.Status)
	}
	req := fetchReq("k")
	b.ReportAllocs()
	for b.Loop() {
		if r := tr.ServeFrom(bg, loopbackPeer, req); r.Status != wire.StatusOk {
			b.Fatal(r.Status)
		}
	}
}

// BenchmarkLocalMemoryHitParallel is the same hit from many connections at once.
func BenchmarkLocalMemoryHitParallel(b *testing.B) {
	tr := newTier(b, Config{MaxMemory: 64 << 20})
	v := compileValue(b, string(make([]byte, 64<<10)))
	if r := tr.ServeFrom(bg, loopbackPeer, storeReq("k", "", "", v)); r.Status != wire.StatusOk {
		b.Fatal(r.Status)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := fetchReq("k")
		for pb.Next() {
			if r := tr.ServeFrom(bg, loopbackPeer, req); r.Status != wire.StatusOk {
				b.Error(r.Status)
				return
			}
		}
	})
}

// BenchmarkOffBoxRefusal is the cost of refusing a caller from another machine.
func BenchmarkOffBoxRefusal(b *testing.B) {
	tr := newTier(b, Config{MaxMemory: 1 << 20})
	req := fetchReq("k")
	b.ReportAllocs()
	for b.Loop() {
		tr.ServeFrom(bg, offBoxPeer, req)
	}
}
