package fleet

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"math/big"
)

// ErrMalformedKey reports a public key the cluster must not record: not 32
// bytes, a non-canonical encoding, not a point on the curve, or a point of
// small order (spec §7.5). Such a key could verify forged signatures or
// collide with another encoding of the same point.
var ErrMalformedKey = errors.New("malformed public key")

// Curve constants of edwards25519 (RFC 8032 §5.1), parsed once.
var (
	curveP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	curveD = func() *big.Int {
		num := new(big.Int).Neg(big.NewInt(121665))
		inv := new(big.Int).ModInverse(big.NewInt(121666), curveP)
		return num.Mul(num, inv).Mod(num, curveP)
	}()
)

// CheckPublicKey refuses a key that is not 32 bytes, encodes y ≥ p or
// "negative zero", decodes to no curve point, or is a point whose order
// divides 8. It is slow (big-integer arithmetic) and meant for admission
// time, never for the request path.
func CheckPublicKey(key []byte) error {
	if len(key) != ed25519.PublicKeySize {
		return malformedKey("a key is %d bytes where 32 are required", len(key))
	}
	x, y, err := decodePoint(key)
	if err != nil {
		return err
	}
	px, py := x, y
	for range 3 { // 8·P by three doublings
		px, py = edwardsAdd(px, py, px, py)
	}
	if px.Sign() == 0 && py.Cmp(big.NewInt(1)) == 0 {
		return malformedKey("the key is a point of small order")
	}
	return nil
}

// decodePoint decodes a canonical point encoding (RFC 8032 §5.1.3).
func decodePoint(key []byte) (x, y *big.Int, err error) {
	le := make([]byte, 32)
	for i := range 32 {
		le[31-i] = key[i]
	}
	sign := le[0] >> 7
	le[0] &= 0x7f
	y = new(big.Int).SetBytes(le)
	if y.Cmp(curveP) >= 0 {
		return nil, nil, malformedKey("the key encodes y ≥ p (non-canonical)")
	}
	yy := new(big.Int).Mul(y, y)
	u := new(big.Int).Sub(yy, big.NewInt(1))
	v := new(big.Int).Mul(curveD, yy)
	v.Add(v, big.NewInt(1)).Mod(v, curveP)
	xx := u.Mul(u, new(big.Int).ModInverse(v, curveP))
	xx.Mod(xx, curveP)
	x = new(big.Int).ModSqrt(xx, curveP)
	if x == nil {
		return nil, nil, malformedKey("the key is not a point on the curve")
	}
	if x.Sign() == 0 && sign == 1 {
		return nil, nil, malformedKey("the key encodes x = -0 (non-canonical)")
	}
	if uint8(x.Bit(0)) != sign {
		x.Sub(curveP, x)
	}
	return x, y, nil
}

// edwardsAdd adds two affine points of -x²+y² = 1+d·x²y². The formula is
// complete for edwards25519 (d is not a square), so no case is exceptional.
func edwardsAdd(x1, y1, x2, y2 *big.Int) (x3, y3 *big.Int) {
	t := new(big.Int).Mul(x1, x2)
	t.Mul(t, y1).Mul(t, y2).Mul(t, curveD).Mod(t, curveP)
	nx := new(big.Int).Add(new(big.Int).Mul(x1, y2), new(big.Int).Mul(y1, x2))
	ny := new(big.Int).Add(new(big.Int).Mul(y1, y2), new(big.Int).Mul(x1, x2))
	dx := new(big.Int).Add(big.NewInt(1), t)
	dy := new(big.Int).Sub(big.NewInt(1), t)
	dy.Mod(dy, curveP)
	x3 = nx.Mul(nx, dx.ModInverse(dx, curveP)).Mod(nx, curveP)
	y3 = ny.Mul(ny, dy.ModInverse(dy, curveP)).Mod(ny, curveP)
	return x3, y3
}

func malformedKey(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformedKey}, args...)...)
}
