package nodeproof

import (
	"strconv"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// BenchmarkHandshake is one whole proof, both ends: two X25519 agreements,
// two signatures and two verifications, HKDF twice per end.
func BenchmarkHandshake(b *testing.B) {
	w := newWorld()
	c := w.client("n2", nodeKey)
	b.ReportAllocs()
	for b.Loop() {
		handshake(b, w, c)
	}
}

// BenchmarkSealFrame is tagging and checking one frame per iteration.
func BenchmarkSealFrame(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 64 << 10} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			w := newWorld()
			p := handshake(b, w, w.client("n2", nodeKey))
			header := wire.AppendRequestHeader(nil, wire.NewRequestHeader(wire.OpFetch, uint32(size)))
			payload := make([]byte, size)
			tag := make([]byte, 0, TagLen)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				tag = p.client.AppendTag(tag[:0], header, payload)
				if err := p.server.CheckTag(tag, header, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
