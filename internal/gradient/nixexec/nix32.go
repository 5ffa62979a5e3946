package nixexec

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// nix32Alphabet is Nix's base-32 alphabet: digits and lowercase letters without e, o, u, t.
const nix32Alphabet = "0123456789abcdfghijklmnpqrsvwxyz"

// ErrBadHash: a hash string is in none of the forms Nix or gradient use.
var ErrBadHash = errors.New("nixexec: unrecognised hash")

// Nix32 encodes b in Nix's base-32: ceil(8·len/5) characters, the last character holding the
// least significant bits of b[0] (Nix reads the bytes least significant first).
func Nix32(b []byte) string {
	n := (len(b)*8 + 4) / 5
	out := make([]byte, n)
	for i := range n {
		bit := (n - 1 - i) * 5
		byteIdx, shift := bit/8, uint(bit%8)
		c := uint(b[byteIdx]) >> shift
		if byteIdx+1 < len(b) {
			c |= uint(b[byteIdx+1]) << (8 - shift)
		}
		out[i] = nix32Alphabet[c&0x1f]
	}
	return string(out)
}

// DecodeNix32 reverses Nix32 for a hash of size bytes.
func DecodeNix32(s string, size int) ([]byte, error) {
	if len(s) != (size*8+4)/5 {
		return nil, fmt.Errorf("%w: nix32 of %d bytes needs %d characters, got %d", ErrBadHash, size, (size*8+4)/5, len(s))
	}
	out := make([]byte, size)
	for i := range len(s) {
		digit := strings.IndexByte(nix32Alphabet, s[len(s)-1-i])
		if digit < 0 {
			return nil, fmt.Errorf("%w: %q is not a nix32 character", ErrBadHash, s[len(s)-1-i])
		}
		bit := i * 5
		byteIdx, shift := bit/8, uint(bit%8)
		out[byteIdx] |= byte(digit << shift)
		carry := byte(digit >> (8 - shift))
		if byteIdx+1 < size {
			out[byteIdx+1] |= carry
		} else if carry != 0 {
			return nil, fmt.Errorf("%w: nix32 value overflows %d bytes", ErrBadHash, size)
		}
	}
	return out, nil
}

// SHA256Text is how gradient writes a SHA-256 on the wire: "sha256:<nix32>" (spec §10 Q2).
func SHA256Text(sum []byte) string { return "sha256:" + Nix32(sum) }

// ParseSHA256 reads a SHA-256 written as Nix SRI ("sha256-<base64>"), "sha256:<nix32>",
// "sha256:<hex>", or bare nix32 (52 characters) or hex (64 characters).
func ParseSHA256(s string) ([]byte, error) {
	if b64, ok := strings.CutPrefix(s, "sha256-"); ok {
		sum, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(sum) != 32 {
			return nil, fmt.Errorf("%w: SRI %q", ErrBadHash, s)
		}
		return sum, nil
	}
	body := strings.TrimPrefix(s, "sha256:")
	switch len(body) {
	case 52:
		return DecodeNix32(body, 32)
	case 64:
		sum, err := hex.DecodeString(body)
		if err != nil {
			return nil, fmt.Errorf("%w: hex %q", ErrBadHash, s)
		}
		return sum, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrBadHash, s)
}

// SRIToNix32 converts Nix's SRI form ("sha256-<base64>") to "sha256:<nix32>".
func SRIToNix32(sri string) (string, error) {
	if !strings.HasPrefix(sri, "sha256-") {
		return "", fmt.Errorf("%w: %q is not a sha256 SRI hash", ErrBadHash, sri)
	}
	sum, err := ParseSHA256(sri)
	if err != nil {
		return "", err
	}
	return SHA256Text(sum), nil
}

// sriSHA256 writes a SHA-256 in Nix's SRI form.
func sriSHA256(sum []byte) string { return "sha256-" + base64.StdEncoding.EncodeToString(sum) }
