package peertoken

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestMintAPIKeyShapeAndHash(t *testing.T) {
	src := bytes.Repeat([]byte{0xfb, 0xef, 0xbe}, 11)[:APIKeyBytes]
	key, hash, err := MintAPIKey(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	secret, ok := strings.CutPrefix(key, "GRAD")
	if !ok {
		t.Fatalf("key %q lacks the GRAD prefix", key)
	}
	raw, err := base64.RawURLEncoding.DecodeString(secret)
	if err != nil || !bytes.Equal(raw, src) {
		t.Fatalf("key secret %q is not base64url of the random bytes: %v", secret, err)
	}
	if hash != SHA256Hex(secret) {
		t.Errorf("hash = %s, want SHA-256 hex of the part after GRAD", hash)
	}
	if _, _, err := MintAPIKey(bytes.NewReader(src[:5])); !errors.Is(err, ErrRandom) {
		t.Errorf("short randomness: want ErrRandom, got %v", err)
	}
}

func TestAPIKeyHash(t *testing.T) {
	const secret = "abc_DEF-123"
	want := SHA256Hex(secret)
	tests := []struct {
		name, header string
		ok           bool
	}{
		{"bare", "GRAD" + secret, true},
		{"bearer", "Bearer GRAD" + secret, true},
		{"bearer lowercase scheme", "bearer GRAD" + secret, true},
		{"bearer extra spaces", "Bearer   GRAD" + secret, true},
		{"surrounding whitespace", "  GRAD" + secret + " ", true},
		{"empty", "", false},
		{"prefix only", "GRAD", false},
		{"bearer prefix only", "Bearer GRAD", false},
		{"lowercase prefix", "grad" + secret, false},
		{"basic scheme", "Basic GRAD" + secret, false},
		{"bearer without GRAD", "Bearer " + secret, false},
		{"space inside key", "GRAD" + secret + " x", false},
		{"control inside key", "GRAD" + secret + "\x00", false},
		{"non-ascii", "GRAD" + secret + "é", false},
		{"oversized", "GRAD" + strings.Repeat("a", maxAPIKeyLen+1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := APIKeyHash(tc.header)
			if ok != tc.ok {
				t.Fatalf("APIKeyHash(%q) ok = %v, want %v", tc.header, ok, tc.ok)
			}
			if ok && got != want {
				t.Errorf("hash = %s, want %s", got, want)
			}
		})
	}
}
