package fleet

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/buildfleet/buildfleet/internal/pace/edkey"
)

// TestCheckPublicKey pins the pace-consensus §7.5 refusals: a key that is
// malformed, small order or non-canonical is refused; real keys pass.
func TestCheckPublicKey(t *testing.T) {
	for i := range 16 {
		if err := CheckPublicKey(testKey(byte(i))); err != nil {
			t.Fatalf("generated key %d refused: %v", i, err)
		}
	}
	small, _ := hex.DecodeString("0100000000000000000000000000000000000000000000000000000000000000")
	if err := CheckPublicKey(small); !errors.Is(err, ErrMalformedKey) || !errors.Is(err, edkey.ErrKeySmallOrder) {
		t.Fatalf("small-order key: %v", err)
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
