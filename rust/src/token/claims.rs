//! The claim set (profile 3.2): written by `encode` (profile 4), checked by `check` (section 5,
//! steps 12 to 19).

use serde_json::{Map, Value};
use subtle::ConstantTimeEq;

use super::b64;
use super::json::MAX_SAFE_INTEGER;
use crate::binding::Binding;
use crate::errors::Reason;

/// The claims of the profile; the set is closed.
const CLAIMS: [&str; 8] = [
    "iss",
    "sub",
    "aud",
    "iat",
    "exp",
    "jti",
    "args_sha256",
    "state",
];

/// What a verifier is configured with (profile section 5).
#[derive(Clone, Debug)]
pub struct VerifierSettings {
    /// The verifier's own issuer identity.
    pub issuer: String,
    /// The longest lifetime accepted, in seconds (default 600).
    pub max_lifetime: i64,
    /// The leeway for clock skew, in seconds (default 0, at most 300).
    pub leeway: i64,
    /// Whether a token for a tool or prompt must carry `args_sha256`.
    pub require_arguments: bool,
}

/// The checked claims a verifier acts on.
#[derive(Debug)]
pub struct Checked {
    /// `iss`, for the replay store key.
    pub issuer: String,
    /// `jti`.
    pub jti: String,
    /// `exp`.
    pub expires_at: i64,
    /// The state.
    pub state: Value,
}

fn is_jti(s: &str) -> bool {
    (22..=64).contains(&s.len()) && b64::is_alphabet(s)
}

fn time(claims: &Map<String, Value>, name: &str) -> Option<i64> {
    // An integer literal (the reader keeps fractions and exponents as doubles) within 0 … 2^53 − 1.
    match claims.get(name)? {
        Value::Number(n) if !n.is_f64() => {
            n.as_i64().filter(|t| (0..=MAX_SAFE_INTEGER).contains(t))
        }
        _ => None,
    }
}

fn non_empty<'a>(claims: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    claims
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Profile 5, steps 12 to 19: the claims against the verifier's settings, its clock and the request.
pub fn check(
    mut claims: Map<String, Value>,
    settings: &VerifierSettings,
    binding: &Binding<'_>,
    now: i64,
) -> Result<Checked, Reason> {
    // Profile 5, step 12: The claim set is closed, complete and well typed.
    if claims.keys().any(|k| !CLAIMS.contains(&k.as_str())) {
        return Err(Reason::Malformed);
    }
    let (Some(iss), Some(sub), Some(aud)) = (
        non_empty(&claims, "iss"),
        non_empty(&claims, "sub"),
        non_empty(&claims, "aud"),
    ) else {
        return Err(Reason::Malformed);
    };
    let (Some(iat), Some(exp)) = (time(&claims, "iat"), time(&claims, "exp")) else {
        return Err(Reason::Malformed);
    };
    if exp <= iat || !claims.contains_key("state") {
        return Err(Reason::Malformed);
    }
    let jti = match claims.get("jti") {
        Some(Value::String(j)) if is_jti(j) => j.clone(),
        _ => return Err(Reason::Malformed),
    };
    let args_sha256 = match claims.get("args_sha256") {
        None => None,
        Some(Value::String(d)) if d.len() == 43 && b64::is_alphabet(d) => Some(d.as_str()),
        Some(_) => return Err(Reason::Malformed),
    };
    // Profile 5, step 13: The lifetime is within the verifier's maximum.
    if exp - iat > settings.max_lifetime {
        return Err(Reason::LifetimeTooLong);
    }
    // Profile 5, step 14: Not from the future.
    if iat > now + settings.leeway {
        return Err(Reason::IssuedInFuture);
    }
    // Profile 5, step 15: Not expired: refused from the second exp itself (leeway 0).
    if now >= exp + settings.leeway {
        return Err(Reason::Expired);
    }
    // Profile 5, step 16: Issuer, compared exactly as decoded strings.
    if iss != settings.issuer {
        return Err(Reason::WrongIssuer);
    }
    // Profile 5, step 17: User.
    if sub != binding.user {
        return Err(Reason::WrongUser);
    }
    // Profile 5, step 18: Target.
    if aud != binding.target.audience() {
        return Err(Reason::WrongTool);
    }
    // Profile 5, step 19: The request binding. A resource read has no arguments, so the
    // requirement never applies to it; a digest that is present is always checked.
    match args_sha256 {
        None if settings.require_arguments && binding.target.takes_arguments() => {
            return Err(Reason::WrongRequest);
        }
        None => {}
        Some(claimed) => {
            let digest = binding.digest().map_err(|_| Reason::WrongRequest)?;
            if !bool::from(digest.as_bytes().ct_eq(claimed.as_bytes())) {
                return Err(Reason::WrongRequest);
            }
        }
    }
    let issuer = iss.to_owned();
    Ok(Checked {
        issuer,
        jti,
        expires_at: exp,
        state: claims.remove("state").unwrap_or(Value::Null),
    })
}

/// The claims a minter writes (profile 4, point 3), in the reference order.
pub struct NewClaims<'a> {
    /// `iss`.
    pub issuer: &'a str,
    /// `sub`.
    pub user: &'a str,
    /// `aud`.
    pub audience: &'a str,
    /// `iat`.
    pub issued_at: i64,
    /// `exp`.
    pub expires_at: i64,
    /// `jti`.
    pub jti: &'a str,
    /// `args_sha256`, when bound.
    pub args_sha256: Option<&'a str>,
    /// The state, already checked against profile 3.3.
    pub state: &'a Value,
}

/// Writes the claim set as compact UTF-8 JSON, no duplicate member, in the reference order.
pub fn encode(claims: &NewClaims<'_>) -> String {
    let text = |s: &str| Value::String(s.to_owned()).to_string();
    let mut out = format!(
        "{{\"iss\":{},\"sub\":{},\"aud\":{},\"iat\":{},\"exp\":{},\"jti\":{}",
        text(claims.issuer),
        text(claims.user),
        text(claims.audience),
        claims.issued_at,
        claims.expires_at,
        text(claims.jti)
    );
    if let Some(digest) = claims.args_sha256 {
        out.push_str(",\"args_sha256\":");
        out.push_str(&text(digest));
    }
    out.push_str(",\"state\":");
    out.push_str(&claims.state.to_string());
    out.push('}');
    out
}

/// Profile 3.3 (minting, profile 4 point 1): the state is I-JSON and nests at most 32 levels.
pub fn state_is_sealable(state: &Value) -> bool {
    fn walk(value: &Value, depth: usize) -> bool {
        match value {
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.unsigned_abs() <= MAX_SAFE_INTEGER as u64,
                (None, Some(_), _) => false,
                (None, None, Some(f)) => f.is_finite(),
                _ => false,
            },
            Value::Array(items) => depth < 32 && items.iter().all(|v| walk(v, depth + 1)),
            Value::Object(map) => depth < 32 && map.values().all(|v| walk(v, depth + 1)),
            _ => true,
        }
    }
    walk(state, 0)
}
