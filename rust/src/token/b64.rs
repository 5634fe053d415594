//! Unpadded base64url in its canonical form only (RFC 7515 section 2, profile steps 2 and 3).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Which bytes are of the base64url alphabet `A-Z a-z 0-9 - _` (one lookup a byte: a token's
/// payload is thousands of them, and each is checked twice, at steps 2 and 3).
const ALPHABET: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
        b += 1;
    }
    table
};

/// Whether every byte of `text` is of the base64url alphabet `A-Z a-z 0-9 - _`.
pub fn is_alphabet(text: &str) -> bool {
    text.bytes().all(|b| ALPHABET[usize::from(b)])
}

/// Decodes canonical unpadded base64url: the alphabet only, a length modulo 4 other than 1, and the
/// unused low bits of the last character zero. `None` for anything else.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    if !is_alphabet(text) || text.len() % 4 == 1 {
        return None;
    }
    // The engine refuses non-zero trailing bits (decode_allow_trailing_bits is false by default).
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// Encodes bytes as unpadded base64url.
pub fn encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_non_canonical_forms() {
        assert_eq!(decode("AA").as_deref(), Some(&[0u8][..]));
        assert_eq!(decode("AB"), None, "unused bits set");
        assert_eq!(decode("AA=="), None, "padding");
        assert_eq!(decode("A"), None, "length 1 mod 4");
        assert_eq!(decode("a+b/"), None, "standard alphabet");
        assert_eq!(decode("AA AA"), None, "white space");
        assert_eq!(encode(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn the_alphabet_is_exactly_a_z_0_9_dash_underscore() {
        for b in 0..=255u8 {
            let expected = b.is_ascii_uppercase()
                || b.is_ascii_lowercase()
                || b.is_ascii_digit()
                || b == b'-'
                || b == b'_';
            let text = [b];
            let text = std::str::from_utf8(&text);
            assert_eq!(ALPHABET[usize::from(b)], expected, "byte {b}");
            if let Ok(text) = text {
                assert_eq!(is_alphabet(text), expected, "byte {b}");
            }
        }
        assert!(is_alphabet("AZaz09-_"));
        assert!(!is_alphabet("AZaz09-_="));
    }
}
