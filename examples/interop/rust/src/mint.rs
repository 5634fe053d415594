//! Minting (profile, section 4) with jsonwebtoken's `encode`.
//!
//! `Header::new` writes `"typ": "JWT"`, so the example sets the profile's `typ` and the `kid`; every
//! other header field of the library is `None` and left out. The claims are a struct, so the set is
//! closed by construction. What the library does not check, the example does before signing: the
//! state must be I-JSON (integer literals within +-(2^53 - 1)) and nest at most 32 levels, and the
//! token must fit the verifiers' size cap.
//!
//! The state is taken as JSON text and read with the verifier's own strict reader: a
//! `serde_json::Value` cannot show how a number was written (an integer literal beyond 64 bits is
//! already the nearest double, and `-0` is the float -0.0), and a minter must refuse what every
//! verifier would refuse rather than sign another value than it was given.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{encode, Header};
use serde::Serialize;
use serde_json::Value;

use crate::digest::arguments_digest;
use crate::keys::SigningKey;
use crate::strict_json::{self, MAX_SAFE_INTEGER};
use crate::verify::TYP;

/// How deeply arrays and objects may nest inside the state.
const MAX_STATE_DEPTH: usize = 32;

/// The size cap the verifiers apply by default (bytes; a token is ASCII).
const MAX_TOKEN_BYTES: usize = 8192;

/// What to mint: the request, the time and the state.
pub struct Mint {
    pub issuer: String,
    pub user: String,
    pub audience: String,
    /// The request's arguments object; `None` mints a token without `args_sha256`.
    pub arguments: Option<Value>,
    pub now: u64,
    pub ttl: u64,
    /// The state as JSON text, as the caller wrote it.
    pub state: String,
    /// The token id; 16 random bytes when `None`.
    pub jti: Option<String>,
}

/// The claims set, in the order the reference implementation writes it.
#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    args_sha256: Option<String>,
    state: &'a Value,
}

/// Mints a token; an error is a programming error of the caller, not a token.
pub fn mint(key: &SigningKey, job: &Mint) -> Result<String, String> {
    // Section 4, step 1: I-JSON (no integer literal beyond +-(2^53 - 1), ...), 32 levels at most.
    let state = strict_json::parse(job.state.as_bytes(), MAX_STATE_DEPTH)
        .map_err(|e| format!("the state cannot be carried exactly: {e}"))?;
    let exp = job
        .now
        .checked_add(job.ttl)
        .filter(|exp| *exp <= MAX_SAFE_INTEGER);
    let exp = match exp {
        Some(exp) if job.ttl > 0 => exp,
        _ => return Err("now + ttl must be after now and at most 2^53 - 1".into()),
    };
    let jti = match &job.jti {
        Some(jti) if is_jti(jti) => jti.clone(),
        Some(_) => return Err("jti must be 22 to 64 base64url characters".into()),
        None => {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes for the jti: {e}"))?;
            URL_SAFE_NO_PAD.encode(bytes)
        }
    };
    let args_sha256 = match &job.arguments {
        Some(arguments) => Some(
            arguments_digest(arguments)
                .map_err(|e| format!("arguments are unbindable (pass such ids as strings): {e}"))?,
        ),
        None => None,
    };
    let claims = Claims {
        iss: &job.issuer,
        sub: &job.user,
        aud: &job.audience,
        iat: job.now,
        exp,
        jti: &jti,
        args_sha256,
        state: &state,
    };
    let mut header = Header::new(key.alg);
    header.typ = Some(TYP.to_owned());
    header.kid = Some(key.kid.clone());
    let token = encode(&header, &claims, &key.key).map_err(|e| format!("signing failed: {e}"))?;
    if token.len() > MAX_TOKEN_BYTES {
        return Err(format!(
            "the token would be longer than {MAX_TOKEN_BYTES} bytes"
        ));
    }
    Ok(token)
}

fn is_jti(jti: &str) -> bool {
    (22..=64).contains(&jti.len())
        && jti
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
