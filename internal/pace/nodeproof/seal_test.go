package nodeproof

import (
	"bytes"
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/buildfleet/buildfleet/internal/pace/wire"
)

// sealedStream is three frames the client sent on a live connection.
func sealedStream(t *testing.T) (pair, []frame) {
	t.Helper()
	w := newWorld()
	p := handshake(t, w, w.client("n2", nodeKey))
	var frames []frame
	for _, key := range []string{"first", "second", "third"} {
		frames = append(frames, seal(p.client, wire.OpFetch, []byte(key)))
	}
	return p, frames
}

func TestSealedFramesInOrderVerify(t *testing.T) {
	p, frames := sealedStream(t)
	for i, f := range frames {
		if err := open(p.server, f); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
}

// Replayed, reordered, dropped and injected frames fail their tags: the
// sequence number and the per-connection keys are in every tag.
func TestLiveConnectionRefusesOutOfSequenceFrames(t *testing.T) {
	tests := []struct {
		name    string
		deliver func(frames []frame, other *Sealer) []frame // the last one must fail
	}{
		{"replayed", func(f []frame, _ *Sealer) []frame { return []frame{f[0], f[0]} }},
		{"reordered", func(f []frame, _ *Sealer) []frame { return []frame{f[1]} }},
		{"dropped", func(f []frame, _ *Sealer) []frame { return []frame{f[0], f[2]} }},
		{"injected unsealed", func(f []frame, _ *Sealer) []frame {
			forged := f[0]
			forged.tag = make([]byte, TagLen)
			return []frame{forged}
		}},
		{"injected with a truncated tag", func(f []frame, _ *Sealer) []frame {
			short := f[0]
			short.tag = short.tag[:TagLen-1]
			return []frame{short}
		}},
		{"from another connection", func(_ []frame, other *Sealer) []frame {
			return []frame{seal(other, wire.OpFetch, []byte("first"))}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, frames := sealedStream(t)
			w := newWorld() // another connection: fresh randomness on both ends
			w.server.Random = seededRandom(100)
			c := w.client("n2", nodeKey)
			c.Random = seededRandom(101)
			other := handshake(t, w, c)
			seq := tt.deliver(frames, other.client)
			for i, f := range seq {
				err := open(p.server, f)
				if last := i == len(seq)-1; last != errors.Is(err, ErrBadTag) {
					t.Fatalf("frame %d of %d: %v", i, len(seq), err)
				}
			}
		})
	}
}

// Flipping any bit of header, payload or tag fails the frame.
func TestTamperedFrameFails(t *testing.T) {
	for part := range 3 {
		for i := 0; ; i++ {
			p, frames := sealedStream(t)
			f := frame{bytes.Clone(frames[0].header), bytes.Clone(frames[0].payload), bytes.Clone(frames[0].tag)}
			target := [][]byte{f.header, f.payload, f.tag}[part]
			if i >= len(target) {
				break
			}
			target[i] ^= 0x10
			if err := open(p.server, f); !errors.Is(err, ErrBadTag) {
				t.Fatalf("part %d byte %d: %v", part, i, err)
			}
		}
	}
}

// A frame reflected back to its sender fails: each direction has its own
// key, so the client's own request is no reply.
func TestReflectedFrameFails(t *testing.T) {
	p, frames := sealedStream(t)
	if err := open(p.client, frames[0]); !errors.Is(err, ErrBadTag) {
		t.Fatalf("reflected: %v", err)
	}
}

// Property: whatever an adversary on the wire delivers from the frames the
// client sent, the server accepts exactly the in-order prefix and the
// first frame out of place fails (the connection then closes).
func TestAdversaryCanOnlyDeliverTheNextFrame(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld()
		p := handshake(t, w, w.client("n2", nodeKey))
		sent := rapid.IntRange(1, 12).Draw(rt, "sent")
		frames := make([]frame, sent)
		for i := range frames {
			frames[i] = seal(p.client, wire.OpFetch, []byte{byte(i)})
		}
		picks := rapid.SliceOfN(rapid.IntRange(0, sent-1), 1, 2*sent).Draw(rt, "delivered")
		for next, pick := range picks {
			err := open(p.server, frames[pick])
			if pick != next {
				if !errors.Is(err, ErrBadTag) {
					rt.Fatalf("frame %d delivered as #%d: %v", pick, next, err)
				}
				return
			}
			if err != nil {
				rt.Fatalf("in-order frame %d: %v", pick, err)
			}
		}
	})
}
