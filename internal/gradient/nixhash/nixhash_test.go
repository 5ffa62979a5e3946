package nixhash

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Known values computed with Nix 2.8 on this machine:
// `nix hash to-base32 --type sha256 <hex>` and `nix hash to-sri --type sha256 <hex>`.
var known = []struct {
	name, hex, nix32, sri string
}{
	{"zero", strings.Repeat("00", 32), strings.Repeat("0", 52), "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},
	{"all ones", strings.Repeat("ff", 32), "1" + strings.Repeat("z", 51), "sha256-//////////////////////////////////////////8="},
	{"low bit of byte 0 is the last character", "01" + strings.Repeat("00", 31), strings.Repeat("0", 51) + "1", "sha256-AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},
	{"high bit of byte 31 is the first character", strings.Repeat("00", 31) + "80", "1" + strings.Repeat("0", 51), "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAIA="},
	{"sha256 of empty", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73", "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
	{"sha256 of abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "1b8m03r63zqhnjf7l5wnldhh7c134ap5vpj0850ymkq1iyzicy5s", "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="},
	{"the fixed-output test hash", "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03", "00xyyr3fi8l6hb839bv3f7yb86yjv7xi1cgh1xnhipym4asvb4aq", "sha256-WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM="},
	{"sha256 of hello world", "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9", "1sfdxziarxw8j3p80lvswgpq9i7smdyxmmsj5sjhhgjdjfwjfkdr", ""},
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBase32MatchesNix(t *testing.T) {
	for _, k := range known {
		t.Run(k.name, func(t *testing.T) {
			raw := mustHex(t, k.hex)
			if got := EncodeBase32(raw); got != k.nix32 {
				t.Errorf("EncodeBase32 = %s, nix says %s", got, k.nix32)
			}
			back, err := DecodeBase32(k.nix32)
			if err != nil || !bytes.Equal(back, raw) {
				t.Errorf("DecodeBase32(%s) = %x, %v; want %s", k.nix32, back, err, k.hex)
			}
		})
	}
}

// Other digest sizes Nix encodes: sha1 and md5 of "abc" (`nix-hash --type sha1|md5 --to-base32`).
func TestBase32OfOtherDigestSizes(t *testing.T) {
	cases := []struct{ hex, nix32 string }{
		{"a9993e364706816aba3e25717850c26c9cd0d89d", "kpcd173cq987hw957sx6m0868wv3x6d9"},
		{"900150983cd24fb0d6963f7d28e17f72", "3jgzhjhz9zjvbb0kyj7jc500ch"},
		{"da39a3ee5e6b4b0d3255bfef95601890afd80709", "143xibwh31h9bvxzalr0sjvbbvpa6ffs"}, // sha1 of ""
	}
	for _, c := range cases {
		if got := EncodeBase32(mustHex(t, c.hex)); got != c.nix32 {
			t.Errorf("EncodeBase32(%s) = %s, want %s", c.hex, got, c.nix32)
		}
		if got, err := DecodeBase32(c.nix32); err != nil || hex.EncodeToString(got) != c.hex {
			t.Errorf("DecodeBase32(%s) = %x, %v", c.nix32, got, err)
		}
	}
}

func TestParseAcceptsEveryFormAndPrintsNix32(t *testing.T) {
	for _, k := range known {
		forms := []string{"sha256:" + k.nix32, "sha256:" + k.hex, "sha256:" + strings.ToUpper(k.hex)}
		if k.sri != "" {
			forms = append(forms, k.sri)
		}
		for _, form := range forms {
			h, err := Parse(form)
			if err != nil {
				t.Errorf("Parse(%s): %v", form, err)
				continue
			}
			if got := h.String(); got != "sha256:"+k.nix32 {
				t.Errorf("Parse(%s).String() = %s, want sha256:%s", form, got, k.nix32)
			}
			if k.sri != "" && h.SRI() != k.sri {
				t.Errorf("SRI() = %s, want %s", h.SRI(), k.sri)
			}
			if h.Hex() != "sha256:"+k.hex {
				t.Errorf("Hex() = %s, want sha256:%s", h.Hex(), k.hex)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct{ name, in string }{
		{"empty", ""},
		{"bare nix32", "0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73"},
		{"bare hex", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"other algorithm", "sha512:0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73"},
		{"nix32 overflow (nix: invalid base-32 hash)", "sha256:2" + strings.Repeat("z", 51)},
		{"letter outside the alphabet (nix: invalid base-32 hash)", "sha256:0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c7e"},
		{"uppercase nix32", "sha256:0MDQA9W1P6CMLI6976V4WI0SW9R4P5PRKJ7LZFD1877WK11C9C73"},
		{"short nix32", "sha256:0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c7"},
		{"hex with a non-hex digit", "sha256:g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"SRI without padding", "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU"},
		{"SRI of 31 bytes", "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuA=="},
		{"SRI with URL alphabet", "sha256-47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU="},
	}
	for _, c := range cases {
		if h, err := Parse(c.in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Parse(%q) = %v, %v; want ErrInvalid", c.name, c.in, h, err)
		}
	}
}

func TestDecodeBase32RefusesLengthsNoByteCountEncodesTo(t *testing.T) {
	for n := 0; n < 200; n++ {
		_, err := DecodeBase32(strings.Repeat("0", n))
		valid := DecodedLen(n) >= 0
		if valid != (err == nil) {
			t.Errorf("length %d: valid=%v but err=%v", n, valid, err)
		}
	}
	if DecodedLen(52) != 32 || DecodedLen(32) != 20 || DecodedLen(2) != 1 || DecodedLen(1) != -1 {
		t.Errorf("DecodedLen(52, 32, 2, 1) = %d %d %d %d", DecodedLen(52), DecodedLen(32), DecodedLen(2), DecodedLen(1))
	}
}

func TestIsBase32(t *testing.T) {
	if !IsBase32("0iz84xy22rpj9d46qj6dz4sbicjazq3d") {
		t.Error("a store path hash is not base-32")
	}
	for _, s := range []string{"e", "o", "t", "u", "A", "/", "-"} {
		if IsBase32(s) {
			t.Errorf("IsBase32(%q) = true", s)
		}
	}
}

func TestSumAndEqual(t *testing.T) {
	h := Sum([]byte("abc"))
	want, _ := Parse("sha256:1b8m03r63zqhnjf7l5wnldhh7c134ap5vpj0850ymkq1iyzicy5s")
	if !h.Equal(want) || h.Equal(Sum(nil)) || h.IsZero() || !(SHA256{}).IsZero() {
		t.Errorf("Sum(abc) = %s", h)
	}
	if c, err := Canonical("sha256:" + known[5].hex); err != nil || c != want.String() {
		t.Errorf("Canonical = %s, %v", c, err)
	}
}

func TestBase32RoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 80).Draw(t, "bytes")
		s := EncodeBase32(b)
		if len(s) != EncodedLen(len(b)) || !IsBase32(s) {
			t.Fatalf("EncodeBase32(%x) = %q", b, s)
		}
		back, err := DecodeBase32(s)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("DecodeBase32(%q) = %x, %v; want %x", s, back, err, b)
		}
	})
}

func TestEveryFormParsesToTheSameDigest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h SHA256
		copy(h[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "digest"))
		for _, form := range []string{h.String(), h.Hex(), h.SRI()} {
			got, err := Parse(form)
			if err != nil || got != h {
				t.Fatalf("Parse(%s) = %s, %v; want %s", form, got, err, h)
			}
		}
	})
}
