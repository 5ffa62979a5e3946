package edkey

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestKeyTextRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(rt, "seed")
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		text := Text(pub)
		if len(text) != TextLen || strings.ContainsAny(text, "+/=") {
			rt.Fatalf("key text %q is not 43 chars of unpadded base64url", text)
		}
		got, err := Parse(text)
		if err != nil || !got.Equal(pub) {
			rt.Fatalf("Parse(%q) = %x, %v; want %x", text, got, err, pub)
		}
	})
}

func TestParseKeyTextRefusals(t *testing.T) {
	good := Text(ed25519.NewKeyFromSeed(make([]byte, 32)).Public().(ed25519.PublicKey))
	// The last character carries 4 bits, of which the low 2 must be zero:
	// the next character of the alphabet decodes to the same key.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, good[TextLen-1])
	if last%4 != 0 {
		t.Fatalf("fixture: last character of %q should carry two zero bits", good)
	}
	nonCanonicalTail := good[:TextLen-1] + string(alphabet[last+1])
	smallOrder := Text(smallOrderKeys[4][:])
	var offCurve string
	for y := byte(2); offCurve == ""; y++ {
		enc := make([]byte, 32)
		enc[0] = y
		if checkPointEncoding(enc) == ErrKeyNotOnCurve {
			offCurve = Text(enc)
		}
	}
	cases := map[string]struct {
		text string
		want error
	}{
		"empty":              {"", ErrText},
		"42 characters":      {good[:42], ErrText},
		"44 characters":      {good + "A", ErrText},
		"padded":             {good[:42] + "=", ErrText},
		"standard alphabet":  {"+" + good[1:], ErrText},
		"non-canonical tail": {nonCanonicalTail, ErrText},
		"small order":        {smallOrder, ErrKeySmallOrder},
		"not on the curve":   {offCurve, ErrKeyNotOnCurve},
	}
	for name, c := range cases {
		if _, err := Parse(c.text); !errors.Is(err, c.want) {
			t.Errorf("%s (%q): got %v, want %v", name, c.text, err, c.want)
		}
	}
}
