//! Keys (profile, section 7): JWKs read by jsonwebtoken, plus the checks the profile asks on load.
//!
//! jsonwebtoken parses the JWK (`jwk::Jwk`), turns it into a verification key
//! (`DecodingKey::from_jwk`) and computes its RFC 7638 thumbprint (`Jwk::thumbprint`). It checks
//! neither lengths nor `alg`/`use`, so this module adds: an HS256 secret of at least 32 bytes, a
//! 32-byte Ed25519 key (the rust_crypto verifier slices the first 32 bytes and would panic on a
//! shorter one), canonical unpadded base64url members, `x` a canonical point of large order
//! (`ed25519_key_problem`), `x` equal to the public key of `d`, and a well-formed `kid`. Any
//! problem is an error when the key is loaded, never when a token is checked.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use curve25519_dalek::edwards::CompressedEdwardsY;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::{Map, Value};

use crate::jwe::{is_encryption_jwk, EncryptionKey};

/// A key that verifies: its id, the one algorithm it is used with, and the library's key.
pub struct VerifyingKey {
    pub kid: String,
    pub alg: Algorithm,
    pub key: DecodingKey,
}

/// A key that signs (for `mint`).
pub struct SigningKey {
    pub kid: String,
    pub alg: Algorithm,
    pub key: EncodingKey,
}

/// What a mint job's key mints: a signed token, or an encrypted one (jwe.rs).
pub enum MintingKey {
    Signing(SigningKey),
    Encryption(EncryptionKey),
}

/// A verifier's key ring: every signing key verifies, every encryption key (jwe.rs) decrypts;
/// looked up by `kid`.
pub struct Ring(Vec<VerifyingKey>, Vec<EncryptionKey>);

impl Ring {
    /// Loads a JWKS (`{"keys": [...]}`); kids must be distinct.
    pub fn from_jwks(jwks: &Value) -> Result<Ring, String> {
        let keys = jwks
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("the key set must be an object with a \"keys\" array")?;
        // Profile 7.3 (issue 32, D1): a ring holds at least one key.
        if keys.is_empty() {
            return Err("a key ring needs at least one key".into());
        }
        let mut ring: Vec<VerifyingKey> = Vec::with_capacity(keys.len());
        let mut encryption: Vec<EncryptionKey> = Vec::new();
        // The secrets of the HS256 keys so far: an encryption key may share none (profile 7.6).
        let mut hs256_secrets: Vec<Vec<u8>> = Vec::new();
        // The x and d of the Ed25519 keys so far: no oct key may hold either (profile 7.6, issue 32 D4).
        let mut ed25519_bytes: Vec<Vec<u8>> = Vec::new();
        for (i, jwk) in keys.iter().enumerate() {
            if is_encryption_jwk(jwk) {
                let key = EncryptionKey::load(jwk).map_err(|e| format!("key {i}: {e}"))?;
                if ring.iter().any(|k| k.kid == key.kid)
                    || encryption.iter().any(|k| k.kid == key.kid)
                {
                    return Err(format!("key {i}: a second key with the same kid"));
                }
                if hs256_secrets.iter().any(|s| key.holds(s))
                    || encryption.iter().any(|k| k.holds(key.secret()))
                    || ed25519_bytes.iter().any(|b| key.holds(b))
                {
                    return Err(format!(
                        "key {i}: an encryption key holds the secret of another key of the ring"
                    ));
                }
                encryption.push(key);
                continue;
            }
            let loaded = load(jwk).map_err(|e| format!("key {i}: {e}"))?;
            if ring.iter().any(|k| k.kid == loaded.kid)
                || encryption.iter().any(|k| k.kid == loaded.kid)
            {
                return Err(format!("key {i}: a second key with the same kid"));
            }
            let key = DecodingKey::from_jwk(&loaded.jwk).map_err(|e| format!("key {i}: {e}"))?;
            if loaded.alg == Algorithm::HS256 {
                if encryption.iter().any(|k| k.holds(&loaded.secret)) {
                    return Err(format!(
                        "key {i}: an HS256 key holds the secret of an encryption key of the ring"
                    ));
                }
                if ed25519_bytes.iter().any(|b| same_bytes(b, &loaded.secret)) {
                    return Err(format!(
                        "key {i}: an HS256 key holds the d or the x of an Ed25519 key of the ring"
                    ));
                }
                hs256_secrets.push(loaded.secret.clone());
            } else {
                // An Ed25519 key: its x (and d) must be no oct key's secret, before or after it.
                let mut own = vec![loaded.secret.clone()];
                own.extend(loaded.private.clone());
                if own.iter().any(|b| {
                    hs256_secrets.iter().any(|s| same_bytes(s, b))
                        || encryption.iter().any(|k| k.holds(b))
                }) {
                    return Err(format!(
                        "key {i}: an oct key of the ring holds the d or the x of this Ed25519 key"
                    ));
                }
                ed25519_bytes.extend(own);
            }
            ring.push(VerifyingKey {
                kid: loaded.kid,
                alg: loaded.alg,
                key,
            });
        }
        Ok(Ring(ring, encryption))
    }

    /// The signing key named `kid`, if the ring holds one.
    pub fn get(&self, kid: &str) -> Option<&VerifyingKey> {
        self.0.iter().find(|key| key.kid == kid)
    }

    /// The encryption key named `kid`, if the ring holds one.
    pub fn encryption_key(&self, kid: &str) -> Option<&EncryptionKey> {
        self.1.iter().find(|key| key.kid == kid)
    }
}

/// Loads a mint job's key: an encryption JWK (`"alg": "A256GCM"`) or a private signing JWK.
pub fn minting_key(jwk: &Value) -> Result<MintingKey, String> {
    if is_encryption_jwk(jwk) {
        return Ok(MintingKey::Encryption(EncryptionKey::load(jwk)?));
    }
    Ok(MintingKey::Signing(signing_key(jwk)?))
}

/// Loads a private JWK: `oct` with `k`, or `OKP` Ed25519 with `x` and `d`.
pub fn signing_key(jwk: &Value) -> Result<SigningKey, String> {
    let loaded = load(jwk)?;
    let key = match loaded.alg {
        Algorithm::HS256 => EncodingKey::from_secret(&loaded.secret).map_err(|e| e.to_string())?,
        _ => EncodingKey::from_ed_der(&pkcs8_ed25519(
            loaded
                .private
                .as_deref()
                .ok_or("an Ed25519 signing key needs \"d\"")?,
        )),
    };
    Ok(SigningKey {
        kid: loaded.kid,
        alg: loaded.alg,
        key,
    })
}

/// What `load` learned from one JWK.
struct Loaded {
    jwk: Jwk,
    alg: Algorithm,
    kid: String,
    /// The HS256 secret (`k`) or the Ed25519 public key (`x`).
    secret: Vec<u8>,
    /// The Ed25519 private key (`d`), when present.
    private: Option<Vec<u8>>,
}

/// What is wrong with a 32-byte Ed25519 public key under profile 7.2, or `None`; never quotes it.
///
/// jsonwebtoken's rust_crypto backend verifies with ed25519-dalek's lenient `verify`, whose key
/// decoding (curve25519-dalek's `decompress`) reduces a `y` of p or more, reads `x = 0` with the
/// sign bit set as `x = 0`, and keeps points of small order: under the identity point the
/// signature R = identity, S = 0 verifies for every message. `decompress` finds whether the point
/// exists; compressing it again gives the canonical encoding, which must be the bytes given (this
/// refuses y >= p and the set sign bit of x = 0); `is_small_order` is [8]P = identity.
fn ed25519_key_problem(x: &[u8]) -> Option<&'static str> {
    let Ok(compressed) = CompressedEdwardsY::from_slice(x) else {
        return Some("an Ed25519 \"x\" must be 32 bytes");
    };
    let Some(point) = compressed.decompress() else {
        return Some("an Ed25519 \"x\" must encode a point on the curve: no x exists for its y");
    };
    if point.compress() != compressed {
        return Some(
            "an Ed25519 \"x\" must be the canonical encoding of its curve point (RFC 8032, 5.1.3)",
        );
    }
    if point.is_small_order() {
        return Some("an Ed25519 \"x\" must not be a point of small order: with it a constant signature verifies for any token");
    }
    None
}

fn load(value: &Value) -> Result<Loaded, String> {
    let members = value.as_object().ok_or("a JWK must be a JSON object")?;
    // The parser's message could quote a member's value, so it is not passed on.
    let jwk: Jwk = serde_json::from_value(value.clone()).map_err(|_| {
        "not a JWK that jsonwebtoken can read (kty, crv, k or x missing or mistyped)"
    })?;
    if !matches!(text(members, "use")?, None | Some("sig")) {
        return Err("\"use\" must be \"sig\"".into());
    }
    let declared = text(members, "alg")?;
    let (alg, secret, private) = match &jwk.algorithm {
        AlgorithmParameters::OctetKey(params) => {
            if !matches!(declared, None | Some("HS256")) {
                return Err("an oct key's \"alg\" must be HS256".into());
            }
            let secret = base64url("k", &params.value)?;
            if secret.len() < 32 {
                return Err("an HS256 secret must be at least 32 bytes".into());
            }
            weak_secret_problem(&secret)?;
            (Algorithm::HS256, secret, None)
        }
        AlgorithmParameters::OctetKeyPair(params) if params.curve == EllipticCurve::Ed25519 => {
            if !matches!(declared, None | Some("EdDSA") | Some("Ed25519")) {
                return Err("an Ed25519 key's \"alg\" must be EdDSA".into());
            }
            let public = base64url("x", &params.x)?;
            if public.len() != 32 {
                return Err("an Ed25519 \"x\" must be 32 bytes".into());
            }
            if let Some(problem) = ed25519_key_problem(&public) {
                return Err(problem.into());
            }
            let private = match text(members, "d")? {
                None => None,
                Some(d) => Some(base64url("d", d)?),
            };
            if let Some(d) = &private {
                if d.len() != 32 {
                    return Err("an Ed25519 \"d\" must be 32 bytes".into());
                }
                // The library derives the public key of d; it must be the x given.
                let derived = Jwk::from_encoding_key(
                    &EncodingKey::from_ed_der(&pkcs8_ed25519(d)),
                    Algorithm::EdDSA,
                )
                .map_err(|e| e.to_string())?;
                if !matches!(&derived.algorithm, AlgorithmParameters::OctetKeyPair(p) if p.x == params.x)
                {
                    return Err("\"x\" is not the public key of \"d\"".into());
                }
            }
            (Algorithm::EdDSA, public, private)
        }
        _ => return Err("only oct (HS256) and OKP Ed25519 (EdDSA) keys are supported".into()),
    };
    let kid = match text(members, "kid")? {
        Some(kid) if is_valid_kid(kid) => kid.to_owned(),
        Some(_) => {
            return Err("\"kid\" must be 1 to 128 printable ASCII characters without spaces".into())
        }
        // RFC 7638 over the required members, as the profile's section 7.4 asks.
        None => jwk
            .thumbprint(ThumbprintHash::SHA256)
            .map_err(|e| e.to_string())?,
    };
    Ok(Loaded {
        jwk,
        alg,
        kid,
        secret,
        private,
    })
}

/// Whether two byte strings are equal, looking at every byte whatever the first difference.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn text<'a>(members: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match members.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("JWK member {name:?} must be a string")),
    }
}

/// Canonical unpadded base64url only (the base64 crate's URL_SAFE_NO_PAD refuses padding and
/// non-zero unused bits).
fn base64url(name: &str, text: &str) -> Result<Vec<u8>, String> {
    URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| format!("JWK member {name:?} is not canonical unpadded base64url"))
}

/// Profile 7.1, one rule for every `oct` secret (HS256 and A256GCM alike): a secret that is one
/// byte, or a pattern of at most 8 bytes, repeated is refused as obviously not random.
pub(crate) fn weak_secret_problem(secret: &[u8]) -> Result<(), String> {
    for period in 1..=8.min(secret.len().saturating_sub(1)) {
        if secret[period..] == secret[..secret.len() - period] {
            return Err(format!(
                "an oct secret that is a pattern of {period} bytes repeated is not random"
            ));
        }
    }
    Ok(())
}

pub(crate) fn is_valid_kid(kid: &str) -> bool {
    (1..=128).contains(&kid.len()) && kid.bytes().all(|b| b.is_ascii_graphic())
}

/// An Ed25519 private key as the PKCS #8 v1 DER that `EncodingKey::from_ed_der` takes (RFC 8410:
/// a fixed 16-byte prefix, then the 32-byte seed `d`).
fn pkcs8_ed25519(d: &[u8]) -> Vec<u8> {
    const PREFIX: [u8; 16] = [
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    [&PREFIX[..], d].concat()
}
