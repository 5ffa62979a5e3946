package wire

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

func decodeAs(d *enumDef, frame []byte, v uint16) (Message, error) {
	if d == clientMessageEnum {
		return DecodeClientMessage(frame, v)
	}
	return DecodeServerMessage(frame, v)
}

// Every variant of ClientMessage and ServerMessage, with generated nested values, survives
// encode → decode → encode at every supported version.
func TestRoundTripEveryVariant(t *testing.T) {
	for v := range ProtoVersions().All() {
		g := newValueGen(v)
		for _, d := range []*enumDef{clientMessageEnum, serverMessageEnum} {
			for i := range g.present(d) {
				t.Run(fmt.Sprintf("v%d/%s/%d-%s", v, d.name, i, d.variants[i].name), func(t *testing.T) {
					rapid.Check(t, func(rt *rapid.T) { roundTrip(rt, g, d, i, v) })
				})
			}
		}
	}
}

func roundTrip(t *rapid.T, g *valueGen, d *enumDef, i int, v uint16) {
	m := g.message(t, d, i)
	frame, err := Encode(m, v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	back, err := decodeAs(d, frame, v)
	if err != nil {
		t.Fatalf("decode: %v\nframe % x", err, frame)
	}
	if diff := cmp.Diff(m, back, cmpopts.EquateNaNs()); diff != "" {
		t.Fatalf("decode(encode(m)) differs (-sent +received):\n%s", diff)
	}
	again, err := Encode(back, v)
	if err != nil || !bytes.Equal(again, frame) {
		t.Fatalf("re-encoding differs: %v\nfirst  % x\nsecond % x", err, frame, again)
	}
	if frame[0] != byte(i) {
		t.Fatalf("first byte %d, want the variant index %d", frame[0], i)
	}
}

func TestPrimitiveRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		u := rapid.Uint64().Draw(t, "u")
		n := rapid.Int64().Draw(t, "n")
		f := math.Float32frombits(rapid.Uint32().Draw(t, "fbits"))
		e := encoder{}
		e.uvarint(u)
		e.zigzag(n)
		e.f32(f)
		d := decoder{buf: e.buf}
		gu, err1 := d.uvarint()
		gn, err2 := d.zigzag()
		gf, err3 := d.f32()
		if err := cmp.Diff([]error{nil, nil, nil}, []error{err1, err2, err3}); err != "" || d.remaining() != 0 {
			t.Fatalf("errors %v %v %v, %d left", err1, err2, err3, d.remaining())
		}
		if gu != u || gn != n || math.Float32bits(gf) != math.Float32bits(f) {
			t.Fatalf("got %d %d %x, want %d %d %x", gu, gn, math.Float32bits(gf), u, n, math.Float32bits(f))
		}
	})
}

func TestZigZagSmallValuesAreShort(t *testing.T) {
	for n, want := range map[int64][]byte{0: {0}, -1: {1}, 1: {2}, -2: {3}, 63: {0x7e}, -64: {0x7f}, 64: {0x80, 0x01}} {
		e := encoder{}
		e.zigzag(n)
		if !bytes.Equal(e.buf, want) {
			t.Errorf("zigzag(%d) = % x, want % x", n, e.buf, want)
		}
	}
}
