package nixhash

import (
	"errors"
	"fmt"
)

// Alphabet is Nix's base-32 alphabet: digits and lowercase letters without e, o, t, u.
const Alphabet = "0123456789abcdfghijklmnpqrsvwxyz"

// ErrInvalid: a text is not a valid encoding or hash string. Errors wrap it; test with
// errors.Is.
var ErrInvalid = errors.New("nixhash: invalid hash text")

// digitOf maps a byte to its base-32 digit, or -1.
var digitOf = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(Alphabet); i++ {
		t[Alphabet[i]] = int8(i)
	}
	return t
}()

// EncodedLen is the length of the base-32 encoding of n bytes: ceil(8n/5).
func EncodedLen(n int) int { return (n*8 + 4) / 5 }

// DecodedLen is the byte count whose encoding is n characters long, or -1 when no byte
// count encodes to exactly n characters.
func DecodedLen(n int) int {
	size := n * 5 / 8
	if EncodedLen(size) != n {
		return -1
	}
	return size
}

// EncodeBase32 writes b in Nix's base-32. Character i (from the left) holds bits
// [5(len-1-i), 5(len-i)) of b read as a little-endian number.
func EncodeBase32(b []byte) string {
	n := EncodedLen(len(b))
	out := make([]byte, n)
	for i := range n {
		bit := (n - 1 - i) * 5
		idx, shift := bit/8, uint(bit%8)
		c := uint(b[idx]) >> shift
		if idx+1 < len(b) {
			c |= uint(b[idx+1]) << (8 - shift)
		}
		out[i] = Alphabet[c&0x1f]
	}
	return string(out)
}

// DecodeBase32 reverses EncodeBase32. The byte count follows from the length (52
// characters are 32 bytes); a length no byte count encodes to, a character outside the
// alphabet, or a value too large for the byte count is refused.
func DecodeBase32(s string) ([]byte, error) {
	size := DecodedLen(len(s))
	if size < 0 {
		return nil, fmt.Errorf("%w: %d is not the length of a base-32 encoding", ErrInvalid, len(s))
	}
	out := make([]byte, size)
	for i := 0; i < len(s); i++ {
		d := digitOf[s[len(s)-1-i]]
		if d < 0 {
			return nil, fmt.Errorf("%w: %q is not a base-32 character", ErrInvalid, s[len(s)-1-i])
		}
		bit := i * 5
		idx, shift := bit/8, uint(bit%8)
		out[idx] |= byte(int(d) << shift)
		carry := byte(int(d) >> (8 - shift))
		if idx+1 < size {
			out[idx+1] |= carry
		} else if carry != 0 {
			return nil, fmt.Errorf("%w: base-32 value overflows %d bytes", ErrInvalid, size)
		}
	}
	return out, nil
}

// IsBase32 reports whether every byte of s is in Alphabet (for store path hash parts,
// which are 32 characters of a 20-byte digest).
func IsBase32(s string) bool {
	for i := 0; i < len(s); i++ {
		if digitOf[s[i]] < 0 {
			return false
		}
	}
	return true
}
