//! The signed form: a compact JWS with HS256 or EdDSA (profile 3.1, section 5 steps 2 to 11).

use ed25519_dalek::{Signature, Signer, Verifier};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;

use super::{TOKEN_TYPE, b64, strict_object};
use crate::errors::Reason;
use crate::keys::{Key, KeyKind, Keyring};

/// The header parameters of a signed token; any other is refused.
const ALLOWED_HEADER: [&str; 3] = ["alg", "typ", "kid"];

/// Profile 5, steps 2 to 11: the claim set of a signed token, or the reason it is refused.
pub fn verify(ring: &Keyring, token: &str) -> Result<Map<String, Value>, Reason> {
    // Profile 5, step 2: Three non-empty segments of the base64url alphabet.
    let segments: Vec<&str> = token.split('.').collect();
    if segments.len() != 3
        || segments
            .iter()
            .any(|s| s.is_empty() || !b64::is_alphabet(s))
    {
        return Err(Reason::Malformed);
    }
    // Profile 5, step 3: Each segment is the canonical encoding of its bytes.
    let decoded: Vec<Vec<u8>> = segments
        .iter()
        .map(|s| b64::decode(s).ok_or(Reason::Malformed))
        .collect::<Result<_, _>>()?;
    // Profile 5, step 4: The header is strict JSON and an object.
    let header = strict_object(&decoded[0])?;
    // Profile 5, step 5: No header parameter but alg, typ and kid.
    if header.keys().any(|k| !ALLOWED_HEADER.contains(&k.as_str())) {
        return Err(Reason::UnsupportedHeader);
    }
    // Profile 5, step 6: alg is HS256 or EdDSA (none, Ed25519, HS512, missing: refused).
    let alg = match header.get("alg") {
        Some(Value::String(a)) if a == "HS256" || a == "EdDSA" => a.as_str(),
        _ => return Err(Reason::UnsupportedHeader),
    };
    // Profile 5, step 7: typ exactly, as the decoded JSON string.
    if header.get("typ").and_then(Value::as_str) != Some(TOKEN_TYPE) {
        return Err(Reason::WrongType);
    }
    // Profile 5, step 8: The kid names a key of the ring.
    let key = header
        .get("kid")
        .and_then(Value::as_str)
        .and_then(|kid| ring.get(kid))
        .ok_or(Reason::UnknownKey)?;
    // Profile 5, step 9: alg is the algorithm of that key (an encryption key's is A256GCM, which
    // no signed token carries).
    if key.algorithm() != alg {
        return Err(Reason::AlgorithmMismatch);
    }
    // Profile 5, step 10: The signature, of the key's length, over the first two segments as received.
    let signing_input = &token[..segments[0].len() + 1 + segments[1].len()];
    if !signature_verifies(key, signing_input.as_bytes(), &decoded[2]) {
        return Err(Reason::BadSignature);
    }
    // Profile 5, step 11: The claims are strict JSON (I-JSON, no duplicates, at most 33 levels).
    strict_object(&decoded[1])
}

fn signature_verifies(key: &Key, input: &[u8], signature: &[u8]) -> bool {
    match key.kind() {
        KeyKind::Hs256 { secret } => {
            if signature.len() != 32 {
                return false;
            }
            let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
                return false;
            };
            mac.update(input);
            // verify_slice compares in constant time.
            mac.verify_slice(signature).is_ok()
        }
        KeyKind::EdDsa { public, .. } => {
            let Ok(bytes) = <[u8; 64]>::try_from(signature) else {
                return false;
            };
            public.verify(input, &Signature::from_bytes(&bytes)).is_ok()
        }
        KeyKind::A256Gcm { .. } => false,
    }
}

/// The header segment a key writes: `{"alg":...,"typ":"mrtr-state+jwt","kid":...}` (profile 4, point 2).
pub fn header_segment(key: &Key) -> String {
    let header = format!(
        "{{\"alg\":\"{}\",\"typ\":\"{TOKEN_TYPE}\",\"kid\":{}}}",
        key.algorithm(),
        Value::String(key.kid().to_owned())
    );
    b64::encode(header.as_bytes())
}

/// Signs a claim set with a signing key (profile 4, points 2, 6 and 7). `None` for a key that
/// cannot sign (an Ed25519 public key, an encryption key).
pub fn sign(key: &Key, claims_json: &[u8]) -> Option<String> {
    let signing_input = format!("{}.{}", header_segment(key), b64::encode(claims_json));
    let signature = match key.kind() {
        KeyKind::Hs256 { secret } => {
            let mut mac = Hmac::<Sha256>::new_from_slice(secret).ok()?;
            mac.update(signing_input.as_bytes());
            mac.finalize().into_bytes().to_vec()
        }
        KeyKind::EdDsa {
            private: Some(private),
            ..
        } => private.sign(signing_input.as_bytes()).to_bytes().to_vec(),
        _ => return None,
    };
    Some(format!("{signing_input}.{}", b64::encode(&signature)))
}
