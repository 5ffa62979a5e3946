package edkey

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// A test-only affine edwards25519 (-x² + y² = 1 + d·x²·y²) in math/big,
// to recompute what point.go hard-codes.

type affine struct{ x, y *big.Int }

var sqrtMinusOne = new(big.Int).Exp(big.NewInt(2), new(big.Int).Rsh(new(big.Int).Sub(fieldP, big.NewInt(1)), 2), fieldP)

func mod(v *big.Int) *big.Int { return v.Mod(v, fieldP) }

// decodePoint recovers x from the encoding, or ok=false off the curve.
func decodePoint(t *testing.T, enc [32]byte) (affine, bool) {
	t.Helper()
	var be [32]byte
	for i := range be {
		be[i] = enc[31-i]
	}
	sign := uint(be[0] >> 7)
	be[0] &= 0x7f
	y := new(big.Int).SetBytes(be[:])
	x2 := xSquared(y)
	x := new(big.Int).Exp(x2, new(big.Int).Rsh(new(big.Int).Add(fieldP, big.NewInt(3)), 3), fieldP)
	if mod(new(big.Int).Mul(x, x)).Cmp(x2) != 0 {
		x = mod(x.Mul(x, sqrtMinusOne))
	}
	if mod(new(big.Int).Mul(x, x)).Cmp(x2) != 0 {
		return affine{}, false
	}
	if x.Bit(0) != sign {
		x = mod(x.Sub(fieldP, x))
	}
	return affine{x, y}, true
}

func add(a, b affine) affine {
	x1x2 := mod(new(big.Int).Mul(a.x, b.x))
	y1y2 := mod(new(big.Int).Mul(a.y, b.y))
	dxy := mod(new(big.Int).Mul(curveD, mod(new(big.Int).Mul(x1x2, y1y2))))
	xn := mod(new(big.Int).Add(new(big.Int).Mul(a.x, b.y), new(big.Int).Mul(a.y, b.x)))
	yn := mod(new(big.Int).Add(y1y2, x1x2))
	xd := new(big.Int).ModInverse(mod(new(big.Int).Add(big.NewInt(1), dxy)), fieldP)
	yd := new(big.Int).ModInverse(mod(new(big.Int).Sub(big.NewInt(1), dxy)), fieldP)
	return affine{mod(xn.Mul(xn, xd)), mod(yn.Mul(yn, yd))}
}

func isIdentity(p affine) bool { return p.x.Sign() == 0 && p.y.Cmp(big.NewInt(1)) == 0 }

// TestSmallOrderListIsTheTorsionGroup: the eight listed encodings are
// distinct curve points P with [8]P = identity, so they are exactly the
// torsion subgroup (which has eight elements).
func TestSmallOrderListIsTheTorsionGroup(t *testing.T) {
	seen := map[[32]byte]bool{}
	for i, enc := range smallOrderKeys {
		if seen[enc] {
			t.Fatalf("entry %d duplicates another", i)
		}
		seen[enc] = true
		p, ok := decodePoint(t, enc)
		if !ok {
			t.Fatalf("entry %d is not on the curve", i)
		}
		if err := checkPointEncoding(enc[:]); err != nil {
			t.Fatalf("entry %d is not canonical: %v", i, err)
		}
		q := add(p, p)
		q = add(q, q)
		q = add(q, q)
		if !isIdentity(q) {
			t.Fatalf("entry %d: [8]P is not the identity", i)
		}
		if err := Validate(enc[:]); !errors.Is(err, ErrKeySmallOrder) {
			t.Fatalf("entry %d: ValidatePublicKey = %v, want ErrKeySmallOrder", i, err)
		}
	}
}

func TestValidatePublicKeyAcceptsGeneratedKeys(t *testing.T) {
	for i := 0; i < 200; i++ {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(pub); err != nil {
			t.Fatalf("generated key %x refused: %v", pub, err)
		}
		p, ok := decodePoint(t, [32]byte(pub))
		q := add(p, p)
		q = add(q, q)
		if !ok || isIdentity(add(q, q)) {
			t.Fatalf("generated key %x decodes badly", pub)
		}
	}
}

func littleEndian(v *big.Int) []byte {
	be := v.FillBytes(make([]byte, 32))
	le := make([]byte, 32)
	for i := range be {
		le[i] = be[31-i]
	}
	return le
}

func TestValidatePublicKeyRefusals(t *testing.T) {
	negativeZero := [32]byte{0x01, 31: 0x80} // identity with the sign bit: x = 0 is never negative
	var offCurve []byte
	for y := int64(2); offCurve == nil; y++ {
		enc := littleEndian(big.NewInt(y))
		if _, ok := decodePoint(t, [32]byte(enc)); !ok {
			offCurve = enc
		}
	}
	cases := []struct {
		name string
		key  []byte
		want error
	}{
		{"31 bytes", make([]byte, 31), ErrKeyLength},
		{"33 bytes", make([]byte, 33), ErrKeyLength},
		{"y = p", littleEndian(fieldP), ErrKeyNonCanonical},
		{"y = p + 1 (the identity again)", littleEndian(new(big.Int).Add(fieldP, big.NewInt(1))), ErrKeyNonCanonical},
		{"negative zero", negativeZero[:], ErrKeyNonCanonical},
		{"not on the curve", offCurve, ErrKeyNotOnCurve},
		{"identity", smallOrderKeys[0][:], ErrKeySmallOrder},
	}
	for _, c := range cases {
		if err := Validate(c.key); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

// TestPointCheckAgreesWithDecoding: for arbitrary canonical encodings the
// Legendre-symbol check and an actual square root agree on "on the curve".
func TestPointCheckAgreesWithDecoding(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		enc := [32]byte(rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(rt, "encoding"))
		enc[31] &= 0x7f | (enc[0] & 0x80) // keep some sign bits
		err := checkPointEncoding(enc[:])
		if errors.Is(err, ErrKeyNonCanonical) {
			return
		}
		_, ok := decodePoint(t, enc)
		if ok != (err == nil) {
			rt.Fatalf("%x: decodes=%v but checkPointEncoding=%v", enc, ok, err)
		}
	})
}

// TestValidateVectors checks hand-written encodings of every small-order point and of the
// non-canonical and off-curve cases, independently of the list Validate compares against.
func TestValidateVectors(t *testing.T) {
	cases := []struct {
		name, hex string
		want      error
	}{
		{"identity", "0100000000000000000000000000000000000000000000000000000000000000", ErrKeySmallOrder},
		{"order 2 (y = -1)", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", ErrKeySmallOrder},
		{"order 4 (y = 0)", "0000000000000000000000000000000000000000000000000000000000000000", ErrKeySmallOrder},
		{"order 4 (y = 0, x negative)", "0000000000000000000000000000000000000000000000000000000000000080", ErrKeySmallOrder},
		{"order 8", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", ErrKeySmallOrder},
		{"order 8 negated", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", ErrKeySmallOrder},
		{"order 8 other", "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", ErrKeySmallOrder},
		{"identity with sign bit (-0)", "0100000000000000000000000000000000000000000000000000000000000080", ErrKeyNonCanonical},
		{"y = p", "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", ErrKeyNonCanonical},
		{"y = p + 1", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", ErrKeyNonCanonical},
		{"y = 2 is off the curve", "0200000000000000000000000000000000000000000000000000000000000000", ErrKeyNotOnCurve},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := hex.DecodeString(tc.hex)
			err := Validate(k)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate(%s) = %v, want %v", tc.hex, err, tc.want)
			}
		})
	}
}
