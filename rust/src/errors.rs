//! The one refusal type, its reason codes (profile section 6), and the other errors of the crate.

use std::fmt;

/// The reason a token is refused: one code of profile section 6. Callers switch on this, never on a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// Step 1: the token is longer than the size cap.
    TooLarge,
    /// Steps 1 to 4, 11, 12: not a well-formed token of the profile.
    Malformed,
    /// Steps 5, 6: a header parameter or algorithm the profile forbids.
    UnsupportedHeader,
    /// Step 7: `typ` is not `mrtr-state+jwt`.
    WrongType,
    /// Step 8: the key is not in the ring.
    UnknownKey,
    /// Step 9: `alg` is not the algorithm of the named key.
    AlgorithmMismatch,
    /// Step 10: the signature (or the tag) does not verify.
    BadSignature,
    /// Step 13: the lifetime exceeds the verifier's maximum.
    LifetimeTooLong,
    /// Step 14: `iat` is ahead of the verifier's clock.
    IssuedInFuture,
    /// Step 15: the lifetime is over.
    Expired,
    /// Step 16: another service minted the token.
    WrongIssuer,
    /// Step 17: the token belongs to another user.
    WrongUser,
    /// Step 18: the token was minted for another tool, prompt or resource.
    WrongTool,
    /// Step 19: other arguments, unbindable arguments, or a required binding missing.
    WrongRequest,
    /// Step 20: the token was already redeemed.
    Replayed,
    /// Step 20: the replay store gave no known answer; the token was not accepted.
    StoreUnavailable,
}

impl Reason {
    /// Every reason code, in the order of profile section 6.
    pub const ALL: [Reason; 16] = [
        Reason::TooLarge,
        Reason::Malformed,
        Reason::UnsupportedHeader,
        Reason::WrongType,
        Reason::UnknownKey,
        Reason::AlgorithmMismatch,
        Reason::BadSignature,
        Reason::LifetimeTooLong,
        Reason::IssuedInFuture,
        Reason::Expired,
        Reason::WrongIssuer,
        Reason::WrongUser,
        Reason::WrongTool,
        Reason::WrongRequest,
        Reason::Replayed,
        Reason::StoreUnavailable,
    ];

    /// The profile's reason code (`"wrong_user"`, ...).
    pub fn as_str(self) -> &'static str {
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
            Reason::Replayed => "replayed",
            Reason::StoreUnavailable => "store_unavailable",
        }
    }

    /// The reason for a profile code, or `None` for a string that is not one.
    pub fn from_code(code: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == code)
    }

    /// A fixed sentence safe to show the client (profile section 6): no claim value, no key.
    pub fn message(self) -> &'static str {
        match self {
            Reason::TooLarge => "The request state is larger than this server accepts.",
            Reason::Malformed => "The request state is not a well-formed token of this profile.",
            Reason::UnsupportedHeader => {
                "The request state uses a header parameter or algorithm this profile forbids."
            }
            Reason::WrongType => "The request state is not a token of type mrtr-state+jwt.",
            Reason::UnknownKey => {
                "The request state was signed with a key this server does not hold."
            }
            Reason::AlgorithmMismatch => {
                "The request state's algorithm is not the algorithm of its key."
            }
            Reason::BadSignature => "The request state's signature does not verify.",
            Reason::LifetimeTooLong => {
                "The request state was issued with a lifetime longer than this server allows."
            }
            Reason::IssuedInFuture => "The request state claims to be issued in the future.",
            Reason::Expired => "The request state has expired; start the request again.",
            Reason::WrongIssuer => "The request state was issued by another server.",
            Reason::WrongUser => "The request state belongs to another user.",
            Reason::WrongTool => {
                "The request state was issued for another tool, prompt or resource."
            }
            Reason::WrongRequest => {
                "The request state was issued for a request with other arguments."
            }
            Reason::Replayed => "The request state has already been used.",
            Reason::StoreUnavailable => {
                "The request state could not be checked for reuse; try again later."
            }
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The one refusal: a token refused (or a state that cannot be sealed), with its reason code.
/// Its Display names only the code and a fixed sentence, never the token, a claim or a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid request state ({reason}): {}", reason.message())]
pub struct InvalidRequestState {
    /// The profile's reason code.
    pub reason: Reason,
}

impl InvalidRequestState {
    /// A refusal with this reason.
    pub fn new(reason: Reason) -> Self {
        InvalidRequestState { reason }
    }
}

impl From<Reason> for InvalidRequestState {
    fn from(reason: Reason) -> Self {
        InvalidRequestState { reason }
    }
}

/// A key or key ring that breaks a rule of profile section 7, refused when it is loaded.
/// The message names the rule and never quotes key material.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("key ring refused: {message}")]
pub struct KeyringError {
    message: String,
}

impl KeyringError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        KeyringError {
            message: message.into(),
        }
    }

    /// The rule the key broke (without any key material).
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A replay store that could not give a known answer (unreachable, timed out, an error reply, full).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("replay store unavailable: {message}")]
pub struct ReplayStoreError {
    message: String,
}

impl ReplayStoreError {
    /// An error with a message naming what failed (never a token or key).
    pub fn new(message: impl Into<String>) -> Self {
        ReplayStoreError {
            message: message.into(),
        }
    }
}

/// A sealer configuration that cannot be used (no issuer, a leeway beyond 300 s, ...).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("sealer configuration refused: {message}")]
pub struct ConfigError {
    message: String,
}

impl ConfigError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ConfigError {
            message: message.into(),
        }
    }
}
