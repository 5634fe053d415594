//! The compact formats: the JWS (signed form, profile section 5), the JWE (encrypted form, 5.1),
//! the claim set (steps 12 to 19), the strict JSON reader and base64url.
//!
//! Each validation step is marked in the code as "Profile 5, step N" ("Profile 5.1, step N" for the
//! encrypted form), so that a step found in one language is found in every other.

pub mod b64;
pub mod claims;
pub mod json;
pub mod jwe;
pub mod jws;

use serde_json::{Map, Value};

use crate::errors::Reason;
use crate::keys::Keyring;

/// The `typ` of every token of the profile.
pub const TOKEN_TYPE: &str = "mrtr-state+jwt";

/// Header and claims nest at most 33 levels (the claims object plus 32 levels of state).
pub const MAX_JSON_DEPTH: usize = 33;

/// Profile 5, steps 1 to 11 (5.1 for a token of five segments): the decoded, verified claim set.
pub fn open_claims(
    ring: &Keyring,
    token: &str,
    max_token_bytes: usize,
) -> Result<Map<String, Value>, Reason> {
    // Profile 5, step 1 (and Profile 5.1, step 1): Size, in bytes of the UTF-8 encoding, before any
    // decoding. A Rust &str is UTF-8, so its length is that count.
    if token.len() > max_token_bytes {
        return Err(Reason::TooLarge);
    }
    if token.matches('.').count() == 4 {
        jwe::open_claims(ring, token)
    } else {
        jws::verify(ring, token)
    }
}

/// Reads a decoded header or claim set: strict JSON (steps 4 and 11), an object.
pub(crate) fn strict_object(bytes: &[u8]) -> Result<Map<String, Value>, Reason> {
    match json::read_strict(bytes, MAX_JSON_DEPTH) {
        Some(Value::Object(map)) => Ok(map),
        _ => Err(Reason::Malformed),
    }
}
