package dev.mrtrstate.keys;

import java.math.BigInteger;

/**
 * Ed25519 public-key hygiene (profile, section 7.2), which the JDK does not check: the canonical RFC 8032
 * (5.1.3) encoding of a curve point, and not one of the 8 points of small order. With a small-order key a
 * constant signature verifies for a large share of all messages, so such a key is refused when it is loaded.
 */
final class Ed25519Point {
    static final BigInteger P = BigInteger.TWO.pow(255).subtract(BigInteger.valueOf(19));
    private static final BigInteger D =
            BigInteger.valueOf(-121665).multiply(inverse(BigInteger.valueOf(121666))).mod(P);
    private static final BigInteger SQRT_M1 = BigInteger.TWO.modPow(P.subtract(BigInteger.ONE).shiftRight(2), P);

    private Ed25519Point() {}

    /** The y coordinate of an encoding (little-endian, top bit cleared), as the JDK's EdECPoint wants it. */
    static BigInteger y(byte[] encoded) {
        byte[] bigEndian = new byte[32];
        for (int i = 0; i < 32; i++) {
            bigEndian[i] = encoded[31 - i];
        }
        bigEndian[0] &= 0x7f;
        return new BigInteger(1, bigEndian);
    }

    /** Whether the encoding's sign bit (the oddness of x) is set. */
    static boolean xOdd(byte[] encoded) {
        return (encoded[31] & 0x80) != 0;
    }

    /** What is wrong with a 32-byte Ed25519 public key under section 7.2, or null. Never quotes the key. */
    static String problem(byte[] encoded) {
        boolean sign = xOdd(encoded);
        BigInteger y = y(encoded);
        if (y.compareTo(P) >= 0) {
            return "an Ed25519 'x' must be the canonical encoding of a curve point: its y is p or more";
        }
        BigInteger yy = y.multiply(y);
        // x^2 = (y^2 - 1) / (d y^2 + 1)
        BigInteger xx = yy.subtract(BigInteger.ONE).multiply(inverse(D.multiply(yy).add(BigInteger.ONE))).mod(P);
        BigInteger x = xx.modPow(P.add(BigInteger.valueOf(3)).shiftRight(3), P);
        if (!x.multiply(x).mod(P).equals(xx)) {
            x = x.multiply(SQRT_M1).mod(P);
        }
        if (!x.multiply(x).mod(P).equals(xx)) {
            return "an Ed25519 'x' must encode a point on the curve: no x exists for its y";
        }
        if (x.signum() == 0 && sign) {
            return "an Ed25519 'x' must be the canonical encoding of a curve point: x = 0 with the sign bit set";
        }
        // [8]P by doubling three times; the sign of x does not change the order, so it is not applied.
        for (int i = 0; i < 3; i++) {
            BigInteger t = D.multiply(x).multiply(x).multiply(y).multiply(y).mod(P);
            BigInteger x2 = BigInteger.TWO.multiply(x).multiply(y).multiply(inverse(BigInteger.ONE.add(t))).mod(P);
            y = y.multiply(y).add(x.multiply(x)).multiply(inverse(BigInteger.ONE.subtract(t))).mod(P);
            x = x2;
        }
        if (x.signum() == 0 && y.equals(BigInteger.ONE)) {
            return "an Ed25519 'x' must not be a point of small order: with it a constant signature verifies for"
                    + " many tokens";
        }
        return null;
    }

    private static BigInteger inverse(BigInteger value) {
        return value.mod(P).modInverse(P);
    }
}
