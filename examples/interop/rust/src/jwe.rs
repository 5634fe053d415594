//! The encrypted form of the profile: a JWE in compact serialization with `"alg": "dir"` and
//! `"enc": "A256GCM"`, with josekit (jsonwebtoken has no JWE).
//!
//! josekit gives the compact parse, AES-256-GCM (OpenSSL) with the protected header segment as
//! received as the AAD (RFC 7516, 5.1 step 14), the tag check, and a fresh random 96-bit IV when
//! encrypting. What this module adds before josekit sees the token, because josekit does not check
//! it or gives no reason code: five segments with an empty encrypted key; canonical base64url
//! (josekit's decoder is strict, but its refusal is the same error as a bad tag); strict header
//! JSON (josekit reads the header into a serde_json map, which keeps the last duplicate); the
//! header allowlist (josekit accepted an unknown member, and `zip`: it inflates a compressed
//! plaintext); `dir` and `A256GCM`; the exact `typ`; the kid lookup and the key's form; and the IV
//! and tag lengths (josekit decrypted a token with an 8-byte IV: OpenSSL takes any IV length). The decrypted claims then go
//! through the same steps 11 to 19 as a signed token's (`verify::claim_steps`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use josekit::jwe::{self, Dir, JweHeader};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::keys::{is_valid_kid, Ring};
use crate::strict_json;
use crate::verify::{Reason, TYP};

/// The algorithm of an encryption key: the `alg` of its JWK and the `enc` of its tokens.
pub const ALG: &str = "A256GCM";

const HEADER_PARAMETERS: [&str; 4] = ["alg", "enc", "typ", "kid"];
const KEY_BYTES: usize = 32;
const IV_BYTES: usize = 12;
const TAG_BYTES: usize = 16;

/// An encryption key: its id and its 32 bytes. Never printed.
pub struct EncryptionKey {
    pub kid: String,
    secret: Vec<u8>,
}

impl EncryptionKey {
    /// Whether this key's secret is `other` (compared in constant time): a ring refuses an
    /// encryption key that shares its secret with any other key (profile 7.6).
    pub fn holds(&self, other: &[u8]) -> bool {
        self.secret.len() == other.len()
            && self
                .secret
                .iter()
                .zip(other)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    /// The secret, for comparing two encryption keys of one ring.
    pub fn secret(&self) -> &[u8] {
        &self.secret
    }
}

/// Whether `jwk` is an encryption key (`"kty": "oct"` with `"alg": "A256GCM"`); an `oct` key
/// without `alg` stays an HS256 secret.
pub fn is_encryption_jwk(jwk: &Value) -> bool {
    jwk.get("kty").and_then(Value::as_str) == Some("oct")
        && jwk.get("alg").and_then(Value::as_str) == Some(ALG)
}

impl EncryptionKey {
    /// Loads an encryption JWK: `use` is `enc` when present, `k` is exactly 32 bytes of canonical
    /// base64url, and the kid is the JWK's or the RFC 7638 thumbprint over `k` and `kty`.
    pub fn load(jwk: &Value) -> Result<Self, String> {
        let members = jwk.as_object().ok_or("a JWK must be a JSON object")?;
        match members.get("use") {
            None => {}
            Some(Value::String(u)) if u == "enc" => {}
            _ => return Err("an A256GCM key's \"use\" must be \"enc\"".into()),
        }
        let k = members
            .get("k")
            .and_then(Value::as_str)
            .ok_or("an A256GCM key needs \"k\" as a string")?;
        let secret = URL_SAFE_NO_PAD
            .decode(k)
            .map_err(|_| "JWK member \"k\" is not canonical unpadded base64url")?;
        if secret.len() != KEY_BYTES {
            return Err(format!("an A256GCM key must be exactly {KEY_BYTES} bytes"));
        }
        crate::keys::weak_secret_problem(&secret)?;
        let kid = match members.get("kid") {
            None => {
                // RFC 7638 over the required members of an oct key, as for an HS256 secret.
                let input = format!("{{\"k\":\"{k}\",\"kty\":\"oct\"}}");
                URL_SAFE_NO_PAD.encode(Sha256::digest(input.as_bytes()))
            }
            Some(Value::String(kid)) if is_valid_kid(kid) => kid.clone(),
            Some(_) => {
                return Err(
                    "\"kid\" must be 1 to 128 printable ASCII characters without spaces".into(),
                )
            }
        };
        Ok(EncryptionKey { kid, secret })
    }
}

/// Steps 2 to 10 of the encrypted form (step 1 has passed); returns the decrypted claims text.
pub fn decrypt(ring: &Ring, token: &str, segments: &[&str]) -> Result<Vec<u8>, Reason> {
    // 2. Five segments of the base64url alphabet; the encrypted key (the second) is empty for dir.
    let is_base64url = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let well_formed = segments.len() == 5
        && segments
            .iter()
            .enumerate()
            .all(|(i, s)| (i == 1) == s.is_empty() && s.bytes().all(is_base64url));
    if !well_formed {
        return Err(Reason::Malformed);
    }
    // 3. Canonical base64url (URL_SAFE_NO_PAD refuses padding and non-zero unused bits).
    let mut decoded = Vec::with_capacity(5);
    for segment in segments {
        decoded.push(
            URL_SAFE_NO_PAD
                .decode(segment)
                .map_err(|_| Reason::Malformed)?,
        );
    }
    // 4. The protected header is strict JSON, and an object.
    let header =
        strict_json::parse(&decoded[0], strict_json::MAX_DEPTH).map_err(|_| Reason::Malformed)?;
    let header = header.as_object().ok_or(Reason::Malformed)?;
    // 5. Only alg, enc, typ and kid.
    if !header
        .keys()
        .all(|name| HEADER_PARAMETERS.contains(&name.as_str()))
    {
        return Err(Reason::UnsupportedHeader);
    }
    // 6. dir and A256GCM.
    if header.get("alg").and_then(Value::as_str) != Some("dir")
        || header.get("enc").and_then(Value::as_str) != Some(ALG)
    {
        return Err(Reason::UnsupportedHeader);
    }
    // 7. typ byte for byte.
    if header.get("typ").and_then(Value::as_str) != Some(TYP) {
        return Err(Reason::WrongType);
    }
    // 8 and 9. kid names a key of the ring, and that key is an encryption key.
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .ok_or(Reason::UnknownKey)?;
    let key = match (ring.encryption_key(kid), ring.get(kid)) {
        (Some(key), _) => key,
        (None, Some(_)) => return Err(Reason::AlgorithmMismatch), // a signing key never decrypts
        (None, None) => return Err(Reason::UnknownKey),
    };
    // 10. The IV and tag lengths, then josekit decrypts and checks the tag.
    if decoded[2].len() != IV_BYTES || decoded[4].len() != TAG_BYTES {
        return Err(Reason::BadSignature);
    }
    // josekit's only error here is the tag (or the key) that does not fit: steps 2 to 9 passed.
    let decrypter = Dir
        .decrypter_from_bytes(&key.secret)
        .map_err(|_| Reason::BadSignature)?;
    let (plaintext, _header) =
        jwe::deserialize_compact(token, &decrypter).map_err(|_| Reason::BadSignature)?;
    Ok(plaintext)
}

/// The compact JWE of `claims` under `key`: protected header {alg: dir, enc: A256GCM, typ, kid}.
pub fn encrypt(key: &EncryptionKey, claims: &impl Serialize) -> Result<String, String> {
    let plaintext = serde_json::to_vec(claims).map_err(|e| format!("claims: {e}"))?;
    let mut header = JweHeader::new();
    header.set_content_encryption(ALG);
    header.set_token_type(TYP);
    header.set_key_id(&key.kid);
    let encrypter = Dir
        .encrypter_from_bytes(&key.secret)
        .map_err(|e| format!("josekit refused the key: {e}"))?;
    jwe::serialize_compact(&plaintext, &header, &encrypter)
        .map_err(|e| format!("encryption failed: {e}"))
}
