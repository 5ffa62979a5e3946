package peertoken

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckStoredAcceptsWhatVerifyCanMatch(t *testing.T) {
	phc, err := HashArgon2id("tok", strings.NewReader(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	for name, stored := range map[string]string{"argon2id PHC": phc, "sha256 hex": SHA256Hex("tok")} {
		if err := CheckStored(stored); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !Verify(stored, "tok") {
			t.Errorf("%s: Verify does not match the token CheckStored accepted", name)
		}
	}
	for name, stored := range map[string]string{
		"empty":              "",
		"uppercase hex":      strings.ToUpper(SHA256Hex("tok")),
		"63 digits":          SHA256Hex("tok")[:63],
		"plaintext":          "tok",
		"truncated PHC":      phc[:len(phc)-10],
		"PHC of argon2i":     strings.Replace(phc, "argon2id", "argon2i", 1),
		"PHC over the bound": strings.Replace(phc, "m=19456", "m=1048576", 1),
	} {
		if err := CheckStored(stored); !errors.Is(err, ErrMalformedHash) {
			t.Errorf("%s: %v, want ErrMalformedHash", name, err)
		}
		if stored != "" && Verify(stored, "tok") {
			t.Errorf("%s: refused by CheckStored yet Verify matches", name)
		}
	}
}
