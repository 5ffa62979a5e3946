package binarycache

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Vectors made with Nix 2.8: `nix key generate-secret --key-name test-cache-1`, two paths
// added to a fresh store (g refers to f and f2), `nix store sign --key-file`, then
// `nix path-info --json`. ed25519 is deterministic, so our signatures must equal Nix's.
const (
	nixSecretKey = "test-cache-1:/mBY4OiyBYGXKfo0mjdgUlili3Z/y0XNHq6rE0jG8o4FhaYkOP9Sqa8wRjsEPgA6jbL5U7UsnXgInugMUh/nOw=="
	nixPublicKey = "test-cache-1:BYWmJDj/UqmvMEY7BD4AOo2y+VO1LJ14CJ7oDFIf5zs="
)

var nixSigned = []struct {
	path, narHash string
	narSize       int64
	refs          []string
	sig           string
}{
	{"/nix/store/xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f", "sha256-HDfQGvQL4ugGkd48w99EN3ppmvuxfGjwgJZLL9Bx/BM=", 120, nil,
		"test-cache-1:T+5SV/Zv4vur4/bqWt9ohoJ6pQmIZvatA3UWxSuYPEnwSZfFHi0c53KVjumxOz0ceGvXRxDIvENk56NeV9zkDA=="},
	// References given out of order and in hash-name form: the fingerprint sorts them and
	// writes full paths.
	{"/nix/store/i8sikl7dcdbp029rxfd7b9s8va9gcl0l-g", "sha256-Hi+fmGNZOG5i1kOoh5SIJ5PfcMYcC9LNudZS6osTX1w=", 208,
		[]string{"xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f", "/nix/store/kbn0fyknh13y2b3w7f5rylca4782hhnq-f2"},
		"test-cache-1:4d7o13L9sNfgK2elCjCCITTdHtbgq9jOxYl32giyWlMB2H7aU2pynEG1wXFgoYes9e/bjXIEVdewWPPdlNj7BA=="},
}

func TestSignaturesEqualNixs(t *testing.T) {
	key, err := ParseSecretKey(nixSecretKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := key.PublicKey(); got != nixPublicKey {
		t.Fatalf("public key %s, Nix says %s", got, nixPublicKey)
	}
	if key.SecretText() != nixSecretKey {
		t.Errorf("secret text does not round-trip")
	}
	for _, v := range nixSigned {
		fp, err := Fingerprint(v.path, v.narHash, v.narSize, v.refs)
		if err != nil {
			t.Fatal(err)
		}
		if got := key.Sign(fp); got != v.sig {
			t.Errorf("%s: signature %s, Nix signed %s (fingerprint %q)", v.path, got, v.sig, fp)
		}
		if !Verify(nixPublicKey, fp, v.sig) {
			t.Errorf("%s: Nix's signature does not verify", v.path)
		}
	}
}

// The NAR hash in nix32 is `nix hash to-base32` of the SRI form Nix printed.
func TestFingerprintIsNixs(t *testing.T) {
	v := nixSigned[1]
	fp, err := Fingerprint(v.path, v.narHash, v.narSize, v.refs)
	if err != nil {
		t.Fatal(err)
	}
	want := "1;/nix/store/i8sikl7dcdbp029rxfd7b9s8va9gcl0l-g;sha256:0p2z2f5yllnnp76x42qwqrqdz4r7i2a8ga23sri6wf2rcfc9ybqy;208;" +
		"/nix/store/kbn0fyknh13y2b3w7f5rylca4782hhnq-f2,/nix/store/xp0dpr9yz5h0fk5c5lpj7zzqjbdh3w8c-f"
	if fp != want {
		t.Errorf("fingerprint\n got %q\nwant %q", fp, want)
	}
}

func TestVerifyRefuses(t *testing.T) {
	v := nixSigned[0]
	fp, _ := Fingerprint(v.path, v.narHash, v.narSize, v.refs)
	other, _ := GenerateKey("test-cache-1", bytes.NewReader(bytes.Repeat([]byte{7}, 64)))
	cases := map[string]struct{ pub, fp, sig string }{
		"another key of the same name": {other.PublicKey(), fp, v.sig},
		"another fingerprint":          {nixPublicKey, strings.Replace(fp, ";120;", ";121;", 1), v.sig},
		"another key name":             {nixPublicKey, fp, strings.Replace(v.sig, "test-cache-1:", "test-cache-2:", 1)},
		"truncated signature":          {nixPublicKey, fp, v.sig[:len(v.sig)-4]},
		"malformed public key":         {"test-cache-1", fp, v.sig},
	}
	for name, c := range cases {
		if Verify(c.pub, c.fp, c.sig) {
			t.Errorf("%s: verified", name)
		}
	}
}

func TestParseSecretKeyRefuses(t *testing.T) {
	for _, s := range []string{
		"", "no-colon", ":AAAA", "name:not base64!", "name:" + strings.Repeat("A", 44), // 32 bytes, not 64
		"two words:" + nixSecretKey[len("test-cache-1:"):], nixPublicKey,
	} {
		if _, err := ParseSecretKey(s); !errors.Is(err, ErrBadKey) {
			t.Errorf("%q: %v, want ErrBadKey", s, err)
		}
	}
}

func TestSigningKeyNeverPrintsItsSecret(t *testing.T) {
	key, _ := ParseSecretKey(nixSecretKey)
	secret := nixSecretKey[len("test-cache-1:"):]
	for _, s := range []string{key.String(), key.LogValue().String()} {
		if strings.Contains(s, secret) {
			t.Errorf("%q shows the secret", s)
		}
	}
}

// Property: a generated key's signature of any fingerprint verifies under its public key,
// and under no other fingerprint.
func TestSignVerifyProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "seed")
		key, err := GenerateKey("k-"+rapid.StringMatching(`[a-z0-9.-]{1,20}`).Draw(t, "name"), bytes.NewReader(seed))
		if err != nil {
			t.Fatal(err)
		}
		fp := rapid.String().Draw(t, "fingerprint")
		sig := key.Sign(fp)
		if !Verify(key.PublicKey(), fp, sig) {
			t.Fatalf("own signature does not verify")
		}
		if Verify(key.PublicKey(), fp+"x", sig) {
			t.Fatalf("signature verifies another fingerprint")
		}
		back, err := ParseSecretKey(key.SecretText())
		if err != nil || back.PublicKey() != key.PublicKey() {
			t.Fatalf("secret text round trip: %v", err)
		}
	})
}

func FuzzParseSecretKey(f *testing.F) {
	f.Add(nixSecretKey)
	f.Add(nixPublicKey)
	f.Add("a:")
	f.Fuzz(func(t *testing.T, s string) {
		key, err := ParseSecretKey(s)
		if err != nil {
			return
		}
		if back, err := ParseSecretKey(key.SecretText()); err != nil || back.SecretText() != key.SecretText() {
			t.Fatalf("accepted %q but its own text does not round-trip: %v", s, err)
		}
		if strings.ContainsAny(key.Name(), ": \n") {
			t.Fatalf("accepted key name %q", key.Name())
		}
	})
}
