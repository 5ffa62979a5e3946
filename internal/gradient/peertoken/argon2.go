package peertoken

import (
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Bounds on a stored PHC string's parameters. A row outside them verifies nothing: they keep
// one verification under 64 MiB and a few hundred milliseconds however the row was written,
// while admitting the common defaults (ours, the Rust argon2 crate's m=19456,t=2,p=1 and
// argon2-cffi's m=65536,t=3,p=4).
const (
	MaxMemoryKiB = 64 << 10
	MaxTime      = 8
	MaxThreads   = 16
	// maxWork bounds memory × passes (KiB-passes): 64 MiB may run 4 passes, 16 MiB 8.
	maxWork    = MaxMemoryKiB * 4
	minSaltLen = 8
	maxSaltLen = 64
	minKeyLen  = 16
	maxKeyLen  = 64
)

// ErrParams: argon2id parameters outside the bounds above.
var ErrParams = errors.New("peertoken: argon2id parameters out of bounds")

// ErrMalformedPHC: a stored hash that starts with '$' is not a canonical argon2id PHC string.
var ErrMalformedPHC = errors.New("peertoken: malformed argon2id PHC string")

// Params are argon2id's cost parameters and output sizes.
type Params struct {
	MemoryKiB uint32 // m
	Time      uint32 // t, passes over memory
	Threads   uint8  // p, lanes
	SaltLen   int
	KeyLen    int
}

// DefaultParams are what the server hashes new tokens with: OWASP's m=19 MiB, t=2, p=1
// (also the Rust argon2 crate's default), measured at roughly 25-50 ms per verification on
// the project's 2-core machines (BenchmarkVerifyArgon2id). One lane, because the server may
// verify several sessions' tokens at once and a second lane buys no latency then.
var DefaultParams = Params{MemoryKiB: 19456, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}

// HashArgon2id hashes a token with DefaultParams and a fresh 16-byte salt, returning the
// PHC string `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (unpadded standard base64).
func HashArgon2id(token string, rand io.Reader) (string, error) {
	return DefaultParams.Hash(token, rand)
}

// Hash hashes a token with these parameters; ErrParams when Verify would refuse them.
func (p Params) Hash(token string, rand io.Reader) (string, error) {
	if err := p.check(); err != nil {
		return "", err
	}
	salt, err := randomBytes(rand, p.SaltLen)
	if err != nil {
		return "", err
	}
	h := phc{params: p, salt: salt}
	h.key = h.derive(token)
	return h.String(), nil
}

func (p Params) check() error {
	switch {
	case p.MemoryKiB == 0 || p.MemoryKiB > MaxMemoryKiB,
		p.Time == 0 || p.Time > MaxTime,
		p.Threads == 0 || p.Threads > MaxThreads,
		uint64(p.MemoryKiB)*uint64(p.Time) > maxWork,
		p.MemoryKiB < 8*uint32(p.Threads), // argon2's own minimum; x/crypto would round up silently
		p.SaltLen < minSaltLen || p.SaltLen > maxSaltLen,
		p.KeyLen < minKeyLen || p.KeyLen > maxKeyLen:
		return fmt.Errorf("%w: m=%d t=%d p=%d salt=%d key=%d", ErrParams,
			p.MemoryKiB, p.Time, p.Threads, p.SaltLen, p.KeyLen)
	}
	return nil
}

// phc is a parsed argon2id PHC string.
type phc struct {
	params    Params
	salt, key []byte
}

var b64 = base64.RawStdEncoding.Strict()

func (h phc) String() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		h.params.MemoryKiB, h.params.Time, h.params.Threads, b64.EncodeToString(h.salt), b64.EncodeToString(h.key))
}

func (h phc) derive(token string) []byte {
	return argon2.IDKey([]byte(token), h.salt, h.params.Time, h.params.MemoryKiB, h.params.Threads, uint32(h.params.KeyLen))
}

func (h phc) matches(token string) bool {
	return subtle.ConstantTimeCompare(h.derive(token), h.key) == 1
}

// parsePHC accepts exactly the canonical form String writes, with every parameter checked
// against the bounds and every length checked before it is decoded.
func parsePHC(s string) (phc, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return phc{}, fmt.Errorf("%w: want $argon2id$v=19$m=,t=,p=$salt$hash", ErrMalformedPHC)
	}
	p, err := parseParams(parts[3])
	if err != nil {
		return phc{}, err
	}
	h := phc{params: p}
	if h.salt, err = decodeB64(parts[4], minSaltLen, maxSaltLen); err != nil {
		return phc{}, fmt.Errorf("salt: %w", err)
	}
	if h.key, err = decodeB64(parts[5], minKeyLen, maxKeyLen); err != nil {
		return phc{}, fmt.Errorf("hash: %w", err)
	}
	h.params.SaltLen, h.params.KeyLen = len(h.salt), len(h.key)
	if err := h.params.check(); err != nil {
		return phc{}, err
	}
	return h, nil
}

// parseParams reads "m=<n>,t=<n>,p=<n>" in that order, with canonical decimal numbers.
func parseParams(s string) (Params, error) {
	fields := strings.Split(s, ",")
	if len(fields) != 3 {
		return Params{}, fmt.Errorf("%w: want m=,t=,p=", ErrMalformedPHC)
	}
	var vals [3]uint64
	limits := [3]uint64{MaxMemoryKiB, MaxTime, MaxThreads}
	for i, name := range []string{"m=", "t=", "p="} {
		digits, ok := strings.CutPrefix(fields[i], name)
		if !ok {
			return Params{}, fmt.Errorf("%w: parameter %d is not %s", ErrMalformedPHC, i, name)
		}
		v, err := canonicalUint(digits)
		if err != nil {
			return Params{}, err
		}
		if v == 0 || v > limits[i] {
			return Params{}, fmt.Errorf("%w: %s%d", ErrParams, name, v)
		}
		vals[i] = v
	}
	return Params{MemoryKiB: uint32(vals[0]), Time: uint32(vals[1]), Threads: uint8(vals[2])}, nil
}

// canonicalUint parses a decimal without sign or leading zeros, at most 10 digits.
func canonicalUint(s string) (uint64, error) {
	if s == "" || len(s) > 10 || (s[0] == '0' && len(s) > 1) || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%w: bad number %q", ErrMalformedPHC, s)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: bad number %q", ErrMalformedPHC, s)
	}
	return v, nil
}

// decodeB64 decodes unpadded standard base64 of minLen..maxLen bytes, checking the encoded
// length first so nothing larger is ever allocated, and the alphabet first because the
// decoder itself skips '\r' and '\n' (which would give one hash two spellings).
func decodeB64(s string, minLen, maxLen int) ([]byte, error) {
	if len(s) < b64.EncodedLen(minLen) || len(s) > b64.EncodedLen(maxLen) {
		return nil, fmt.Errorf("%w: %d base64 characters out of range", ErrMalformedPHC, len(s))
	}
	if strings.IndexFunc(s, notB64Char) >= 0 {
		return nil, fmt.Errorf("%w: character outside the base64 alphabet", ErrMalformedPHC)
	}
	out, err := b64.DecodeString(s)
	if err != nil || len(out) < minLen || len(out) > maxLen {
		return nil, fmt.Errorf("%w: bad base64", ErrMalformedPHC)
	}
	return out, nil
}

func notB64Char(c rune) bool {
	return !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/')
}
