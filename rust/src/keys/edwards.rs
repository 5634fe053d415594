//! The Ed25519 public key rule of profile 7.2: a canonical encoding of a point of large order.

use curve25519_dalek::edwards::CompressedEdwardsY;

/// Whether `x` is the canonical encoding (RFC 8032 5.1.3) of a curve point that is not of small
/// order: `y` < p, the square root exists, no `x = 0` with the sign bit set, and [8]P ≠ identity.
pub fn is_acceptable_public_key(x: &[u8; 32]) -> bool {
    let compressed = CompressedEdwardsY(*x);
    match compressed.decompress() {
        // Re-encoding the point gives back the same bytes only for the canonical encoding
        // (y < p, and the sign bit clear when the x coordinate is 0).
        Some(point) => point.compress().as_bytes() == x && !point.is_small_order(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_identity_and_non_canonical() {
        let mut identity = [0u8; 32];
        identity[0] = 1;
        assert!(!is_acceptable_public_key(&identity));
        let mut signed_identity = identity;
        signed_identity[31] |= 0x80;
        assert!(!is_acceptable_public_key(&signed_identity));
        let base = curve25519_dalek::constants::ED25519_BASEPOINT_COMPRESSED;
        assert!(is_acceptable_public_key(base.as_bytes()));
    }
}
