//! Key rings (profile 7.3): an ordered, non-empty list of keys with distinct ids; the first mints.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde_json::Value;

use super::file::{KeyFileOptions, read_key_file};
use super::key::{Key, KeyKind, MIN_SECRET_BYTES};
use crate::errors::KeyringError;
use crate::token::json;

/// The environment variable the reference reads keys from.
pub const DEFAULT_KEYS_VARIABLE: &str = "MRTR_STATE_KEYS";

/// How deep a JWKS text may nest: a JWKS is three levels; anything deeper is not a JWKS.
const MAX_JWKS_DEPTH: usize = 8;

/// An ordered set of keys: the first signs (or encrypts) new tokens, every key opens tokens of its
/// own form. Debug shows the ids and algorithms only.
pub struct Keyring {
    keys: Vec<Key>,
    by_kid: HashMap<String, usize>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.keys.iter()).finish()
    }
}

impl Keyring {
    /// A ring of these keys, in this order, checked against the ring rules of profile 7.3 and 7.6:
    /// not empty, distinct `kid`s, and no encryption key sharing its secret with another key, no
    /// `oct` key holding the `d` or `x` of an Ed25519 key of the ring.
    pub fn new(keys: Vec<Key>) -> Result<Keyring, KeyringError> {
        if keys.is_empty() {
            return Err(KeyringError::new("a key ring needs at least one key"));
        }
        let mut by_kid = HashMap::new();
        for (i, key) in keys.iter().enumerate() {
            if by_kid.insert(key.kid().to_owned(), i).is_some() {
                return Err(KeyringError::new(format!(
                    "two keys of the ring have the kid {:?}",
                    key.kid()
                )));
            }
        }
        for (i, key) in keys.iter().enumerate() {
            let Some(secret) = key.oct_secret() else {
                continue;
            };
            let is_encryption = matches!(key.kind(), KeyKind::A256Gcm { .. });
            for (j, other) in keys.iter().enumerate() {
                if i == j {
                    continue;
                }
                let other_is_encryption = matches!(other.kind(), KeyKind::A256Gcm { .. });
                let shares_oct = other.oct_secret().is_some_and(|o| {
                    (is_encryption || other_is_encryption)
                        && bool::from(subtle::ConstantTimeEq::ct_eq(o, secret))
                });
                let holds_ed25519 = other.ed25519_bytes().iter().any(|b| b.as_slice() == secret);
                if shares_oct || holds_ed25519 {
                    return Err(KeyringError::new(format!(
                        "the keys {:?} and {:?} hold the same secret bytes: an encryption key, and an Ed25519 key's d or x, must never be another key's secret (profile 7.6)",
                        key.kid(),
                        other.kid()
                    )));
                }
            }
        }
        Ok(Keyring { keys, by_kid })
    }

    /// Loads a JWKS (`{"keys": [...]}`) from its JSON text.
    pub fn from_jwks_json(text: &str) -> Result<Keyring, KeyringError> {
        let value = json::read_strict(text.as_bytes(), MAX_JWKS_DEPTH).ok_or_else(|| {
            KeyringError::new("the JWKS is not strict JSON (or repeats a member name)")
        })?;
        Keyring::from_jwks_value(&value)
    }

    /// Loads a JWKS already read as a JSON value.
    pub fn from_jwks_value(jwks: &Value) -> Result<Keyring, KeyringError> {
        let keys = jwks
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| KeyringError::new("a JWKS is an object with a \"keys\" array"))?;
        let keys = keys
            .iter()
            .enumerate()
            .map(|(i, jwk)| {
                Key::from_jwk(jwk)
                    .map_err(|e| KeyringError::new(format!("key {i}: {}", e.message())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Keyring::new(keys)
    }

    /// Reads keys as `MRTR_STATE_KEYS` holds them: a JWKS or a single JWK as JSON, or one HS256
    /// secret in base64url or base64 (padding optional) of at least 32 bytes. `what` names the
    /// origin in messages, which never quote the value.
    pub fn parse(value: &str, what: &str) -> Result<Keyring, KeyringError> {
        let value = value.trim();
        if value.starts_with('{') {
            let parsed = json::read_strict(value.as_bytes(), MAX_JWKS_DEPTH)
                .ok_or_else(|| KeyringError::new(format!("{what} is not strict JSON")))?;
            if parsed.get("keys").is_some() {
                return Keyring::from_jwks_value(&parsed)
                    .map_err(|e| KeyringError::new(format!("{what}: {}", e.message())));
            }
            let key = Key::from_jwk(&parsed)
                .map_err(|e| KeyringError::new(format!("{what}: {}", e.message())))?;
            return Keyring::new(vec![key]);
        }
        use base64::Engine;
        use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
        let text = value.trim_end_matches('=');
        let url = text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let std = text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
        let decoded = match (text.is_empty(), url, std) {
            (false, true, _) => URL_SAFE_NO_PAD.decode(text).ok(),
            (false, false, true) => STANDARD_NO_PAD.decode(text).ok(),
            _ => None,
        };
        let secret = zeroize::Zeroizing::new(decoded.ok_or_else(|| {
            KeyringError::new(format!(
                "{what} is neither JSON nor a base64 secret; make one with `mrtr-state keygen`"
            ))
        })?);
        if secret.len() < MIN_SECRET_BYTES {
            return Err(KeyringError::new(format!(
                "{what} holds a secret of {} bytes; HS256 needs at least {MIN_SECRET_BYTES} random bytes",
                secret.len()
            )));
        }
        let key = Key::from_secret(&secret)
            .map_err(|e| KeyringError::new(format!("{what}: {}", e.message())))?;
        Keyring::new(vec![key])
    }

    /// Loads keys from an environment variable (by `parse`'s rules).
    pub fn from_env(var: &str) -> Result<Keyring, KeyringError> {
        let value = std::env::var(var).unwrap_or_default();
        if value.trim().is_empty() {
            return Err(KeyringError::new(format!(
                "the environment variable {var} is not set: set it to a JWKS or an HS256 secret of at least {MIN_SECRET_BYTES} bytes (`mrtr-state keygen`)"
            )));
        }
        Keyring::parse(&value, &format!("the environment variable {var}"))
    }

    /// Loads keys from a key file with the default options: a regular file only, not world-writable.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Keyring, KeyringError> {
        Keyring::from_file_with(path, KeyFileOptions::default())
    }

    /// Loads keys from a key file (by `parse`'s rules) with these options.
    pub fn from_file_with(
        path: impl AsRef<Path>,
        options: KeyFileOptions,
    ) -> Result<Keyring, KeyringError> {
        let path = path.as_ref();
        let data = read_key_file(path, options)?;
        Keyring::parse_key_file(path, &data)
    }

    /// The keys of a key file's bytes (by `parse`'s rules); messages name the path, never a key.
    pub(crate) fn parse_key_file(path: &Path, data: &[u8]) -> Result<Keyring, KeyringError> {
        let text = std::str::from_utf8(data).map_err(|_| {
            KeyringError::new(format!("the key file {} is not UTF-8 text", path.display()))
        })?;
        Keyring::parse(text, &format!("the key file {}", path.display()))
    }

    /// A ring of one random HS256 key, for development only: it lives in this process, so tokens
    /// do not survive a restart and no other replica can open them.
    pub fn dev_hs256() -> Keyring {
        let key = Key::generate_hs256().expect("the OS random source is available");
        Keyring::new(vec![key]).expect("one fresh random key is a valid ring")
    }

    /// The keys, in order.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    /// The key with this id.
    pub fn get(&self, kid: &str) -> Option<&Key> {
        self.by_kid.get(kid).map(|&i| &self.keys[i])
    }

    /// The first key, which mints new tokens.
    pub fn first(&self) -> &Key {
        &self.keys[0]
    }

    /// The public JWKS (profile 7.5): the Ed25519 public keys only; secrets are never published.
    pub fn public_jwks(&self) -> Value {
        let keys: Vec<Value> = self.keys.iter().filter_map(Key::public_jwk).collect();
        serde_json::json!({ "keys": keys })
    }
}
