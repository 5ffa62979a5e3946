package nixhash

import (
	"bytes"
	"testing"
)

// FuzzParse: Parse never panics, and whatever it accepts prints in a canonical form that
// parses back to the same digest.
func FuzzParse(f *testing.F) {
	for _, k := range known {
		f.Add("sha256:" + k.nix32)
		f.Add("sha256:" + k.hex)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := Parse(s)
		if err != nil {
			return
		}
		canon := h.String()
		back, err := Parse(canon)
		if err != nil || back != h {
			t.Fatalf("Parse(%q) = %s, which parses back as %s, %v", s, canon, back, err)
		}
	})
}

// FuzzDecodeBase32: a decoded string encodes back to itself (the encoding is canonical:
// overflowing values are refused, not truncated).
func FuzzDecodeBase32(f *testing.F) {
	f.Add("0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73")
	f.Add("0iz84xy22rpj9d46qj6dz4sbicjazq3d")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := DecodeBase32(s)
		if err != nil {
			return
		}
		if got := EncodeBase32(b); got != s {
			t.Fatalf("DecodeBase32(%q) = %x, which encodes as %q", s, b, got)
		}
		if again, _ := DecodeBase32(EncodeBase32(b)); !bytes.Equal(again, b) {
			t.Fatalf("unstable round trip for %x", b)
		}
	})
}
