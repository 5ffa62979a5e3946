package peertoken

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// cheapParams draws argon2id parameters small enough to hash hundreds of times per test.
func cheapParams(t *rapid.T) Params {
	threads := rapid.Uint8Range(1, 4).Draw(t, "p")
	return Params{
		MemoryKiB: rapid.Uint32Range(8*uint32(threads), 256).Draw(t, "m"),
		Time:      rapid.Uint32Range(1, 3).Draw(t, "t"),
		Threads:   threads,
		SaltLen:   rapid.IntRange(minSaltLen, maxSaltLen).Draw(t, "saltLen"),
		KeyLen:    rapid.IntRange(minKeyLen, maxKeyLen).Draw(t, "keyLen"),
	}
}

func tokenGen() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.Rune(), 1, 64, MaxTokenLen/4)
}

func TestPropertyArgon2idVerifiesOnlyItsToken(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := cheapParams(t)
		tok := tokenGen().Draw(t, "token")
		other := tokenGen().Draw(t, "other")
		seed := rapid.SliceOfN(rapid.Byte(), maxSaltLen, maxSaltLen).Draw(t, "salt")
		stored, err := p.Hash(tok, bytes.NewReader(seed))
		if err != nil {
			t.Fatal(err)
		}
		if !Verify(stored, tok) {
			t.Fatalf("Verify(%s, token) = false", stored)
		}
		if other != tok && Verify(stored, other) {
			t.Fatalf("Verify(%s, other token) = true", stored)
		}
	})
}

func TestPropertyPHCRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := cheapParams(t)
		h := phc{params: p,
			salt: rapid.SliceOfN(rapid.Byte(), p.SaltLen, p.SaltLen).Draw(t, "salt"),
			key:  rapid.SliceOfN(rapid.Byte(), p.KeyLen, p.KeyLen).Draw(t, "key")}
		s := h.String()
		back, err := parsePHC(s)
		if err != nil {
			t.Fatalf("parsePHC(%s): %v", s, err)
		}
		if back.params != p || !bytes.Equal(back.salt, h.salt) || !bytes.Equal(back.key, h.key) {
			t.Fatalf("round trip of %s changed it: %+v", s, back)
		}
	})
}

func TestPropertyLegacySHA256(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tok := tokenGen().Draw(t, "token")
		other := tokenGen().Draw(t, "other")
		if !Verify(SHA256Hex(tok), tok) {
			t.Fatal("legacy hash does not verify its token")
		}
		if other != tok && Verify(SHA256Hex(tok), other) {
			t.Fatal("legacy hash verifies another token")
		}
	})
}

func TestPropertyMintedSecretsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := rapid.SliceOfN(rapid.Byte(), TokenBytes+APIKeyBytes, TokenBytes+APIKeyBytes).Draw(t, "random")
		tok, err := Mint(bytes.NewReader(src))
		if err != nil || !Verify(SHA256Hex(tok), tok) {
			t.Fatalf("minted token %q does not verify against its own hash (%v)", tok, err)
		}
		key, hash, err := MintAPIKey(bytes.NewReader(src[TokenBytes:]))
		if err != nil {
			t.Fatal(err)
		}
		for _, header := range []string{key, "Bearer " + key} {
			if got, ok := APIKeyHash(header); !ok || got != hash {
				t.Fatalf("APIKeyHash(%q) = %s, %v; want the minted hash %s", header, got, ok, hash)
			}
		}
	})
}
