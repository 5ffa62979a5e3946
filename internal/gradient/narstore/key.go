package narstore

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxKeyName bounds a partial's file name well under the usual 255-byte limit.
const maxKeyName = 160

// partialName turns a caller's key into a file name: bytes outside [A-Za-z0-9.-] (and a
// leading dot) become _xx, so distinct keys never share a file and no key reaches outside
// the partial directory; a key too long for that is named by its SHA-256.
func partialName(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if safeKeyByte(c) && !(i == 0 && c == '.') {
			b.WriteByte(c)
			continue
		}
		const digits = "0123456789abcdef"
		b.WriteByte('_')
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&0xf])
	}
	if b.Len() == 0 || b.Len() > maxKeyName {
		sum := sha256.Sum256([]byte(key))
		return "_sha256_" + hex.EncodeToString(sum[:]) + partialExt
	}
	return b.String() + partialExt
}

func safeKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}
