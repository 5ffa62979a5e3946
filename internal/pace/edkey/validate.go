package edkey

import (
	"crypto/ed25519"
	"errors"
	"math/big"
)

// Public-key refusals (pace-consensus §7.5: "not 43 base64url chars /
// small-order / non-canonical point").
var (
	ErrKeyLength       = errors.New("an identity key is 32 bytes")
	ErrKeyNonCanonical = errors.New("the key is a non-canonical point encoding")
	ErrKeyNotOnCurve   = errors.New("the key is not a point on the Ed25519 curve")
	ErrKeySmallOrder   = errors.New("the key is a small-order point, which proves nothing")
)

// Curve constants of edwards25519 (RFC 8032, section 5.1).
var (
	fieldP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	curveD = func() *big.Int {
		inv := new(big.Int).ModInverse(big.NewInt(121666), fieldP)
		d := new(big.Int).Mul(big.NewInt(-121665), inv)
		return d.Mod(d, fieldP)
	}()
	legendreExp = new(big.Int).Rsh(new(big.Int).Sub(fieldP, big.NewInt(1)), 1)
)

// smallOrderKeys are the canonical encodings of the eight points of the
// torsion subgroup: identity (order 1), (0,-1) (order 2), (±sqrt(-1), 0)
// (order 4) and the four points of order 8. filippo.io/edwards25519 is not
// a dependency of this module, so instead of computing [8]P the key is
// compared against this list; non-canonical encodings of the same points
// are refused earlier as non-canonical. TestSmallOrderListIsTheTorsionGroup
// recomputes the list from the curve equation.
var smallOrderKeys = [8][32]byte{
	{0x01},
	{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	{},
	{31: 0x80},
	{0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
		0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
	{0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
		0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0xfa},
	{0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
		0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
	{0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
		0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x85},
}

// Validate refuses a public key that is not 32 bytes, not the
// canonical encoding of a point on the curve, or a small-order point. Keys
// arriving from operators or peers pass through it before they are
// recorded; Ed25519 verification alone accepts non-canonical encodings.
func Validate(key ed25519.PublicKey) error {
	if len(key) != ed25519.PublicKeySize {
		return ErrKeyLength
	}
	if err := checkPointEncoding(key); err != nil {
		return err
	}
	for i := range smallOrderKeys {
		if [32]byte(key) == smallOrderKeys[i] {
			return ErrKeySmallOrder
		}
	}
	return nil
}

// checkPointEncoding decodes y and the sign of x (RFC 8032, section 5.1.3) and
// checks that y < p, that x exists (x² = (y²-1)/(d·y²+1) is a square) and
// that x = 0 is not encoded with its sign bit set.
func checkPointEncoding(key []byte) error {
	var be [32]byte
	for i := range be {
		be[i] = key[31-i]
	}
	sign := be[0] >> 7
	be[0] &= 0x7f
	y := new(big.Int).SetBytes(be[:])
	if y.Cmp(fieldP) >= 0 {
		return ErrKeyNonCanonical
	}
	x2 := xSquared(y)
	if x2.Sign() == 0 {
		if sign == 1 {
			return ErrKeyNonCanonical
		}
		return nil
	}
	if new(big.Int).Exp(x2, legendreExp, fieldP).Cmp(big.NewInt(1)) != 0 {
		return ErrKeyNotOnCurve
	}
	return nil
}

// xSquared is (y²-1)/(d·y²+1) mod p; the denominator is never zero because
// d is not a square.
func xSquared(y *big.Int) *big.Int {
	y2 := new(big.Int).Mul(y, y)
	y2.Mod(y2, fieldP)
	u := new(big.Int).Sub(y2, big.NewInt(1))
	v := new(big.Int).Mul(curveD, y2)
	v.Add(v, big.NewInt(1))
	v.ModInverse(v.Mod(v, fieldP), fieldP)
	u.Mul(u, v)
	return u.Mod(u, fieldP)
}
