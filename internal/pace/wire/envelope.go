package wire

import (
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// EnvelopeHeaderLen is the size of the envelope header: codec, u32 BE rawLen.
const EnvelopeHeaderLen = 5

// lz4MaxRatio bounds how far an LZ4 block can expand: each input byte
// yields at most 255 output bytes (a match-length extension byte), plus a
// few bytes of the first sequence. A declared size beyond it cannot be
// honest, so it is refused as corrupt before anything is allocated.
const (
	lz4MaxRatio = 255
	lz4Slack    = 64
)

// Envelope is a parsed codec envelope (pace-wire §1.9): the codec, the size
// before compression, and the codec's bytes (aliasing the field).
type Envelope struct {
	Codec  Codec
	RawLen uint32
	Body   []byte
}

// ParseEnvelope applies the first receiver rule: shorter than 5 bytes, or
// Identity with rawLen different from the body's length, is malformed.
func ParseEnvelope(field []byte) (Envelope, error) {
	if len(field) < EnvelopeHeaderLen {
		return Envelope{}, errShortEnvelope
	}
	env := Envelope{
		Codec:  Codec(field[0]),
		RawLen: binary.BigEndian.Uint32(field[1:5]),
		Body:   field[EnvelopeHeaderLen:],
	}
	if env.Codec == CodecIdentity && uint64(env.RawLen) != uint64(len(env.Body)) {
		return Envelope{}, errIdentityLength
	}
	return env, nil
}

// Preallocated so that refusing an envelope allocates nothing.
var (
	errShortEnvelope  = malformed("envelope shorter than its 5-byte header")
	errIdentityLength = malformed("identity envelope whose rawLen differs from its length")
)

// CheckEnvelope applies the receiver rules of pace-wire §1.9 that need no
// decompression, in order: malformed, then rawLen above ceiling
// (ErrPayloadTooLarge), then a codec not in accept (ErrUnsupportedCodec;
// Identity is always accepted), then declared sizes the codec's own
// framing proves impossible (ErrCorruptEnvelope). It allocates nothing, so
// a worker can charge max(frameLength, RawLen) before opening.
func CheckEnvelope(field []byte, ceiling uint32, accept CodecSet) (Envelope, error) {
	env, err := ParseEnvelope(field)
	if err != nil {
		return Envelope{}, err
	}
	if env.RawLen > ceiling {
		return env, ErrPayloadTooLarge
	}
	if env.Codec != CodecIdentity && !(accept & SupportedCodecs).Has(env.Codec) {
		return env, ErrUnsupportedCodec
	}
	if !plausible(env) {
		return env, ErrCorruptEnvelope
	}
	return env, nil
}

// plausible rejects declarations the codec's framing already contradicts.
func plausible(env Envelope) bool {
	switch env.Codec {
	case CodecLZ4:
		return uint64(env.RawLen) <= uint64(len(env.Body))*lz4MaxRatio+lz4Slack
	case CodecZstd:
		var h zstd.Header
		if h.Decode(env.Body) != nil {
			return false
		}
		return !h.HasFCS || h.FrameContentSize <= uint64(env.RawLen)
	}
	return true
}

// Open checks and expands an envelope field. The result has exactly RawLen
// bytes; for Identity it aliases field. Errors: ErrMalformedFrame,
// ErrPayloadTooLarge, ErrUnsupportedCodec, ErrCorruptEnvelope (also an
// ErrMalformedFrame; test for it first to count it apart).
func Open(field []byte, ceiling uint32, accept CodecSet) ([]byte, error) {
	env, err := CheckEnvelope(field, ceiling, accept)
	if err != nil {
		return nil, err
	}
	if env.Codec == CodecIdentity {
		return env.Body, nil
	}
	out, err := expand(nil, env)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OpenAppend is Open appending the expanded bytes to dst, so a caller can
// reuse a buffer. Identity bodies are copied.
func OpenAppend(dst, field []byte, ceiling uint32, accept CodecSet) ([]byte, error) {
	env, err := CheckEnvelope(field, ceiling, accept)
	if err != nil {
		return dst, err
	}
	if env.Codec == CodecIdentity {
		return append(dst, env.Body...), nil
	}
	return expand(dst, env)
}

// expand decodes env into exactly RawLen bytes appended to dst; the
// decoder may never grow the output past that.
func expand(dst []byte, env Envelope) ([]byte, error) {
	start, rawLen := len(dst), int(env.RawLen)
	dst = slices.Grow(dst, rawLen)
	out := dst[start : start+rawLen : start+rawLen]
	var n int
	switch env.Codec {
	case CodecLZ4:
		var err error
		if n, err = uncompressLZ4(env.Body, out); err != nil {
			return dst[:start], ErrCorruptEnvelope
		}
	case CodecZstd:
		got, err := zstdDecoder().DecodeAll(env.Body, out[:0])
		if err != nil || len(got) != rawLen || (rawLen > 0 && &got[0] != &out[0]) {
			return dst[:start], ErrCorruptEnvelope
		}
		n = len(got)
	}
	if n != rawLen {
		return dst[:start], ErrCorruptEnvelope
	}
	return dst[:start+rawLen], nil
}

// uncompressLZ4 decodes an LZ4 block into out. The library's assembly
// decoder dereferences a nil destination, so an empty expansion decodes
// into a small scratch buffer and must produce nothing.
func uncompressLZ4(body, out []byte) (int, error) {
	if len(out) == 0 {
		var scratch [16]byte
		return lz4.UncompressBlock(body, scratch[:])
	}
	return lz4.UncompressBlock(body, out)
}

// Seal appends an envelope of raw in codec c to dst. When the codec does
// not make the bytes smaller, Identity is used instead: it is always
// acceptable, and a receiver never pays to expand bytes that did not shrink.
func Seal(dst []byte, c Codec, raw []byte) ([]byte, error) {
	if uint64(len(raw)) > math.MaxUint32 {
		return dst, ErrPayloadTooLarge
	}
	start := len(dst)
	dst = appendEnvelopeHeader(dst, c, uint32(len(raw)))
	switch c {
	case CodecIdentity:
		return append(dst, raw...), nil
	case CodecLZ4:
		dst = appendLZ4(dst, raw)
	case CodecZstd:
		dst = zstdEncoder().EncodeAll(raw, dst)
	default:
		return dst[:start], ErrUnsupportedCodec
	}
	if len(dst)-start-EnvelopeHeaderLen >= len(raw) {
		dst = appendEnvelopeHeader(dst[:start], CodecIdentity, uint32(len(raw)))
		dst = append(dst, raw...)
	}
	return dst, nil
}

// AppendEnvelopeField appends raw sealed in codec c as one field.
func AppendEnvelopeField(dst []byte, c Codec, raw []byte) ([]byte, error) {
	dst, mark := BeginField(dst)
	dst, err := Seal(dst, c, raw)
	if err != nil {
		return dst[:mark], err
	}
	return EndField(dst, mark), nil
}

func appendEnvelopeHeader(dst []byte, c Codec, rawLen uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, byte(c)), rawLen)
}

var lz4Compressors = sync.Pool{New: func() any { return new(lz4.Compressor) }}

// appendLZ4 appends the LZ4 block of raw; on no gain it appends a body as
// long as raw so that Seal falls back to Identity.
func appendLZ4(dst, raw []byte) []byte {
	bound := lz4.CompressBlockBound(len(raw))
	dst = slices.Grow(dst, bound)
	out := dst[len(dst) : len(dst)+bound]
	c := lz4Compressors.Get().(*lz4.Compressor)
	n, err := c.CompressBlock(raw, out)
	lz4Compressors.Put(c)
	if err != nil || n == 0 || n >= len(raw) {
		return dst[:len(dst)+len(raw)]
	}
	return dst[:len(dst)+n]
}

// zstdDecoder is shared: DecodeAll is safe for concurrent use and keeps its
// own pool of block decoders. The cap limit makes DecodeAll refuse to grow
// the output past the capacity Open gives it (exactly rawLen).
var zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(math.MaxUint32),
	)
	if err != nil {
		panic("wire: zstd decoder: " + err.Error())
	}
	return d
})

// zstdEncoder is shared: EncodeAll is safe for concurrent use.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithEncoderLevel(zstd.SpeedDefault),
	)
	if err != nil {
		panic("wire: zstd encoder: " + err.Error())
	}
	return e
})
