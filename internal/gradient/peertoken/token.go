package peertoken

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// TokenBytes is the amount of randomness in a peer token (gradient-protocol §4.2: 48 random
// bytes).
const TokenBytes = 48

// MaxTokenLen bounds a presented token: no token we mint comes near it, and a longer one is
// refused before any hashing.
const MaxTokenLen = 1024

// ErrRandom: the random source failed; nothing was minted.
var ErrRandom = errors.New("peertoken: random source failed")

// Mint returns a fresh peer token: TokenBytes random bytes in standard base64 (64
// characters, no padding needed). Tokens never contain ':' or whitespace, so they fit a
// peers-file line `peer_id:token` as they are.
func Mint(rand io.Reader) (string, error) {
	buf, err := randomBytes(rand, TokenBytes)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf), nil
}

// Verify reports whether token matches storedHash: an argon2id PHC string when storedHash
// starts with '$', else the legacy lowercase SHA-256 hex of the token. A malformed stored
// hash, an empty or oversized token, or a PHC string whose parameters exceed the bounds
// verifies nothing. The final comparison runs in constant time.
func Verify(storedHash, token string) bool {
	if token == "" || len(token) > MaxTokenLen {
		return false
	}
	if strings.HasPrefix(storedHash, "$") {
		phc, err := parsePHC(storedHash)
		if err != nil {
			return false
		}
		return phc.matches(token)
	}
	return verifySHA256Hex(storedHash, token)
}

// SHA256Hex is the legacy stored form of a token: its lowercase SHA-256 hex.
func SHA256Hex(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// verifySHA256Hex compares in constant time; only exactly 64 lowercase hex digits count.
func verifySHA256Hex(storedHash, token string) bool {
	if !isSHA256Hex(storedHash) {
		return false
	}
	want := SHA256Hex(token)
	return subtle.ConstantTimeCompare([]byte(want), []byte(storedHash)) == 1
}

// isSHA256Hex reports whether s has the legacy stored form: 64 lowercase hex digits.
func isSHA256Hex(s string) bool { return len(s) == 2*sha256.Size && isLowerHex(s) }

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func randomBytes(rand io.Reader, n int) ([]byte, error) {
	if rand == nil {
		return nil, fmt.Errorf("%w: no random source", ErrRandom)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rand, buf); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRandom, err)
	}
	return buf, nil
}
