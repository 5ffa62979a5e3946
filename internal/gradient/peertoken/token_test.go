package peertoken

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// Vectors from the reference implementation (Debian's argon2 CLI, `argon2 SALT -id -e`), so
// the PHC parsing and the argon2id computation are checked against an outside source.
var referenceVectors = []struct{ password, phc string }{
	{"correct horse battery staple", "$argon2id$v=19$m=1024,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$Jl9aMRiFdmA52uqiivDqYVot6fVz3erNUlWPoxyg46A"},
	{"password", "$argon2id$v=19$m=64,t=3,p=4$c2FsdHNhbHRzYWx0c2FsdA$5EO3c8q4goJxcNoLjpbU7xutjIBJyJYN7Y5+In0e6ew"},
	{"hunter2", "$argon2id$v=19$m=16,t=1,p=2$OGJ5dGVzYWw$tLZNqi9Fgk+SgTRxl9X5Ng"},
	// DefaultParams' shape.
	{"c2VjcmV0LXRva2VuLWZvci10ZXN0cw==", "$argon2id$v=19$m=19456,t=2,p=1$Z3JhZGllbnRzYWx0MDAwMQ$ZSrfCu6xDkZI6y4rER1quNnUl7Skv6k080ii9QH0ryQ"},
	// argon2-cffi's default shape, the largest common one the bounds must admit.
	{"password", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0c2FsdA$rBWULD5jOGpQy32rLvGcmvQMVqIVNAmrCtekWvUA8bw"},
}

func TestVerifyReferenceVectors(t *testing.T) {
	for _, v := range referenceVectors {
		if !Verify(v.phc, v.password) {
			t.Errorf("Verify(%s, %q) = false, want true", v.phc, v.password)
		}
		if Verify(v.phc, v.password+"x") {
			t.Errorf("Verify(%s, wrong token) = true", v.phc)
		}
	}
}

func TestVerifySHA256Hex(t *testing.T) {
	// sha256("hello") from the standard test vectors.
	const helloHex = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	tests := []struct {
		name, stored, token string
		want                bool
	}{
		{"match", helloHex, "hello", true},
		{"wrong token", helloHex, "hello!", false},
		{"uppercase hex is not the stored form", strings.ToUpper(helloHex), "hello", false},
		{"short hex", helloHex[:63], "hello", false},
		{"long hex", helloHex + "0", "hello", false},
		{"non-hex digit", "g" + helloHex[1:], "hello", false},
		{"empty stored", "", "hello", false},
		{"empty token never verifies", SHA256Hex(""), "", false},
		{"oversized token", SHA256Hex(strings.Repeat("a", MaxTokenLen+1)), strings.Repeat("a", MaxTokenLen+1), false},
		{"longest token", SHA256Hex(strings.Repeat("a", MaxTokenLen)), strings.Repeat("a", MaxTokenLen), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Verify(tc.stored, tc.token); got != tc.want {
				t.Errorf("Verify(%q, %q) = %v, want %v", tc.stored, tc.token, got, tc.want)
			}
		})
	}
}

func TestVerifyRefusesMalformedOrHostilePHC(t *testing.T) {
	const good = "$argon2id$v=19$m=16,t=1,p=2$OGJ5dGVzYWw$tLZNqi9Fgk+SgTRxl9X5Ng"
	salt, hash := "OGJ5dGVzYWw", "tLZNqi9Fgk+SgTRxl9X5Ng"
	tests := map[string]string{
		"argon2i":                 "$argon2i$v=19$m=16,t=1,p=2$" + salt + "$" + hash,
		"argon2d":                 "$argon2d$v=19$m=16,t=1,p=2$" + salt + "$" + hash,
		"old version":             "$argon2id$v=16$m=16,t=1,p=2$" + salt + "$" + hash,
		"no version":              "$argon2id$m=16,t=1,p=2$" + salt + "$" + hash,
		"params reordered":        "$argon2id$v=19$t=1,m=16,p=2$" + salt + "$" + hash,
		"extra param":             "$argon2id$v=19$m=16,t=1,p=2,keyid=x$" + salt + "$" + hash,
		"leading zero":            "$argon2id$v=19$m=016,t=1,p=2$" + salt + "$" + hash,
		"plus sign":               "$argon2id$v=19$m=+16,t=1,p=2$" + salt + "$" + hash,
		"memory 4 GiB":            "$argon2id$v=19$m=4194304,t=1,p=1$" + salt + "$" + hash,
		"memory just over cap":    "$argon2id$v=19$m=65537,t=1,p=1$" + salt + "$" + hash,
		"memory overflows uint32": "$argon2id$v=19$m=4294967312,t=1,p=1$" + salt + "$" + hash,
		"too many passes":         "$argon2id$v=19$m=16,t=9,p=2$" + salt + "$" + hash,
		"cap memory, 5 passes":    "$argon2id$v=19$m=65536,t=5,p=1$" + salt + "$" + hash,
		"too many lanes":          "$argon2id$v=19$m=1024,t=1,p=17$" + salt + "$" + hash,
		"lanes over 255":          "$argon2id$v=19$m=4096,t=1,p=256$" + salt + "$" + hash,
		"memory below 8 per lane": "$argon2id$v=19$m=15,t=1,p=2$" + salt + "$" + hash,
		"zero passes":             "$argon2id$v=19$m=16,t=0,p=2$" + salt + "$" + hash,
		"padded salt":             "$argon2id$v=19$m=16,t=1,p=2$" + salt + "=$" + hash,
		"url-safe alphabet":       "$argon2id$v=19$m=16,t=1,p=2$" + salt + "$" + strings.ReplaceAll(hash, "+", "-"),
		"salt too short":          "$argon2id$v=19$m=16,t=1,p=2$c2FsdA$" + hash,
		"hash too short":          "$argon2id$v=19$m=16,t=1,p=2$" + salt + "$c2FsdA",
		"huge salt":               "$argon2id$v=19$m=16,t=1,p=2$" + strings.Repeat("A", 1<<20) + "$" + hash,
		"trailing field":          good + "$",
		"missing hash":            "$argon2id$v=19$m=16,t=1,p=2$" + salt,
		"non-canonical last char": "$argon2id$v=19$m=16,t=1,p=2$" + salt[:len(salt)-1] + "x$" + hash,
		"only dollar":             "$",
		"newline inside base64":   "$argon2id$v=19$m=16,t=1,p=2$" + salt + "$" + hash[:10] + "\n" + hash[10:],
		"carriage return in salt": "$argon2id$v=19$m=16,t=1,p=2$" + salt[:4] + "\r" + salt[4:] + "$" + hash,
	}
	if !Verify(good, "hunter2") {
		t.Fatal("the unmodified reference hash must verify")
	}
	for name, stored := range tests {
		t.Run(name, func(t *testing.T) {
			if Verify(stored, "hunter2") {
				t.Errorf("Verify(%q) = true, want false", stored)
			}
			if _, err := parsePHC(stored); err == nil {
				t.Errorf("parsePHC(%q) succeeded", stored)
			}
		})
	}
}

func TestMintIsStandardBase64Of48Bytes(t *testing.T) {
	src := bytes.Repeat([]byte{0xfb, 0xff, 0x3e}, 16) // bytes that produce '+' and '/'
	tok, err := Mint(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(tok)
	if err != nil || !bytes.Equal(raw, src) {
		t.Fatalf("Mint = %q, decodes to %x (%v), want %x", tok, raw, err, src)
	}
	if len(tok) != 64 || strings.ContainsAny(tok, ": \t\n=") {
		t.Errorf("token %q must be 64 characters fit for a peers-file line", tok)
	}
}

func TestMintFailsOnShortRandomness(t *testing.T) {
	for name, r := range map[string]*bytes.Reader{"empty": bytes.NewReader(nil), "short": bytes.NewReader(make([]byte, 47))} {
		if _, err := Mint(r); !errors.Is(err, ErrRandom) {
			t.Errorf("%s: Mint error = %v, want ErrRandom", name, err)
		}
	}
	if _, err := Mint(iotest.ErrReader(errors.New("boom"))); !errors.Is(err, ErrRandom) {
		t.Errorf("failing reader: want ErrRandom, got %v", err)
	}
	if _, err := Mint(nil); !errors.Is(err, ErrRandom) {
		t.Errorf("nil reader: want ErrRandom, got %v", err)
	}
}

func TestHashArgon2idWithDefaultParams(t *testing.T) {
	tok, err := Mint(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := HashArgon2id(tok, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("PHC %q does not carry the default parameters", stored)
	}
	if !Verify(stored, tok) {
		t.Error("a freshly hashed token does not verify")
	}
	if Verify(stored, tok[:len(tok)-1]) {
		t.Error("a truncated token verifies")
	}
	if strings.Contains(stored, tok) {
		t.Error("the PHC string contains the token")
	}
}

func TestHashRefusesParamsVerifyWouldRefuse(t *testing.T) {
	bad := []Params{
		{MemoryKiB: MaxMemoryKiB + 1, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32},
		{MemoryKiB: MaxMemoryKiB, Time: 5, Threads: 1, SaltLen: 16, KeyLen: 32},
		{MemoryKiB: 64, Time: 1, Threads: 9, SaltLen: 16, KeyLen: 32},
		{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 4, KeyLen: 32},
		{MemoryKiB: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 8},
		{},
	}
	for _, p := range bad {
		if _, err := p.Hash("tok", rand.Reader); !errors.Is(err, ErrParams) {
			t.Errorf("%+v: Hash error = %v, want ErrParams", p, err)
		}
	}
}
