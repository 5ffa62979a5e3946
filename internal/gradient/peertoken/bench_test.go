package peertoken

import (
	"crypto/rand"
	"testing"
)

// BenchmarkVerifyArgon2id is the cost of one token check against a DefaultParams hash: what
// the server pays per challenged peer in a handshake.
func BenchmarkVerifyArgon2id(b *testing.B) {
	stored, err := HashArgon2id("benchmark-token", rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !Verify(stored, "benchmark-token") {
			b.Fatal("does not verify")
		}
	}
}

// BenchmarkVerifyRefusedPHC is the cost of refusing a row with hostile parameters: it must
// stay in nanoseconds, never reaching argon2.
func BenchmarkVerifyRefusedPHC(b *testing.B) {
	const hostile = "$argon2id$v=19$m=4194304,t=100,p=255$OGJ5dGVzYWw$tLZNqi9Fgk+SgTRxl9X5Ng"
	for b.Loop() {
		if Verify(hostile, "x") {
			b.Fatal("verified")
		}
	}
}

func BenchmarkVerifySHA256Hex(b *testing.B) {
	stored := SHA256Hex("benchmark-token")
	for b.Loop() {
		Verify(stored, "benchmark-token")
	}
}
