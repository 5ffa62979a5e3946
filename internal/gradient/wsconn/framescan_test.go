package wsconn

import (
	"encoding/binary"
	"testing"

	"pgregory.net/rapid"
)

// testFrame is one frame of a generated stream.
type testFrame struct {
	op     byte
	fin    bool
	masked bool
	n      uint64 // declared payload length
	body   bool   // the payload bytes follow (false: the stream ends after the header)
}

func (f testFrame) bytes() []byte {
	b0 := f.op
	if f.fin {
		b0 |= 0x80
	}
	var mask byte
	if f.masked {
		mask = 0x80
	}
	h := []byte{b0}
	switch {
	case f.n < 126:
		h = append(h, mask|byte(f.n))
	case f.n <= 0xffff:
		h = binary.BigEndian.AppendUint16(append(h, mask|126), uint16(f.n))
	default:
		h = binary.BigEndian.AppendUint64(append(h, mask|127), f.n)
	}
	if f.masked {
		h = append(h, 1, 2, 3, 4)
	}
	if f.body {
		h = append(h, make([]byte, f.n)...)
	}
	return h
}

func stream(frames ...testFrame) []byte {
	var out []byte
	for _, f := range frames {
		out = append(out, f.bytes()...)
	}
	return out
}

func limitOf(n int64) func() int64 { return func() int64 { return n } }

// gradient-protocol §1.3: a message over the cap is refused when its header arrives, its
// fragments summed; control frames and payload bytes are never taken for headers.
func TestFrameScan(t *testing.T) {
	const limit = 64 << 10
	bin := func(n uint64, fin bool) testFrame { return testFrame{op: 2, fin: fin, masked: true, n: n, body: true} }
	tests := []struct {
		name string
		in   []byte
		want bool
	}{
		{"a small binary frame", stream(bin(10, true)), false},
		{"exactly the cap", stream(bin(limit, true)), false},
		{"one byte over, header only", stream(testFrame{op: 2, fin: true, masked: true, n: limit + 1}), true},
		{"2^62 declared", stream(testFrame{op: 2, fin: true, masked: true, n: 1 << 62}), true},
		{"a length with its top bit set", stream(testFrame{op: 2, fin: true, masked: true, n: 1 << 63}), true},
		{"a text message over the cap", stream(testFrame{op: 1, fin: true, masked: true, n: limit + 1}), true},
		{"fragments summing over the cap", stream(bin(40<<10, false), testFrame{op: 0, fin: true, masked: true, n: 40 << 10}), true},
		{"two messages each under the cap", stream(bin(40<<10, true), bin(40<<10, true)), false},
		{"a ping between fragments does not reset the sum", stream(bin(40<<10, false),
			testFrame{op: 9, fin: true, masked: true, n: 4, body: true}, testFrame{op: 0, fin: true, masked: true, n: 40 << 10}), true},
		{"an unmasked server frame", stream(testFrame{op: 2, fin: true, n: 300, body: true}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s frameScan
			if got := s.feed(tc.in, limitOf(limit)); got != tc.want {
				t.Fatalf("over = %v, want %v", got, tc.want)
			}
		})
	}
	// A payload full of 0xff is not read as headers: the 2-byte frame that follows is.
	payload := testFrame{op: 2, fin: true, masked: true, n: 200, body: true}.bytes()
	for i := len(payload) - 200; i < len(payload); i++ {
		payload[i] = 0xff
	}
	var s frameScan
	if s.feed(append(payload, testFrame{op: 2, fin: true, masked: true, n: 5, body: true}.bytes()...), limitOf(limit)) {
		t.Fatal("payload bytes were taken for a header")
	}
}

// The cap is asked per header: a cap raised between messages (EnterSession) applies to the
// next header.
func TestFrameScanAsksTheCapPerHeader(t *testing.T) {
	var s frameScan
	limit := int64(100)
	get := func() int64 { return limit }
	if s.feed(testFrame{op: 2, fin: true, masked: true, n: 100, body: true}.bytes(), get) {
		t.Fatal("a frame at the cap was refused")
	}
	limit = 1000
	if s.feed(testFrame{op: 2, fin: true, masked: true, n: 500}.bytes(), get) {
		t.Fatal("the raised cap was not used")
	}
}

// Property: however the stream is cut into reads, the scan reports a message over the cap
// exactly when some message's declared fragments add up past it.
func TestFrameScanProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.Int64Range(1, 600).Draw(t, "limit")
		frames := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) testFrame {
			return testFrame{
				op:     rapid.SampledFrom([]byte{0, 1, 2, 9, 10}).Draw(t, "op"),
				fin:    rapid.Bool().Draw(t, "fin"),
				masked: rapid.Bool().Draw(t, "masked"),
				n:      rapid.SampledFrom([]uint64{0, 1, 125, 126, 127, 300, 600, 65535, 65536}).Draw(t, "n"),
				body:   true,
			}
		}), 0, 12).Draw(t, "frames")
		want := false
		var msg uint64
		for _, f := range frames {
			if f.op >= 8 {
				continue
			}
			if f.op != 0 {
				msg = 0
			}
			msg += f.n
			want = want || msg > uint64(limit)
		}
		in := stream(frames...)
		var s frameScan
		got := false
		for len(in) > 0 {
			n := rapid.IntRange(1, len(in)).Draw(t, "read")
			got = s.feed(in[:n], limitOf(limit)) || got
			in = in[n:]
		}
		if got != want {
			t.Fatalf("over = %v, want %v", got, want)
		}
		if s.have != 0 || s.skip != 0 {
			t.Fatalf("a whole stream left the scan mid-frame: have %d, skip %d", s.have, s.skip)
		}
	})
}

// FuzzFrameScan: any bytes, cut anywhere, scan the same as in one read, and never panic.
func FuzzFrameScan(f *testing.F) {
	f.Add(stream(testFrame{op: 2, fin: true, masked: true, n: 10, body: true}), uint16(3))
	f.Add(stream(testFrame{op: 2, fin: true, masked: true, n: 1 << 62}), uint16(5))
	f.Add(stream(testFrame{op: 2, n: 200, body: true}, testFrame{op: 0, fin: true, n: 70000}), uint16(150))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		var whole, split frameScan
		want := whole.feed(data, limitOf(1000))
		c := int(cut) % (len(data) + 1)
		got := split.feed(data[:c], limitOf(1000))
		got = split.feed(data[c:], limitOf(1000)) || got
		if got != want || whole != split {
			t.Fatalf("a read cut at %d changed the scan: %v vs %v", c, got, want)
		}
		if whole.message < 0 || whole.skip < 0 {
			t.Fatalf("negative sizes: %+v", whole)
		}
	})
}
