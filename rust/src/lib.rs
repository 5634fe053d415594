//! # mrtr-state
//!
//! Signed (JWS, HS256 or EdDSA) or encrypted (JWE, `dir` + `A256GCM`) MCP `requestState` tokens
//! of the mrtr-state profile (`spec/profile.md`): bound to the user, the target and the request's
//! arguments, short-lived, validated by the profile's strict procedure with its reason codes, and
//! optionally single use. A token sealed here opens, or is refused for the same reason, in the
//! Python, TypeScript, Go and Java implementations.
//!
//! ```
//! use mrtr_state::{Keyring, StateSealer, Target, Value};
//! let sealer = StateSealer::builder(Keyring::dev_hs256()).issuer("https://mcp.example.com").build().unwrap();
//! let target = Target::Tool("deploy".into());
//! let args: Value = serde_json::json!({"env": "staging"});
//! let token = sealer.seal(&serde_json::json!({"step": 1}), "alice", &target, Some(&args)).unwrap();
//! let state = sealer.open_unconsumed(&token, "alice", &target, Some(&args)).unwrap();
//! assert_eq!(state["step"], 1);
//! let refused = sealer.open_unconsumed(&token, "mallory", &target, Some(&args)).unwrap_err();
//! assert_eq!(refused.reason.as_str(), "wrong_user");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod binding;
pub mod conformance;
pub mod errors;
pub mod keys;
pub mod metrics;
pub mod replay;
pub mod sealer;
pub mod token;

pub use binding::Target;
pub use errors::{ConfigError, InvalidRequestState, KeyringError, Reason, ReplayStoreError};
pub use keys::{
    DEFAULT_KEYS_VARIABLE, Key, KeyFileOptions, KeySource, Keyring, ReloadingKeyring,
    ReloadingOptions,
};
#[cfg(feature = "remote-jwks")]
pub use keys::{RemoteJwks, RemoteJwksOptions};
pub use replay::{MemoryReplayStore, RedeemFuture, ReplayStore};
pub use sealer::{OpenOptions, StateSealer, StateSealerBuilder};
pub use serde_json::Value;

/// The quick start of README.md, compiled and run as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
