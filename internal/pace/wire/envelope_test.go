package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"pgregory.net/rapid"
)

func envelope(c Codec, rawLen uint32, body []byte) []byte {
	return append(appendEnvelopeHeader(nil, c, rawLen), body...)
}

func mustSeal(t testing.TB, c Codec, raw []byte) []byte {
	t.Helper()
	env, err := Seal(nil, c, raw)
	if err != nil {
		t.Fatal(err)
	}
	if Codec(env[0]) != c {
		t.Fatalf("sealing compressible data with %s fell back to %s", c, Codec(env[0]))
	}
	return env
}

func compressible(n int) []byte {
	return bytes.Repeat([]byte("int main(void) { return 0; }\n"), n/29+1)[:n]
}

// withRawLen rewrites an envelope's declared size.
func withRawLen(env []byte, rawLen uint32) []byte {
	out := bytes.Clone(env)
	binary.BigEndian.PutUint32(out[1:5], rawLen)
	return out
}

func TestOpenReceiverOrder(t *testing.T) {
	raw := compressible(4000)
	lz, zs := mustSeal(t, CodecLZ4, raw), mustSeal(t, CodecZstd, raw)
	const mib = 1 << 20
	all, lz4Only := SupportedCodecs, CodecSet(0).With(CodecLZ4)
	tests := []struct {
		name    string
		field   []byte
		ceiling uint32
		accept  CodecSet
		want    error
	}{
		{"empty", nil, mib, all, ErrMalformedFrame},
		{"four bytes", []byte{0, 0, 0, 0}, mib, all, ErrMalformedFrame},
		{"identity length mismatch beats the ceiling", envelope(CodecIdentity, math.MaxUint32, []byte("ab")), mib, all, ErrMalformedFrame},
		{"identity above the ceiling", envelope(CodecIdentity, 8, make([]byte, 8)), 7, all, ErrPayloadTooLarge},
		{"ceiling beats an unknown codec", envelope(Codec(9), mib+1, nil), mib, all, ErrPayloadTooLarge},
		{"4 GiB declared", envelope(CodecLZ4, math.MaxUint32, make([]byte, 15)), mib, all, ErrPayloadTooLarge},
		{"unknown codec", envelope(Codec(9), 3, []byte("abc")), mib, all, ErrUnsupportedCodec},
		{"codec not accepted", zs, mib, lz4Only, ErrUnsupportedCodec},
		{"identity always accepted", envelope(CodecIdentity, 3, []byte("abc")), mib, 0, nil},
		{"lz4 garbage", envelope(CodecLZ4, 100, []byte{0xF0, 1, 2, 3}), mib, all, ErrCorruptEnvelope},
		{"lz4 declares one more", withRawLen(lz, 4001), mib, all, ErrCorruptEnvelope},
		{"lz4 declares one less", withRawLen(lz, 3999), mib, all, ErrCorruptEnvelope},
		{"lz4 beyond its ratio", envelope(CodecLZ4, mib, make([]byte, 10)), mib, all, ErrCorruptEnvelope},
		{"lz4 empty expansion", envelope(CodecLZ4, 0, []byte("00000000")), mib, all, ErrCorruptEnvelope},
		{"zstd garbage", envelope(CodecZstd, 100, []byte("not zstd at all")), mib, all, ErrCorruptEnvelope},
		{"zstd declares one more", withRawLen(zs, 4001), mib, all, ErrCorruptEnvelope},
		{"zstd declares one less", withRawLen(zs, 3999), mib, all, ErrCorruptEnvelope},
		{"zstd truncated", zs[:len(zs)-3], mib, all, ErrCorruptEnvelope},
		{"lz4 ok", lz, mib, all, nil},
		{"zstd ok", zs, mib, all, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Open(tt.field, tt.ceiling, tt.accept)
			if !errors.Is(err, tt.want) || (tt.want == nil && (err != nil || !bytes.Equal(out, tt.field[5:]) && !bytes.Equal(out, raw))) {
				t.Fatalf("Open = %v, want %v", err, tt.want)
			}
			if err != nil && out != nil {
				t.Fatal("a refused envelope returns no bytes")
			}
			if corrupt := errors.Is(err, ErrCorruptEnvelope); corrupt != (tt.want == ErrCorruptEnvelope) {
				t.Fatalf("corrupt=%v for %v: malformed and corrupt must be told apart", corrupt, err)
			}
		})
	}
}

func TestOpenRefusesHugeDeclarationWithoutAllocating(t *testing.T) {
	// A 20-byte frame declaring 4 GiB (pace-wire §1.9): the receiver must
	// refuse it before sizing a buffer from the declaration.
	field := envelope(CodecLZ4, math.MaxUint32, bytes.Repeat([]byte{0xFF}, 15))
	if len(field) != 20 {
		t.Fatalf("field is %d bytes", len(field))
	}
	for _, c := range []Codec{CodecLZ4, CodecZstd, Codec(200)} {
		field[0] = byte(c)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := Open(field, DefaultSessionCap, SupportedCodecs); !errors.Is(err, ErrPayloadTooLarge) {
				t.Fatalf("%s: %v", c, err)
			}
		})
		if allocs != 0 {
			t.Fatalf("%s: refusing a 4 GiB declaration allocated %.0f times", c, allocs)
		}
	}
}

func TestOpenImplausibleDeclarationCostsNoMemory(t *testing.T) {
	// Within a generous ceiling, a tiny LZ4 body declaring 1 GiB is refused
	// as corrupt before the output buffer exists.
	field := envelope(CodecLZ4, 1<<30, make([]byte, 15))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 50 {
		if _, err := Open(field, math.MaxUint32, SupportedCodecs); !errors.Is(err, ErrCorruptEnvelope) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Fatalf("refusing 50 implausible 1 GiB declarations allocated %d bytes", grew)
	}
}

func TestOpenIdentityAliases(t *testing.T) {
	field := envelope(CodecIdentity, 3, []byte("abc"))
	out, err := Open(field, 10, 0)
	if err != nil || &out[0] != &field[5] {
		t.Fatal("identity Open must alias the field, not copy")
	}
	app, err := OpenAppend([]byte("x"), field, 10, 0)
	if err != nil || string(app) != "xabc" {
		t.Fatalf("OpenAppend = %q, %v", app, err)
	}
}

func TestSealFallsBackToIdentity(t *testing.T) {
	noise := rapid.SliceOfN(rapid.Byte(), 4096, 4096).Example(1)
	for _, c := range []Codec{CodecLZ4, CodecZstd} {
		for _, raw := range [][]byte{nil, []byte("x"), noise} {
			env, err := Seal(nil, c, raw)
			if err != nil {
				t.Fatal(err)
			}
			if Codec(env[0]) != CodecIdentity || len(env) != EnvelopeHeaderLen+len(raw) {
				t.Fatalf("%s of %d incompressible bytes: codec %s, %d bytes", c, len(raw), Codec(env[0]), len(env))
			}
		}
	}
	if _, err := Seal(nil, Codec(5), []byte("x")); !errors.Is(err, ErrUnsupportedCodec) {
		t.Fatal("sealing with an unknown codec must fail")
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := rapid.SampledFrom([]Codec{CodecIdentity, CodecLZ4, CodecZstd}).Draw(t, "codec")
		raw := rapid.OneOf(
			rapid.SliceOfN(rapid.Byte(), 0, 3000),
			rapid.Map(rapid.IntRange(0, 300000), compressible),
			rapid.Map(rapid.IntRange(0, 300000), func(n int) []byte { return make([]byte, n) }),
		).Draw(t, "raw")
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "prefix")
		env, err := Seal(bytes.Clone(prefix), c, raw)
		if err != nil || !bytes.Equal(env[:len(prefix)], prefix) {
			t.Fatalf("Seal: %v", err)
		}
		field := env[len(prefix):]
		got, err := Open(field, uint32(len(raw)), SupportedCodecs)
		if err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("Open(%s, %d bytes): %v", Codec(field[0]), len(raw), err)
		}
		if len(raw) > 0 {
			if _, err := Open(field, uint32(len(raw)-1), SupportedCodecs); !errors.Is(err, ErrPayloadTooLarge) {
				t.Fatalf("a ceiling one below rawLen must refuse: %v", err)
			}
		}
		wrapped, err := AppendEnvelopeField(nil, c, raw)
		if err != nil {
			t.Fatal(err)
		}
		f, err := SplitFields(nil, wrapped, 1)
		if err != nil || !bytes.Equal(f[0], field) {
			t.Fatalf("AppendEnvelopeField does not frame the envelope: %v", err)
		}
	})
}

func TestLZ4RatioBoundHoldsForZeros(t *testing.T) {
	// All zeros is LZ4's best case; an honest envelope must stay within the
	// plausibility bound that refuses dishonest ones.
	for _, n := range []int{1 << 10, 1 << 20, 16 << 20} {
		env := mustSeal(t, CodecLZ4, make([]byte, n))
		if _, err := Open(env, uint32(n), SupportedCodecs); err != nil {
			t.Fatalf("%d zeros: %v (body %d bytes)", n, err, len(env)-EnvelopeHeaderLen)
		}
	}
}

// syntheticTU is n bytes of preprocessed-C-like text: repetitive in shape,
// varied in identifiers and numbers, like a real translation unit.
func syntheticTU(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, "static inline int fn_%d(struct s%d *p, int a%d) { return p->f%d * a%d + %d; }\n",
			rng.IntN(5000), rng.IntN(40), rng.IntN(9), rng.IntN(20), rng.IntN(9), rng.IntN(1<<20))
		if rng.IntN(8) == 0 {
			fmt.Fprintf(&b, "# %d \"/usr/include/x86_64-linux-gnu/bits/types%d.h\" 3 4\n", rng.IntN(900), rng.IntN(30))
		}
	}
	return b.Bytes()[:n]
}

func benchmarkEnvelope(b *testing.B, c Codec) {
	raw := syntheticTU(1 << 20)
	env := mustSeal(b, c, raw)
	b.Run("seal", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		buf := make([]byte, 0, len(raw)+1024)
		for b.Loop() {
			buf, _ = Seal(buf[:0], c, raw)
		}
	})
	b.Run("open", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		buf := make([]byte, 0, len(raw))
		for b.Loop() {
			var err error
			if buf, err = OpenAppend(buf[:0], env, DefaultSessionCap, SupportedCodecs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEnvelopeLZ4(b *testing.B)  { benchmarkEnvelope(b, CodecLZ4) }
func BenchmarkEnvelopeZstd(b *testing.B) { benchmarkEnvelope(b, CodecZstd) }
