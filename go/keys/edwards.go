package keys

// Ed25519 public-key hygiene (profile, section 7.2). crypto/ed25519
// accepts any 32 bytes as a public key and decodes them leniently (a y of p or
// more is reduced, x = 0 with the sign bit set is read as x = 0), and it does not
// refuse points of small order: with the identity point as the key, the signature
// R = identity, S = 0 verifies for every message. So a key is checked here when it
// is loaded, with math/big: the canonical RFC 8032 (5.1.3) encoding of a point on
// the curve, and not one of the 8 points of small order.

import "math/big"

var (
	fieldP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	// curveD is d = -121665/121666 mod p.
	curveD = mod(new(big.Int).Mul(big.NewInt(-121665), new(big.Int).ModInverse(big.NewInt(121666), fieldP)))
)

func mod(v *big.Int) *big.Int { return v.Mod(v, fieldP) }

func mul(a, b *big.Int) *big.Int { return mod(new(big.Int).Mul(a, b)) }

func div(a, b *big.Int) *big.Int { return mul(a, new(big.Int).ModInverse(b, fieldP)) }

// checkEd25519Point refuses 32 bytes that are not the canonical encoding of a curve
// point, or that encode a point of small order. The error never holds the bytes.
func checkEd25519Point(encoded []byte) error {
	be := make([]byte, 32)
	for i := range be { // little-endian to big-endian, without the sign bit
		be[i] = encoded[31-i]
	}
	sign := uint(be[0] >> 7)
	be[0] &= 0x7f
	y := new(big.Int).SetBytes(be)
	if y.Cmp(fieldP) >= 0 {
		return keyringError(`an Ed25519 "x" must be the canonical encoding of a curve point: its y is p or more`)
	}
	one := big.NewInt(1)
	yy := mul(y, y)
	// x^2 = (y^2 - 1) / (d y^2 + 1)
	x := new(big.Int).ModSqrt(div(mod(new(big.Int).Sub(yy, one)), mod(new(big.Int).Add(mul(curveD, yy), one))), fieldP)
	if x == nil {
		return keyringError(`an Ed25519 "x" must encode a point on the curve: no x exists for its y`)
	}
	if x.Sign() == 0 && sign == 1 {
		return keyringError(`an Ed25519 "x" must be the canonical encoding of a curve point: x = 0 with the sign bit set`)
	}
	if x.Bit(0) != sign {
		x.Sub(fieldP, x)
	}
	for range 3 { // [8]P: double three times (x, y) -> (2xy / (1 + dx²y²), (y² + x²) / (1 - dx²y²))
		t := mul(curveD, mul(mul(x, x), mul(y, y)))
		x, y = div(mul(big.NewInt(2), mul(x, y)), mod(new(big.Int).Add(one, t))),
			div(mod(new(big.Int).Add(mul(y, y), mul(x, x))), mod(new(big.Int).Sub(one, t)))
	}
	if x.Sign() == 0 && y.Cmp(one) == 0 {
		return keyringError(`an Ed25519 "x" must not be a point of small order: with it a constant signature verifies for any token`)
	}
	return nil
}
