//! The encrypted form: a compact JWE with `dir` and `A256GCM` (profile 3.6, section 5.1).

use aes_gcm::aead::{AeadInOut, Nonce, Tag};
use aes_gcm::{Aes256Gcm, KeyInit};
use serde_json::{Map, Value};

use super::{TOKEN_TYPE, b64, strict_object};
use crate::errors::Reason;
use crate::keys::{Key, KeyKind, Keyring};

/// The protected header parameters of an encrypted token; any other is refused.
const ALLOWED_HEADER: [&str; 4] = ["alg", "enc", "typ", "kid"];

/// Profile 5.1, steps 2 to 11: the claim set of an encrypted token, or the reason it is refused.
pub fn open_claims(ring: &Keyring, token: &str) -> Result<Map<String, Value>, Reason> {
    // Profile 5.1, step 2: Five segments of the base64url alphabet; the encrypted key (the second)
    // empty, the other four not.
    let segments: Vec<&str> = token.split('.').collect();
    if segments.len() != 5
        || !segments[1].is_empty()
        || segments
            .iter()
            .enumerate()
            .any(|(i, s)| i != 1 && (s.is_empty() || !b64::is_alphabet(s)))
    {
        return Err(Reason::Malformed);
    }
    // Profile 5.1, step 3: Each segment is the canonical encoding of its bytes.
    let decode = |s: &str| b64::decode(s).ok_or(Reason::Malformed);
    let (header_bytes, iv, mut ciphertext, tag) = (
        decode(segments[0])?,
        decode(segments[2])?,
        decode(segments[3])?,
        decode(segments[4])?,
    );
    // Profile 5.1, step 4: The protected header is strict JSON and an object.
    let header = strict_object(&header_bytes)?;
    // Profile 5.1, step 5: No header parameter but alg, enc, typ and kid (no zip).
    if header.keys().any(|k| !ALLOWED_HEADER.contains(&k.as_str())) {
        return Err(Reason::UnsupportedHeader);
    }
    // Profile 5.1, step 6: alg is dir and enc is A256GCM.
    if header.get("alg").and_then(Value::as_str) != Some("dir")
        || header.get("enc").and_then(Value::as_str) != Some("A256GCM")
    {
        return Err(Reason::UnsupportedHeader);
    }
    // Profile 5.1, step 7: typ exactly.
    if header.get("typ").and_then(Value::as_str) != Some(TOKEN_TYPE) {
        return Err(Reason::WrongType);
    }
    // Profile 5.1, step 8: The kid names a key of the ring.
    let key = header
        .get("kid")
        .and_then(Value::as_str)
        .and_then(|kid| ring.get(kid))
        .ok_or(Reason::UnknownKey)?;
    // Profile 5.1, step 9: The key is an encryption key (a signing key never decrypts).
    let KeyKind::A256Gcm { key: secret } = key.kind() else {
        return Err(Reason::AlgorithmMismatch);
    };
    // Profile 5.1, step 10: The IV and tag lengths, then AES-256-GCM with the protected header
    // segment as received as the additional authenticated data; the tag is compared in constant time.
    let (Ok(nonce), Ok(tag)) = (
        Nonce::<Aes256Gcm>::try_from(iv.as_slice()),
        Tag::<Aes256Gcm>::try_from(tag.as_slice()),
    ) else {
        return Err(Reason::BadSignature);
    };
    let cipher = Aes256Gcm::new_from_slice(secret).map_err(|_| Reason::BadSignature)?;
    cipher
        .decrypt_inout_detached(
            &nonce,
            segments[0].as_bytes(),
            ciphertext.as_mut_slice().into(),
            &tag,
        )
        .map_err(|_| Reason::BadSignature)?;
    // Profile 5.1, step 11: The plaintext is strict JSON, as in step 11 of section 5.
    strict_object(&ciphertext)
}

/// Encrypts a claim set under an encryption key with a fresh random IV (profile 4, encrypted form).
/// `None` for a key that is not an encryption key, or when the OS random source fails.
pub fn encrypt(key: &Key, claims_json: &[u8]) -> Option<String> {
    let KeyKind::A256Gcm { key: secret } = key.kind() else {
        return None;
    };
    let header = format!(
        "{{\"alg\":\"dir\",\"enc\":\"A256GCM\",\"typ\":\"{TOKEN_TYPE}\",\"kid\":{}}}",
        Value::String(key.kid().to_owned())
    );
    let header_segment = b64::encode(header.as_bytes());
    let mut iv = [0u8; 12];
    getrandom::fill(&mut iv).ok()?;
    let nonce = Nonce::<Aes256Gcm>::try_from(iv.as_slice()).ok()?;
    let cipher = Aes256Gcm::new_from_slice(secret).ok()?;
    let mut buffer = claims_json.to_vec();
    let tag = cipher
        .encrypt_inout_detached(
            &nonce,
            header_segment.as_bytes(),
            buffer.as_mut_slice().into(),
        )
        .ok()?;
    Some(format!(
        "{header_segment}..{}.{}.{}",
        b64::encode(&iv),
        b64::encode(&buffer),
        b64::encode(&tag)
    ))
}
