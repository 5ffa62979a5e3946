package sealedconn

import (
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// BenchmarkSealedHeartbeat is one sealed HEARTBEAT round trip on loopback
// through the real frame server.
func BenchmarkSealedHeartbeat(b *testing.B) {
	s := startScheduler(b)
	c, err := Dial(b.Context(), s.addr, s.config("n2", nodeKey))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Do(b.Context(), wire.OpHeartbeat, []byte("n2"), []byte("beat"), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDialAndProve is a whole dial: TCP connect and the node proof.
func BenchmarkDialAndProve(b *testing.B) {
	s := startScheduler(b)
	cfg := s.config("n2", nodeKey)
	b.ReportAllocs()
	for b.Loop() {
		c, err := Dial(b.Context(), s.addr, cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
