package lease

import (
	"bytes"
	"testing"
)

// FuzzParseToken: whatever text arrives, Parse never panics, and a token
// that parses has valid claims and exactly one spelling: re-encoding its
// claims and signature gives back the same text.
func FuzzParseToken(f *testing.F) {
	good := newFixture()
	f.Add(good.token(f))
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		tok, err := Parse(text)
		if err != nil {
			return
		}
		if err := tok.Claims.Validate(); err != nil {
			t.Fatalf("parsed claims invalid: %v", err)
		}
		packed := tok.Claims.appendPacked(nil)
		if !bytes.Equal(packed, tok.packed) {
			t.Fatalf("claims have a second encoding:\n got %x\nwant %x", tok.packed, packed)
		}
		raw := appendRaw(nil, packed, tok.signature)
		if again := tokenEncoding.EncodeToString(raw); again != text {
			t.Fatalf("token has a second spelling: %q vs %q", text, again)
		}
		// Verification of arbitrary text must refuse cleanly or accept
		// only what the fixture's scheduler signed.
		if _, r := NewVerifier(0).Verify(text, good.ctx); r == nil && !tok.SignatureValid(schedulerKey.Public()) {
			t.Fatalf("accepted a token the scheduler did not sign")
		}
	})
}
