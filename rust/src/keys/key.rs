//! One key of a ring, loaded from a JWK with every rule of profile 7.1, 7.2, 7.4 and 7.6.

use std::fmt;

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use super::edwards::is_acceptable_public_key;
use crate::errors::KeyringError;
use crate::token::b64;

/// The fewest bytes of an HS256 secret (profile 7.1), and the exact length of an encryption key.
pub const MIN_SECRET_BYTES: usize = 32;

const KEYGEN_ADVICE: &str = "make one with `mrtr-state keygen` (32 random bytes)";

/// What a key is, and the material it holds.
pub enum KeyKind {
    /// An HS256 secret (`kty` `oct`), at least 32 random bytes.
    Hs256 {
        /// The secret.
        secret: Zeroizing<Vec<u8>>,
    },
    /// An Ed25519 key (`kty` `OKP`): a public key, and the private key for a signing key.
    EdDsa {
        /// The public key.
        public: VerifyingKey,
        /// The private key, absent on a verify-only key (boxed: it is large, and rarely held).
        private: Option<Box<SigningKey>>,
    },
    /// An AES-256-GCM encryption key (`kty` `oct`, `alg` `A256GCM`), exactly 32 bytes.
    A256Gcm {
        /// The key.
        key: Zeroizing<Vec<u8>>,
    },
}

/// One key: its id and its kind. Debug and Display never show key material.
pub struct Key {
    kid: String,
    kind: KeyKind,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Key {{ kid: {:?}, alg: {} }}",
            self.kid,
            self.algorithm()
        )
    }
}

impl Key {
    /// The key's id (explicit, or its RFC 7638 thumbprint).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The key's kind and material.
    pub fn kind(&self) -> &KeyKind {
        &self.kind
    }

    /// The algorithm the key is pinned to: `HS256`, `EdDSA` or `A256GCM` (profile 5, step 9).
    pub fn algorithm(&self) -> &'static str {
        match self.kind {
            KeyKind::Hs256 { .. } => "HS256",
            KeyKind::EdDsa { .. } => "EdDSA",
            KeyKind::A256Gcm { .. } => "A256GCM",
        }
    }

    /// Whether the key can mint (an HS256 secret, an Ed25519 private key, an encryption key).
    pub fn can_mint(&self) -> bool {
        !matches!(self.kind, KeyKind::EdDsa { private: None, .. })
    }

    /// A new random HS256 key (32 bytes from the OS), with its thumbprint as `kid`.
    pub fn generate_hs256() -> Result<Key, KeyringError> {
        let mut secret = Zeroizing::new(vec![0u8; MIN_SECRET_BYTES]);
        getrandom::fill(&mut secret)
            .map_err(|_| KeyringError::new("the OS random source failed"))?;
        let kid = thumbprint_oct(&b64::encode(&secret));
        Ok(Key {
            kid,
            kind: KeyKind::Hs256 { secret },
        })
    }

    /// The secret bytes of an `oct` key (HS256 or encryption), for the shared-secret rule of 7.6.
    pub(crate) fn oct_secret(&self) -> Option<&[u8]> {
        match &self.kind {
            KeyKind::Hs256 { secret } => Some(secret),
            KeyKind::A256Gcm { key } => Some(key),
            KeyKind::EdDsa { .. } => None,
        }
    }

    /// The byte strings of an Ed25519 key (`x`, and `d` when held), for the rule of 7.6.
    pub(crate) fn ed25519_bytes(&self) -> Vec<[u8; 32]> {
        match &self.kind {
            KeyKind::EdDsa { public, private } => {
                let mut out = vec![public.to_bytes()];
                if let Some(private) = private {
                    out.push(private.to_bytes());
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// The public JWK of an Ed25519 key (profile 7.5); `None` for symmetric keys, never published.
    pub fn public_jwk(&self) -> Option<Value> {
        match &self.kind {
            KeyKind::EdDsa { public, .. } => Some(serde_json::json!({
                "kty": "OKP", "crv": "Ed25519", "x": b64::encode(public.as_bytes()),
                "kid": self.kid, "alg": "EdDSA", "use": "sig",
            })),
            _ => None,
        }
    }

    /// Loads one JWK (a JSON object) by the rules of profile section 7.
    pub fn from_jwk(jwk: &Value) -> Result<Key, KeyringError> {
        let jwk = jwk
            .as_object()
            .ok_or_else(|| KeyringError::new("a JWK must be a JSON object"))?;
        let kty = text_member(jwk, "kty")?
            .ok_or_else(|| KeyringError::new("a JWK needs \"kty\" (\"oct\" or \"OKP\")"))?;
        let alg = text_member(jwk, "alg")?;
        let use_ = text_member(jwk, "use")?;
        // Profile 7.4: a kid that is present is explicit and must be 1 to 128 printable ASCII characters.
        let explicit_kid = match jwk.get("kid") {
            None => None,
            Some(Value::String(kid)) if valid_kid(kid) => Some(kid.clone()),
            Some(_) => {
                return Err(KeyringError::new(
                    "\"kid\" must be a string of 1 to 128 printable ASCII characters (U+0021 to U+007E)",
                ));
            }
        };
        match kty {
            "oct" => {
                let encoded = text_member(jwk, "k")?
                    .ok_or_else(|| KeyringError::new("an oct JWK needs \"k\""))?;
                let secret = Zeroizing::new(b64::decode(encoded).ok_or_else(|| {
                    KeyringError::new("\"k\" must be canonical unpadded base64url")
                })?);
                let kid = explicit_kid.unwrap_or_else(|| thumbprint_oct(encoded));
                let kind = match alg {
                    Some("A256GCM") => {
                        if use_.is_some_and(|u| u != "enc") {
                            return Err(KeyringError::new(
                                "an A256GCM key's \"use\" must be \"enc\"",
                            ));
                        }
                        if secret.len() != 32 {
                            return Err(KeyringError::new(format!(
                                "an A256GCM key must be exactly 32 bytes, not {}; {KEYGEN_ADVICE}",
                                secret.len()
                            )));
                        }
                        refuse_weak(&secret)?;
                        KeyKind::A256Gcm { key: secret }
                    }
                    None | Some("HS256") => {
                        if use_.is_some_and(|u| u != "sig") {
                            return Err(KeyringError::new(
                                "an HS256 key's \"use\" must be \"sig\"",
                            ));
                        }
                        if secret.len() < MIN_SECRET_BYTES {
                            return Err(KeyringError::new(format!(
                                "an HS256 secret must be at least {MIN_SECRET_BYTES} random bytes, not {}; {KEYGEN_ADVICE}",
                                secret.len()
                            )));
                        }
                        refuse_weak(&secret)?;
                        KeyKind::Hs256 { secret }
                    }
                    Some(_) => {
                        return Err(KeyringError::new(
                            "an oct JWK's \"alg\" must be \"HS256\" or \"A256GCM\"",
                        ));
                    }
                };
                Ok(Key { kid, kind })
            }
            "OKP" => {
                if text_member(jwk, "crv")? != Some("Ed25519") {
                    return Err(KeyringError::new(
                        "an OKP JWK must have \"crv\": \"Ed25519\"",
                    ));
                }
                if alg.is_some_and(|a| a != "EdDSA" && a != "Ed25519") {
                    return Err(KeyringError::new(
                        "an Ed25519 key's \"alg\" must be \"EdDSA\"",
                    ));
                }
                if use_.is_some_and(|u| u != "sig") {
                    return Err(KeyringError::new(
                        "an Ed25519 key's \"use\" must be \"sig\"",
                    ));
                }
                let x_text = text_member(jwk, "x")?
                    .ok_or_else(|| KeyringError::new("an Ed25519 JWK needs \"x\""))?;
                let x: [u8; 32] = b64::decode(x_text)
                    .and_then(|x| x.try_into().ok())
                    .ok_or_else(|| {
                        KeyringError::new("\"x\" must be 32 bytes of canonical unpadded base64url")
                    })?;
                // Profile 7.2: a canonical point, not of small order, checked at load.
                if !is_acceptable_public_key(&x) {
                    return Err(KeyringError::new(
                        "\"x\" is not an acceptable Ed25519 public key (not a canonical point, or of small order)",
                    ));
                }
                let public = VerifyingKey::from_bytes(&x)
                    .map_err(|_| KeyringError::new("\"x\" is not an Ed25519 public key"))?;
                let private = match text_member(jwk, "d")? {
                    None => None,
                    Some(d_text) => {
                        let d: Zeroizing<[u8; 32]> = Zeroizing::new(
                            b64::decode(d_text)
                                .and_then(|d| d.try_into().ok())
                                .ok_or_else(|| {
                                    KeyringError::new(
                                        "\"d\" must be 32 bytes of canonical unpadded base64url",
                                    )
                                })?,
                        );
                        let signing = SigningKey::from_bytes(&d);
                        if signing.verifying_key().as_bytes() != &x {
                            return Err(KeyringError::new("\"x\" is not the public key of \"d\""));
                        }
                        Some(Box::new(signing))
                    }
                };
                let kid = explicit_kid.unwrap_or_else(|| thumbprint_okp(x_text));
                Ok(Key {
                    kid,
                    kind: KeyKind::EdDsa { public, private },
                })
            }
            _ => Err(KeyringError::new("\"kty\" must be \"oct\" or \"OKP\"")),
        }
    }

    /// An HS256 key from bare secret bytes (the environment's bare form), with its thumbprint as `kid`.
    pub fn from_secret(secret: &[u8]) -> Result<Key, KeyringError> {
        let encoded = b64::encode(secret);
        Key::from_jwk(&serde_json::json!({"kty": "oct", "k": encoded}))
    }
}

/// A member that, when present, must be a string (`null` is present, and refused).
fn text_member<'a>(
    jwk: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, KeyringError> {
    match jwk.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(KeyringError::new(format!(
            "\"{name}\" must be a string when present"
        ))),
    }
}

fn valid_kid(kid: &str) -> bool {
    (1..=128).contains(&kid.len()) && kid.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Profile 7.1: one byte repeated, or a pattern of at most 8 bytes repeated, is refused.
fn refuse_weak(secret: &[u8]) -> Result<(), KeyringError> {
    let weak = (1..=8usize)
        .any(|p| p < secret.len() && (0..secret.len() - p).all(|i| secret[i] == secret[i + p]));
    if weak {
        return Err(KeyringError::new(format!(
            "the secret is a short pattern repeated, not random bytes; {KEYGEN_ADVICE}"
        )));
    }
    Ok(())
}

fn thumbprint(canonical: &str) -> String {
    b64::encode(&Sha256::digest(canonical.as_bytes()))
}

fn thumbprint_oct(k: &str) -> String {
    thumbprint(&format!(r#"{{"k":"{k}","kty":"oct"}}"#))
}

fn thumbprint_okp(x: &str) -> String {
    thumbprint(&format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn weak_and_short_secrets_are_refused() {
        let random: Vec<u8> = (0..32u8)
            .map(|i| i.wrapping_mul(97).wrapping_add(13))
            .collect();
        assert!(Key::from_secret(&random).is_ok());
        assert!(Key::from_secret(&[7u8; 32]).is_err());
        let pattern: Vec<u8> = (0..40).map(|i| (i % 8) as u8 + 1).collect();
        assert!(Key::from_secret(&pattern).is_err());
        let nine: Vec<u8> = (0..40).map(|i| (i % 9) as u8 + 1).collect();
        assert!(Key::from_secret(&nine).is_ok());
        assert!(Key::from_secret(&random[..31]).is_err());
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let secret: Vec<u8> = (0..32u8)
            .map(|i| i.wrapping_mul(97).wrapping_add(13))
            .collect();
        let key =
            Key::from_jwk(&json!({"kty": "oct", "k": b64::encode(&secret), "kid": "k1"})).unwrap();
        let shown = format!("{key:?}");
        assert!(!shown.contains(&b64::encode(&secret)));
        assert_eq!(shown, "Key { kid: \"k1\", alg: HS256 }");
    }

    #[test]
    fn kid_rules() {
        let k = b64::encode(
            &(0..32u8)
                .map(|i| i.wrapping_mul(97).wrapping_add(13))
                .collect::<Vec<_>>(),
        );
        for kid in [
            json!(""),
            json!(" a"),
            json!("a\t"),
            json!(1),
            json!(null),
            json!("\u{7f}"),
            json!("é"),
            json!("a".repeat(129)),
        ] {
            assert!(
                Key::from_jwk(&json!({"kty": "oct", "k": k, "kid": kid})).is_err(),
                "{kid}"
            );
        }
        assert!(Key::from_jwk(&json!({"kty": "oct", "k": k, "kid": "a".repeat(128)})).is_ok());
    }
}
