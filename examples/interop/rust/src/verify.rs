//! The validation procedure of the profile (spec/profile.md, section 5), steps 1 to 19, in order.
//!
//! jsonwebtoken does: the algorithm allowlist (pinned to the key's one algorithm), the key family
//! check, the signature (step 10), and the `sub` and `aud` comparisons (steps 17, 18). This module
//! adds what the profile needs on top, each at its place in the order: the size cap (in UTF-8
//! bytes), strict segments and base64url, strict header JSON, the header allowlist, `alg` and `typ`
//! and `kid` (the library ignores unknown header parameters and never looks at `typ`), strict
//! claims JSON (duplicates, depth, integer literals beyond 2^53 - 1, `-0` as the integer 0),
//! the closed claim set and its types (the library accepts `aud` arrays, float or rounded `exp`),
//! lifetime, `iat`, `exp` with the job's clock (the library reads the system clock and accepts a
//! token at `now == exp`), `iss` (the library checks it after `sub`), and the argument digest.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{decode, Algorithm, Validation};
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use crate::digest::arguments_digest;
use crate::keys::Ring;
use crate::strict_json::{self, MAX_SAFE_INTEGER};

/// The `typ` header value of the profile.
pub const TYP: &str = "mrtr-state+jwt";

const HEADER_PARAMETERS: [&str; 3] = ["alg", "typ", "kid"];
const REQUIRED_CLAIMS: [&str; 7] = ["iss", "sub", "aud", "iat", "exp", "jti", "state"];
const OPTIONAL_CLAIMS: [&str; 1] = ["args_sha256"];

/// Why a token is refused: the profile's reason codes (section 6). Step 20 (single use) is not
/// part of this example, so `replayed` and `store_unavailable` never occur.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    TooLarge,
    Malformed,
    UnsupportedHeader,
    WrongType,
    UnknownKey,
    AlgorithmMismatch,
    BadSignature,
    LifetimeTooLong,
    IssuedInFuture,
    Expired,
    WrongIssuer,
    WrongUser,
    WrongTool,
    WrongRequest,
}

impl Reason {
    /// The stable reason code.
    pub fn code(self) -> &'static str {
        match self {
            Reason::TooLarge => "too_large",
            Reason::Malformed => "malformed",
            Reason::UnsupportedHeader => "unsupported_header",
            Reason::WrongType => "wrong_type",
            Reason::UnknownKey => "unknown_key",
            Reason::AlgorithmMismatch => "algorithm_mismatch",
            Reason::BadSignature => "bad_signature",
            Reason::LifetimeTooLong => "lifetime_too_long",
            Reason::IssuedInFuture => "issued_in_future",
            Reason::Expired => "expired",
            Reason::WrongIssuer => "wrong_issuer",
            Reason::WrongUser => "wrong_user",
            Reason::WrongTool => "wrong_tool",
            Reason::WrongRequest => "wrong_request",
        }
    }
}

/// What the verifier knows about the request being served, and its settings.
pub struct Request {
    pub issuer: String,
    pub user: String,
    /// The target as `aud` writes it: `tools/call:<tool>`, `prompts/get:<prompt>`, `resources/read:<uri>`.
    pub audience: String,
    /// The request's arguments object (`{}` when the request has none).
    pub arguments: Value,
    /// The verifier's clock, whole seconds.
    pub now: i64,
    pub max_lifetime: u64,
    pub leeway: u64,
    pub max_token_bytes: usize,
    /// Refuse a token for a tool or prompt without `args_sha256` (step 19).
    pub require_arguments: bool,
}

/// Validates `token` for `request`; returns the `state` claim or the reason for the refusal.
pub fn verify(ring: &Ring, token: &Value, request: &Request) -> Result<Value, Reason> {
    // 1. Size, in bytes of the UTF-8 encoding (a Rust string's len()), before any decoding. A
    //    token that is not a string is malformed.
    let token = token.as_str().ok_or(Reason::Malformed)?;
    if token.len() > request.max_token_bytes {
        return Err(Reason::TooLarge);
    }

    // 2. Exactly three non-empty segments of the base64url alphabet (no '=', no white space).
    let segments: Vec<&str> = token.split('.').collect();
    let is_base64url = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    if segments.len() != 3
        || segments
            .iter()
            .any(|s| s.is_empty() || !s.bytes().all(is_base64url))
    {
        return Err(Reason::Malformed);
    }

    // 3. Canonical base64url: base64's URL_SAFE_NO_PAD refuses a length of 1 mod 4 and non-zero
    //    unused bits (jsonwebtoken decodes with the same engine, but only after reading the header).
    let mut decoded = Vec::with_capacity(3);
    for segment in &segments {
        decoded.push(
            URL_SAFE_NO_PAD
                .decode(segment)
                .map_err(|_| Reason::Malformed)?,
        );
    }

    // 4. The header is strict JSON (no duplicate names, no BOM, no integer literal beyond
    //    +-(2^53 - 1), ...), and an object.
    let header =
        strict_json::parse(&decoded[0], strict_json::MAX_DEPTH).map_err(|_| Reason::Malformed)?;
    let header = header.as_object().ok_or(Reason::Malformed)?;

    // 5. Header allowlist: jsonwebtoken would ignore jku, x5u, nonce, ... (it refuses only a
    //    `crit` that is not exactly ["b64"]).
    if !header
        .keys()
        .all(|name| HEADER_PARAMETERS.contains(&name.as_str()))
    {
        return Err(Reason::UnsupportedHeader);
    }

    // 6. Algorithm: HS256 or EdDSA, and nothing else (not none, not Ed25519, not HS512).
    let alg = match header.get("alg").and_then(Value::as_str) {
        Some("HS256") => Algorithm::HS256,
        Some("EdDSA") => Algorithm::EdDSA,
        _ => return Err(Reason::UnsupportedHeader),
    };

    // 7. Type, exactly, as the decoded JSON string (`mrtr-state\u002bjwt` is the same string):
    // jsonwebtoken does not check typ at all.
    if header.get("typ").and_then(Value::as_str) != Some(TYP) {
        return Err(Reason::WrongType);
    }

    // 8. Key: kid is a string naming a key of the ring.
    let key = header
        .get("kid")
        .and_then(Value::as_str)
        .and_then(|kid| ring.get(kid))
        .ok_or(Reason::UnknownKey)?;

    // 9. The algorithm is the key's. (The library enforces it again below: the Validation allows
    //    only the key's algorithm, and the key's family must match; but it cannot tell this
    //    reason apart from others.)
    if key.alg != alg {
        return Err(Reason::AlgorithmMismatch);
    }

    // 10. Signature, by jsonwebtoken. The same call compares sub and aud (steps 17 and 18, and
    //     iss too); those verdicts are held back until steps 11 to 16 have run, since they come
    //     first in the profile. exp is checked below with the job's clock instead.
    let mut validation = Validation::new(key.alg); // the only algorithm accepted
    validation.leeway = 0; // the library's default is 60 s; unused here, set for clarity
    validation.validate_exp = false; // system clock and `exp < now - leeway`: steps 13 to 15 below
    validation.validate_nbf = false;
    validation.set_required_spec_claims(&["iss", "sub", "aud"]);
    validation.set_issuer(&[&request.issuer]);
    validation.sub = Some(request.user.clone());
    validation.set_audience(&[&request.audience]);
    let library_verdict = decode::<IgnoredAny>(token, &key.key, &validation).map(|_| ());
    if let Err(error) = &library_verdict {
        if !is_raised_after_the_signature(error.kind()) {
            return Err(Reason::BadSignature);
        }
    }

    // 11. The claims are strict JSON, and an object: the same rules as step 4 at any depth (an
    //     integer literal in the state too), and the state nests 32 levels at most.
    let claims =
        strict_json::parse(&decoded[1], strict_json::MAX_DEPTH).map_err(|_| Reason::Malformed)?;
    let claims = claims.as_object().ok_or(Reason::Malformed)?;

    // 12. The closed claim set, with its types.
    let (iat, exp) = check_claims(claims).ok_or(Reason::Malformed)?;

    // 13 to 15. Lifetime and time, in integers, with the job's clock (now) and leeway.
    let (iat, exp, now) = (i128::from(iat), i128::from(exp), i128::from(request.now));
    let (leeway, max_lifetime) = (i128::from(request.leeway), i128::from(request.max_lifetime));
    if exp - iat > max_lifetime {
        return Err(Reason::LifetimeTooLong);
    }
    if iat > now + leeway {
        return Err(Reason::IssuedInFuture);
    }
    if now >= exp + leeway {
        return Err(Reason::Expired); // refused from the second exp itself
    }

    // 16. Issuer, exactly. Done here because jsonwebtoken compares sub before iss.
    if claims["iss"].as_str() != Some(request.issuer.as_str()) {
        return Err(Reason::WrongIssuer);
    }

    // 17, 18. User and target: the library's verdict from step 10.
    if let Err(error) = library_verdict {
        return Err(match error.kind() {
            ErrorKind::InvalidSubject => Reason::WrongUser,
            ErrorKind::InvalidAudience => Reason::WrongTool,
            ErrorKind::InvalidIssuer => Reason::WrongIssuer,
            // Parse errors and missing or ill-typed claims: steps 11 and 12 refuse these first.
            _ => Reason::Malformed,
        });
    }

    // 19. Request binding: the digest of the request's arguments (`{}` when it has none). A
    // verifier may require the binding for tools and prompts (a resource read has no arguments).
    let bound = claims.get("args_sha256").and_then(Value::as_str);
    if bound.is_none()
        && request.require_arguments
        && !request.audience.starts_with("resources/read:")
    {
        return Err(Reason::WrongRequest);
    }
    if let Some(digest) = bound {
        // Unbindable arguments match no digest.
        if arguments_digest(&request.arguments).ok().as_deref() != Some(digest) {
            return Err(Reason::WrongRequest);
        }
    }

    Ok(claims["state"].clone())
}

/// The errors `jsonwebtoken::decode` raises only once the signature has verified: reading and
/// validating the claims. Every other error means the signature was not verified. (Reading the
/// header can raise `Json` too, but not for a header that passed steps 4 to 9; and an error held
/// back still refuses the token, only its reason could differ.)
fn is_raised_after_the_signature(kind: &ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Json(_)
            | ErrorKind::Utf8(_)
            | ErrorKind::MissingRequiredClaim(_)
            | ErrorKind::InvalidClaimFormat(_)
            | ErrorKind::InvalidIssuer
            | ErrorKind::InvalidSubject
            | ErrorKind::InvalidAudience
    )
}

/// Step 12: every required claim and no other; iss, sub, aud non-empty strings (so an `aud` array
/// is refused); iat and exp integers written as such in 0 ..= 2^53 - 1, exp after iat; jti of 22
/// to 64 base64url characters; args_sha256, when present, 43 base64url characters.
/// Returns (iat, exp).
fn check_claims(claims: &Map<String, Value>) -> Option<(u64, u64)> {
    let known = |name: &String| {
        REQUIRED_CLAIMS.contains(&name.as_str()) || OPTIONAL_CLAIMS.contains(&name.as_str())
    };
    if !claims.keys().all(known)
        || !REQUIRED_CLAIMS
            .iter()
            .all(|name| claims.contains_key(*name))
    {
        return None;
    }
    for name in ["iss", "sub", "aud"] {
        claims[name].as_str().filter(|s| !s.is_empty())?;
    }
    // The strict reader keeps `1700000000` (and `-0`, the integer 0) as integers but `1700000000.0`
    // and `1.7e9` as floats, so as_u64() is exactly "an integer literal"; a negative one is not a
    // u64 either.
    let numeric_date = |name: &str| claims[name].as_u64().filter(|n| *n <= MAX_SAFE_INTEGER);
    let (iat, exp) = (numeric_date("iat")?, numeric_date("exp")?);
    if exp <= iat {
        return None;
    }
    let base64url = |value: &Value, lengths: std::ops::RangeInclusive<usize>| {
        value.as_str().is_some_and(|s| {
            lengths.contains(&s.len())
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
    };
    if !base64url(&claims["jti"], 22..=64) {
        return None;
    }
    if let Some(digest) = claims.get("args_sha256") {
        if !base64url(digest, 43..=43) {
            return None;
        }
    }
    Some((iat, exp))
}
