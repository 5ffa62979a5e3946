package peertoken

import (
	"strings"
	"testing"
)

// FuzzVerify feeds arbitrary stored hashes and tokens to Verify. It must never panic, must
// refuse (without computing) anything outside the parameter bounds, and the PHC parser must
// be canonical: whatever it accepts re-encodes to exactly the input, so one hash has one
// spelling and no lenient path exists. Seeds: testdata/fuzz/FuzzVerify.
func FuzzVerify(f *testing.F) {
	for _, v := range referenceVectors[:3] {
		f.Add(v.phc, v.password)
	}
	f.Add(SHA256Hex("hello"), "hello")
	f.Fuzz(func(t *testing.T, stored, token string) {
		got := Verify(stored, token)
		h, err := parsePHC(stored)
		if err != nil {
			if got && strings.HasPrefix(stored, "$") {
				t.Fatalf("Verify accepted %q that parsePHC refuses: %v", stored, err)
			}
			return
		}
		if h.String() != stored {
			t.Fatalf("parsePHC accepted a non-canonical spelling:\n in  %q\n out %q", stored, h.String())
		}
		if h.params.check() != nil {
			t.Fatalf("parsePHC accepted out-of-bounds parameters %+v", h.params)
		}
		if got && (token == "" || len(token) > MaxTokenLen) {
			t.Fatalf("Verify accepted a token of length %d", len(token))
		}
	})
}
