package value

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Generation is the value generation this build writes and accepts (pace-wire §5.4). Generations
// MinGeneration..MaxGeneration are the reserved range: a first byte in that range names both the
// framing and the canonicalization rules of the value.
const (
	Generation    = 1
	MinGeneration = 1
	MaxGeneration = 15
)

// Region positions as pace-cc stores them (pace-wire §2.2): regions 0 and 1 are replayed as
// streams, region 2 is written out as the depfile when the compile produced one.
const (
	RegionStdout  = 0
	RegionStderr  = 1
	RegionDepfile = 2
)

// MaxRegions is a local cap on regionCount. pace-cc writes at most three; the cap keeps a large
// value from declaring millions of empty regions and costing their headers in memory.
const MaxRegions = 256

// regionHeaderLen is the fixed cost of one region: grammar byte plus text length.
const regionHeaderLen = 1 + 4

var (
	// ErrNotAValue: the bytes are not a compile-value of any generation (pace-kv answers
	// malformed-value).
	ErrNotAValue = errors.New("not a compile-value")
	// ErrForeignGeneration: a well-formed value of another in-range generation (pace-kv answers
	// foreign-value-generation on STORE and Miss on FETCH). Returned as a *GenerationError.
	ErrForeignGeneration = errors.New("foreign value generation")
	// ErrTooLong: a part of a Value is too long for its u32 length field.
	ErrTooLong = errors.New("value part longer than a u32 length allows")
)

// GenerationError reports a well-formed value of a generation this build does not write.
type GenerationError struct {
	Got  uint8 // the value's generation
	Want uint8 // Generation
}

func (e *GenerationError) Error() string {
	return fmt.Sprintf("value generation %d is foreign: this build reads and writes generation %d", e.Got, e.Want)
}

// Is makes errors.Is(err, ErrForeignGeneration) hold.
func (e *GenerationError) Is(target error) bool { return target == ErrForeignGeneration }

// Region is one tagged text region.
type Region struct {
	Grammar Grammar
	Text    []byte
}

// Value is a decoded compile-value of this build's generation.
type Value struct {
	Object  []byte
	Regions []Region
}

// EncodedLen is the number of bytes Encode produces for v.
func EncodedLen(v Value) int {
	n := 1 + 4 + len(v.Object) + 4
	for _, r := range v.Regions {
		n += regionHeaderLen + len(r.Text)
	}
	return n
}

// Encode frames v as a generation-Generation compile-value.
func Encode(v Value) ([]byte, error) {
	return AppendEncode(make([]byte, 0, EncodedLen(v)), v)
}

// AppendEncode appends the framing of v to dst.
func AppendEncode(dst []byte, v Value) ([]byte, error) {
	if err := checkEncodable(v); err != nil {
		return nil, err
	}
	dst = append(dst, Generation)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Object)))
	dst = append(dst, v.Object...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Regions)))
	for _, r := range v.Regions {
		dst = append(dst, byte(r.Grammar))
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.Text)))
		dst = append(dst, r.Text...)
	}
	return dst, nil
}

func checkEncodable(v Value) error {
	if uint64(len(v.Object)) > math.MaxUint32 {
		return fmt.Errorf("object of %d bytes: %w", len(v.Object), ErrTooLong)
	}
	if len(v.Regions) > MaxRegions {
		return fmt.Errorf("%d regions, at most %d: %w", len(v.Regions), MaxRegions, ErrTooLong)
	}
	for i, r := range v.Regions {
		if !r.Grammar.Known() {
			return fmt.Errorf("region %d: %w", i, &UnknownGrammarError{Grammar: r.Grammar})
		}
		if uint64(len(r.Text)) > math.MaxUint32 {
			return fmt.Errorf("region %d of %d bytes: %w", i, len(r.Text), ErrTooLong)
		}
	}
	return nil
}

// Decode parses b. A value of this build's generation is returned with sub-slices of b; a
// well-formed value of another reserved generation is a *GenerationError (ErrForeignGeneration);
// anything else is ErrNotAValue.
func Decode(b []byte) (Value, error) {
	if len(b) == 0 {
		return Value{}, fmt.Errorf("empty: %w", ErrNotAValue)
	}
	gen := b[0]
	if gen < MinGeneration || gen > MaxGeneration {
		return Value{}, fmt.Errorf("generation byte %d outside %d..%d: %w", gen, MinGeneration, MaxGeneration, ErrNotAValue)
	}
	// Grammar tags are per generation: a foreign value only has to be well framed.
	v, err := decodeFrame(b[1:], gen == Generation)
	if err != nil {
		return Value{}, err
	}
	if gen != Generation {
		return Value{}, &GenerationError{Got: gen, Want: Generation}
	}
	return v, nil
}

// HasCurrentGeneration reports whether b starts with this build's generation byte: the cheap
// check a FETCH makes before serving stored bytes (a foreign value is a Miss).
func HasCurrentGeneration(b []byte) bool { return len(b) > 0 && b[0] == Generation }

// HeaderLen is a value's generation byte and object length: what a reader that streams the
// object elsewhere (pace-cc writing a hit straight to its output file) needs first.
const HeaderLen = 5

// ParseHeader reads a value's first HeaderLen bytes and returns the object's length. A value of
// another generation, or bytes that are not a value, are refused as Decode would.
func ParseHeader(h []byte) (uint32, error) {
	if len(h) < HeaderLen {
		return 0, fmt.Errorf("%d-byte header: %w", len(h), ErrNotAValue)
	}
	switch gen := h[0]; {
	case gen < MinGeneration || gen > MaxGeneration:
		return 0, fmt.Errorf("generation byte %d outside %d..%d: %w", gen, MinGeneration, MaxGeneration, ErrNotAValue)
	case gen != Generation:
		return 0, &GenerationError{Got: gen, Want: Generation}
	}
	return binary.BigEndian.Uint32(h[1:]), nil
}

// DecodeRegions decodes what follows the object: the region count and the regions, exactly
// filling b.
func DecodeRegions(b []byte) ([]Region, error) {
	r := reader{buf: b}
	return r.regions(true)
}

func decodeFrame(b []byte, checkGrammars bool) (Value, error) {
	r := reader{buf: b}
	object, ok := r.field()
	if !ok {
		return Value{}, fmt.Errorf("object length exceeds the %d bytes left: %w", len(b)-4, ErrNotAValue)
	}
	regions, err := r.regions(checkGrammars)
	if err != nil {
		return Value{}, err
	}
	return Value{Object: object, Regions: regions}, nil
}

// regions reads the region count and the regions, which must end the buffer.
func (r *reader) regions(checkGrammars bool) ([]Region, error) {
	count, ok := r.u32()
	if !ok {
		return nil, fmt.Errorf("no region count: %w", ErrNotAValue)
	}
	// Refuse before reserving: every region costs at least its 5-byte header.
	if uint64(count) > uint64(r.remaining()/regionHeaderLen) || count > MaxRegions {
		return nil, fmt.Errorf("region count %d with %d bytes left (cap %d): %w", count, r.remaining(), MaxRegions, ErrNotAValue)
	}
	var regions []Region
	if count > 0 {
		regions = make([]Region, 0, count)
	}
	for i := range count {
		reg, err := r.region(i, checkGrammars)
		if err != nil {
			return nil, err
		}
		regions = append(regions, reg)
	}
	if r.remaining() != 0 {
		return nil, fmt.Errorf("%d trailing bytes: %w", r.remaining(), ErrNotAValue)
	}
	return regions, nil
}

// reader walks a byte slice without copying.
type reader struct {
	buf []byte
	off int
}

func (r *reader) remaining() int { return len(r.buf) - r.off }

func (r *reader) u8() (byte, bool) {
	if r.remaining() < 1 {
		return 0, false
	}
	r.off++
	return r.buf[r.off-1], true
}

func (r *reader) u32() (uint32, bool) {
	if r.remaining() < 4 {
		return 0, false
	}
	v := binary.BigEndian.Uint32(r.buf[r.off:])
	r.off += 4
	return v, true
}

// field reads [u32 len][bytes], returning a sub-slice with its capacity clipped so an append by
// the caller can never overwrite the bytes that follow.
func (r *reader) field() ([]byte, bool) {
	n, ok := r.u32()
	if !ok || uint64(n) > uint64(r.remaining()) {
		return nil, false
	}
	f := r.buf[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return f, true
}

func (r *reader) region(i uint32, checkGrammar bool) (Region, error) {
	tag, ok := r.u8()
	if !ok {
		return Region{}, fmt.Errorf("region %d: no grammar byte: %w", i, ErrNotAValue)
	}
	g := Grammar(tag)
	if checkGrammar && !g.Known() {
		return Region{}, fmt.Errorf("region %d: %w: %w", i, &UnknownGrammarError{Grammar: g}, ErrNotAValue)
	}
	text, ok := r.field()
	if !ok {
		return Region{}, fmt.Errorf("region %d: text length exceeds the bytes left: %w", i, ErrNotAValue)
	}
	return Region{Grammar: g, Text: text}, nil
}
