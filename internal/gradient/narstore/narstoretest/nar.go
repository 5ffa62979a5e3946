// Package narstoretest makes NAR objects for tests of narstore and its callers: real NAR
// framing, compressed as the worker compresses (zstd level 6), with the hashes a worker
// would declare.
package narstoretest

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"

	"github.com/klauspost/compress/zstd"

	"github.com/buildfleet/buildfleet/internal/gradient/narstore"
	"github.com/buildfleet/buildfleet/internal/gradient/nixhash"
)

// CompressionLevel is the worker's zstd level (gradient-protocol §7.3).
const CompressionLevel = 6

// Object is one NAR and its stored form.
type Object struct {
	NAR        []byte // the uncompressed NAR
	Compressed []byte // zstd level 6 of NAR
	Expect     narstore.Expect
}

// NAR returns a NAR of one regular file of about size bytes: text-like, compressible
// content drawn from seed (lines of words with some random bytes, roughly what build
// outputs compress like).
func NAR(size int, seed uint64) []byte {
	var b bytes.Buffer
	b.Grow(size + 256)
	str := func(s []byte) {
		binary.Write(&b, binary.LittleEndian, uint64(len(s)))
		b.Write(s)
		b.Write(make([]byte, (8-len(s)%8)%8))
	}
	for _, s := range []string{"nix-archive-1", "(", "type", "regular", "contents"} {
		str([]byte(s))
	}
	str(content(size, seed))
	str([]byte(")"))
	return b.Bytes()
}

// IncompressibleNAR returns a NAR like NAR's whose file is size random bytes: what does not
// compress, the transport's worst case.
func IncompressibleNAR(size int) []byte {
	nar := NAR(size, 1)
	// The file contents end 16 bytes before the NAR does (the closing ")" string).
	_, _ = rand.NewChaCha8([32]byte{7}).Read(nar[len(nar)-size-16 : len(nar)-16])
	return nar
}

func content(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := []string{"gradient ", "nix ", "store ", "derivation ", "output ", "/lib/", "\n", "0x", "build "}
	out := make([]byte, 0, size+16)
	for len(out) < size {
		if r.IntN(8) == 0 {
			out = append(out, byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32()))
			continue
		}
		out = append(out, words[r.IntN(len(words))]...)
	}
	return out[:size]
}

// Compress compresses b as the worker does: a streaming encoder at level 6 (so the frame
// declares a window, not a content size).
func Compress(b []byte, opts ...zstd.EOption) []byte {
	var out bytes.Buffer
	opts = append([]zstd.EOption{zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(CompressionLevel))}, opts...)
	enc, err := zstd.NewWriter(&out, opts...)
	if err != nil {
		panic(err)
	}
	if _, err := enc.Write(b); err != nil {
		panic(err)
	}
	if err := enc.Close(); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// Make returns the object of nar: compressed, with the Expect a worker would declare.
func Make(nar []byte) Object {
	comp := Compress(nar)
	return Object{NAR: nar, Compressed: comp, Expect: ExpectOf(nar, comp)}
}

// ExpectOf is the declaration of compressed bytes comp of nar.
func ExpectOf(nar, comp []byte) narstore.Expect {
	return narstore.Expect{
		FileSize: int64(len(comp)), FileHash: nixhash.Sum(comp),
		NarSize: int64(len(nar)), NarHash: nixhash.Sum(nar),
	}
}
