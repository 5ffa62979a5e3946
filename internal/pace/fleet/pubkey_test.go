package fleet

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// TestCheckPublicKey pins the §7.5 refusals: a key that is malformed, small
// order or non-canonical is refused; real keys pass.
func TestCheckPublicKey(t *testing.T) {
	for i := range 16 {
		if err := CheckPublicKey(testKey(byte(i))); err != nil {
			t.Fatalf("generated key %d refused: %v", i, err)
		}
	}
	cases := []struct {
		name, hex, want string
	}{
		{"identity", "0100000000000000000000000000000000000000000000000000000000000000", "small order"},
		{"order 2 (y = -1)", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", "small order"},
		{"order 4 (y = 0)", "0000000000000000000000000000000000000000000000000000000000000000", "small order"},
		{"order 4 (y = 0, x negative)", "0000000000000000000000000000000000000000000000000000000000000080", "small order"},
		{"order 8", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", "small order"},
		{"order 8 negated", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", "small order"},
		{"order 8 other", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", "small order"},
		{"identity with sign bit (-0)", "0100000000000000000000000000000000000000000000000000000000000080", "-0"},
		{"y = p", "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", "non-canonical"},
		{"y = p + 1", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", "non-canonical"},
		{"y = 2 is off the curve", "0200000000000000000000000000000000000000000000000000000000000000", "not a point"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := hex.DecodeString(tc.hex)
			err := CheckPublicKey(k)
			if !errors.Is(err, ErrMalformedKey) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckPublicKey(%s) = %v, want %q", tc.hex, err, tc.want)
			}
		})
	}
	for _, n := range []int{0, 31, 33} {
		if err := CheckPublicKey(make([]byte, n)); !errors.Is(err, ErrMalformedKey) {
			t.Fatalf("%d-byte key: %v", n, err)
		}
	}
	if CheckPublicKey(ed25519.PublicKey(make([]byte, 32))) == nil {
		t.Fatal("all-zero key accepted")
	}
}

func BenchmarkCheckPublicKey(b *testing.B) {
	k := testKey(7)
	for b.Loop() {
		if err := CheckPublicKey(k); err != nil {
			b.Fatal(err)
		}
	}
}
