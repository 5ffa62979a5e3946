package peertoken

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMalformedHash: a stored hash is neither a canonical argon2id PHC string within the bounds
// nor 64 lowercase hex digits, so Verify would match no token against it.
var ErrMalformedHash = errors.New("peertoken: malformed stored token hash")

// CheckStored reports whether Verify can ever match a token against storedHash, so that a file
// of hashes can be refused when it is read rather than failing every token later. The error
// says what is wrong with the form; it never includes the hash.
func CheckStored(storedHash string) error {
	if strings.HasPrefix(storedHash, "$") {
		if _, err := parsePHC(storedHash); err != nil {
			return fmt.Errorf("%w: %w", ErrMalformedHash, err)
		}
		return nil
	}
	if !isSHA256Hex(storedHash) {
		return fmt.Errorf("%w: want an argon2id PHC string or 64 lowercase hex digits", ErrMalformedHash)
	}
	return nil
}
