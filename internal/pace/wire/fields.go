package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// FieldPrefixLen is the size of a field's u32 BE length prefix.
const FieldPrefixLen = 4

// SplitFields splits payload into exactly n fields (pace-wire §1.4), appending
// sub-slices of payload to dst[:0]. Too few or too many fields, a length
// that overruns, or a trailing byte is ErrMalformedFrame. It allocates only
// when dst has less capacity than n.
func SplitFields(dst [][]byte, payload []byte, n int) ([][]byte, error) {
	dst = dst[:0]
	rest := payload
	for i := 0; i < n; i++ {
		f, tail, err := nextField(rest)
		if err != nil {
			return dst[:0], malformed("field %d of %d: %v", i+1, n, err)
		}
		dst = append(dst, f)
		rest = tail
	}
	if len(rest) != 0 {
		return dst[:0], malformed("%d bytes after the %d fields the verb takes", len(rest), n)
	}
	return dst, nil
}

// fieldError details why a field list did not parse.
type fieldError string

func (e fieldError) Error() string { return string(e) }

const (
	errShortPrefix fieldError = "truncated length prefix"
	errOverrun     fieldError = "length overruns the payload"
)

// nextField reads one field from b.
func nextField(b []byte) (field, rest []byte, err error) {
	if len(b) < FieldPrefixLen {
		return nil, nil, errShortPrefix
	}
	n := binary.BigEndian.Uint32(b)
	body := b[FieldPrefixLen:]
	if uint64(n) > uint64(len(body)) {
		return nil, nil, errOverrun
	}
	return body[:n:n], body[n:], nil
}

// CountFields counts the well-formed fields of a field list, refusing a
// list that is not exactly a sequence of fields.
func CountFields(b []byte) (int, error) {
	count := 0
	for len(b) > 0 {
		_, rest, err := nextField(b)
		if err != nil {
			return 0, malformed("field %d: %v", count+1, err)
		}
		b = rest
		count++
	}
	return count, nil
}

// AppendField appends one field: u32 BE length then the bytes. It panics
// on a field longer than a u32 can describe, which no caller can send.
func AppendField(dst, b []byte) []byte {
	if uint64(len(b)) > math.MaxUint32 {
		panic("wire: field longer than 4 GiB")
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// AppendStringField appends a text field.
func AppendStringField(dst []byte, s string) []byte {
	if uint64(len(s)) > math.MaxUint32 {
		panic("wire: field longer than 4 GiB")
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// AppendEmptyField appends a zero-length field: "absent".
func AppendEmptyField(dst []byte) []byte { return append(dst, 0, 0, 0, 0) }

// AppendU8Field appends a 1-byte field.
func AppendU8Field(dst []byte, v uint8) []byte { return append(dst, 0, 0, 0, 1, v) }

// AppendU32Field appends a 4-byte BE field.
func AppendU32Field(dst []byte, v uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, 0, 0, 0, 4), v)
}

// AppendU64Field appends an 8-byte BE field.
func AppendU64Field(dst []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, 0, 0, 0, 8), v)
}

// AppendOptU32Field appends v as a 4-byte field when present, else absent.
func AppendOptU32Field(dst []byte, v uint32, present bool) []byte {
	if !present {
		return AppendEmptyField(dst)
	}
	return AppendU32Field(dst, v)
}

// AppendOptU64Field appends v as an 8-byte field when present, else absent.
func AppendOptU64Field(dst []byte, v uint64, present bool) []byte {
	if !present {
		return AppendEmptyField(dst)
	}
	return AppendU64Field(dst, v)
}

// BeginField starts a field whose bytes the caller appends next (a nested
// record or list). It returns the grown dst and the mark EndField needs.
func BeginField(dst []byte) (out []byte, mark int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

// EndField patches the length of the field started at mark.
func EndField(dst []byte, mark int) []byte {
	n := len(dst) - mark - FieldPrefixLen
	if n < 0 || uint64(n) > math.MaxUint32 {
		panic("wire: EndField without a matching BeginField")
	}
	binary.BigEndian.PutUint32(dst[mark:], uint32(n))
	return dst
}

// U8 reads a field of exactly 1 byte.
func U8(f []byte) (uint8, error) {
	if len(f) != 1 {
		return 0, malformed("u8 field of %d bytes", len(f))
	}
	return f[0], nil
}

// U32 reads a field of exactly 4 bytes BE.
func U32(f []byte) (uint32, error) {
	if len(f) != 4 {
		return 0, malformed("u32 field of %d bytes", len(f))
	}
	return binary.BigEndian.Uint32(f), nil
}

// U64 reads a field of exactly 8 bytes BE.
func U64(f []byte) (uint64, error) {
	if len(f) != 8 {
		return 0, malformed("u64 field of %d bytes", len(f))
	}
	return binary.BigEndian.Uint64(f), nil
}

// OptU8 reads an optional u8: empty is absent, one byte is present.
func OptU8(f []byte) (v uint8, present bool, err error) {
	if len(f) == 0 {
		return 0, false, nil
	}
	v, err = U8(f)
	return v, err == nil, err
}

// OptU32 reads an optional u32: empty is absent, which is not zero.
func OptU32(f []byte) (v uint32, present bool, err error) {
	if len(f) == 0 {
		return 0, false, nil
	}
	v, err = U32(f)
	return v, err == nil, err
}

// OptU64 reads an optional u64: empty is absent, which is not zero.
func OptU64(f []byte) (v uint64, present bool, err error) {
	if len(f) == 0 {
		return 0, false, nil
	}
	v, err = U64(f)
	return v, err == nil, err
}

// Exact returns f when it is exactly n bytes (keys, nonces, signatures).
func Exact(f []byte, n int) ([]byte, error) {
	if len(f) != n {
		return nil, malformed("field of %d bytes where %d are required", len(f), n)
	}
	return f, nil
}

// OptExact returns f when it is empty (absent) or exactly n bytes.
func OptExact(f []byte, n int) (b []byte, present bool, err error) {
	if len(f) == 0 {
		return nil, false, nil
	}
	b, err = Exact(f, n)
	return b, err == nil, err
}

// Bounded returns f when it is at most maxLen bytes.
func Bounded(f []byte, maxLen int) ([]byte, error) {
	if len(f) > maxLen {
		return nil, ErrFieldTooLong
	}
	return f, nil
}

// Text returns f as a string when it is valid UTF-8 of at most maxLen
// bytes. Text a receiver keeps is refused, never repaired or truncated.
func Text(f []byte, maxLen int) (string, error) {
	if len(f) > maxLen {
		return "", ErrFieldTooLong
	}
	if !utf8.Valid(f) {
		return "", ErrInvalidUTF8
	}
	return string(f), nil
}
