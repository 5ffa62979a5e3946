package nixexec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Vectors from `nix hash to-base32` (nix 2.8).
func TestNix32MatchesNix(t *testing.T) {
	cases := []struct{ hex, nix32 string }{
		{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73"},
		{"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03", "00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq"},
		{"da39a3ee5e6b4b0d3255bfef95601890afd80709", "143xibwh31h9bvxzalr0sjvbbvpa6ffs"},
		{"", ""},
	}
	for _, c := range cases {
		b := mustHex(t, c.hex)
		if got := Nix32(b); got != c.nix32 {
			t.Errorf("Nix32(%s) = %s, want %s", c.hex, got, c.nix32)
		}
		back, err := DecodeNix32(c.nix32, len(b))
		if err != nil || !bytes.Equal(back, b) {
			t.Errorf("DecodeNix32(%s) = %x, %v", c.nix32, back, err)
		}
	}
}

func TestNix32RoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes")
		back, err := DecodeNix32(Nix32(b), len(b))
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("round trip of %x: %x, %v", b, back, err)
		}
	})
}

func TestParseSHA256AcceptsEveryForm(t *testing.T) {
	want := mustHex(t, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
	forms := []string{
		"sha256-WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=",
		"sha256:00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq",
		"00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq",
		"sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
		"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
	}
	for _, f := range forms {
		got, err := ParseSHA256(f)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseSHA256(%q) = %x, %v", f, got, err)
		}
	}
	if got, err := SRIToNix32(forms[0]); err != nil || got != forms[1] {
		t.Errorf("SRIToNix32 = %q, %v", got, err)
	}
	for _, bad := range []string{"", "sha256-", "sha256:zz", "md5-AAAA", "sha256:" + "e" + forms[2][1:], "sha256-AAAA"} {
		if _, err := ParseSHA256(bad); !errors.Is(err, ErrBadHash) {
			t.Errorf("ParseSHA256(%q) err = %v, want ErrBadHash", bad, err)
		}
	}
}

// DecodeNix32 must refuse a value whose top bits overflow the hash size rather than drop them.
func TestDecodeNix32RefusesOverflow(t *testing.T) {
	if _, err := DecodeNix32("z"+"0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73"[1:], 32); !errors.Is(err, ErrBadHash) {
		t.Fatalf("err = %v, want ErrBadHash", err)
	}
}

func FuzzParseSHA256(f *testing.F) {
	f.Add("sha256-WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=")
	f.Add("sha256:00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq")
	f.Fuzz(func(t *testing.T, s string) {
		sum, err := ParseSHA256(s)
		if err != nil {
			return
		}
		if len(sum) != 32 {
			t.Fatalf("%q parsed to %d bytes", s, len(sum))
		}
		again, err := ParseSHA256(SHA256Text(sum))
		if err != nil || !bytes.Equal(again, sum) {
			t.Fatalf("%q: re-parse of %s: %x, %v", s, SHA256Text(sum), again, err)
		}
	})
}
