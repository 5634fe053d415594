//! The sealer: seals a state into a token (profile 4) and opens a token (profile 5), tying the
//! rooms together.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::binding::{Binding, Target};
use crate::errors::{ConfigError, InvalidRequestState, Reason};
use crate::keys::{KeyKind, KeySource, Keyring};
use crate::metrics::{self, MetricsFn};
use crate::replay::ReplayStore;
use crate::token::claims::{self, NewClaims, VerifierSettings};
use crate::token::{self, b64, jwe, jws};

/// The default lifetime of a token and the default maximum a verifier accepts: 600 s (rule AGT-18).
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
/// The default size cap of a token, in bytes.
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 8192;
/// The largest leeway a verifier may be configured with.
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);

type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Seals states into tokens and opens them. Cheap to share (`Arc`); Debug shows no key material.
pub struct StateSealer {
    keys: Arc<dyn KeySource>,
    settings: VerifierSettings,
    ttl: i64,
    max_token_bytes: usize,
    replay_store: Option<Arc<dyn ReplayStore>>,
    clock: Clock,
    metrics: Option<MetricsFn>,
}

impl fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateSealer")
            .field("issuer", &self.settings.issuer)
            .field("keys", &self.keys)
            .field("ttl", &self.ttl)
            .field("max_lifetime", &self.settings.max_lifetime)
            .field("leeway", &self.settings.leeway)
            .field("max_token_bytes", &self.max_token_bytes)
            .field("require_arguments", &self.settings.require_arguments)
            .field("replay_store", &self.replay_store.is_some())
            .field("metrics", &self.metrics.is_some())
            .finish()
    }
}

/// Builds a `StateSealer`; `issuer` is required.
pub struct StateSealerBuilder {
    keys: Arc<dyn KeySource>,
    issuer: Option<String>,
    ttl: Duration,
    max_lifetime: Duration,
    leeway: Duration,
    max_token_bytes: usize,
    require_arguments: bool,
    replay_store: Option<Arc<dyn ReplayStore>>,
    clock: Clock,
    metrics: Option<MetricsFn>,
}

impl fmt::Debug for StateSealerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateSealerBuilder")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

fn system_clock() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl StateSealerBuilder {
    /// The server's issuer identity (`iss`), e.g. `https://files.example.com`. Required, non-empty.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The lifetime of new tokens (default 600 s; at most the maximum lifetime).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The longest lifetime a token may have to open (default 600 s, profile 5 step 13).
    pub fn max_lifetime(mut self, max_lifetime: Duration) -> Self {
        self.max_lifetime = max_lifetime;
        self
    }

    /// The leeway for clock skew (default 0, at most 300 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// The size cap of a token in bytes (default 8192), applied when sealing and opening.
    pub fn max_token_bytes(mut self, max_token_bytes: usize) -> Self {
        self.max_token_bytes = max_token_bytes;
        self
    }

    /// Require `args_sha256` on tokens for tools and prompts (profile 3.4; default off).
    pub fn require_arguments(mut self, require: bool) -> Self {
        self.require_arguments = require;
        self
    }

    /// The replay store for single use (`open(..., consume: true)`).
    pub fn replay_store(mut self, store: Arc<dyn ReplayStore>) -> Self {
        self.replay_store = Some(store);
        self
    }

    /// The clock, in seconds since the epoch (default: the system clock), for tests and replays.
    pub fn clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Count seals, opens, refusals, redemptions and store outages (spec/metrics.json) with this
    /// function of the event and its attributes. Default: nothing is counted.
    pub fn metrics(mut self, f: impl Fn(&str, &[(&str, &str)]) + Send + Sync + 'static) -> Self {
        self.metrics = Some(Arc::new(f));
        self
    }

    /// The sealer, or what is wrong with the configuration.
    pub fn build(self) -> Result<StateSealer, ConfigError> {
        let issuer = self
            .issuer
            .filter(|i| !i.is_empty())
            .ok_or_else(|| ConfigError::new("an issuer is required"))?;
        if self.leeway > MAX_LEEWAY {
            return Err(ConfigError::new("the leeway must be at most 300 seconds"));
        }
        if self.ttl.as_secs() == 0 || self.ttl > self.max_lifetime {
            return Err(ConfigError::new(
                "the ttl must be at least 1 second and at most the maximum lifetime",
            ));
        }
        let secs = |d: Duration| {
            i64::try_from(d.as_secs()).map_err(|_| ConfigError::new("a duration is too long"))
        };
        Ok(StateSealer {
            settings: VerifierSettings {
                issuer,
                max_lifetime: secs(self.max_lifetime)?,
                leeway: secs(self.leeway)?,
                require_arguments: self.require_arguments,
            },
            ttl: secs(self.ttl)?,
            max_token_bytes: self.max_token_bytes,
            keys: self.keys,
            replay_store: self.replay_store,
            clock: self.clock,
            metrics: self.metrics,
        })
    }
}

/// Options of one [`StateSealer::open_with`] call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Redeem the token in the replay store (profile 5, step 20): at most one open succeeds.
    pub consume: bool,
    /// Require the argument binding (`args_sha256`) on a tool or prompt for this call; `None`
    /// keeps the builder's [`StateSealerBuilder::require_arguments`] (default `false`).
    pub require_arguments: Option<bool>,
}

impl StateSealer {
    /// A builder for a sealer over this key ring.
    pub fn builder(ring: impl Into<Arc<Keyring>>) -> StateSealerBuilder {
        let ring: Arc<Keyring> = ring.into();
        StateSealer::builder_with_source(Arc::new(ring))
    }

    /// A builder for a sealer over the keys of this source (such as a
    /// [`ReloadingKeyring`](crate::keys::ReloadingKeyring) that follows a key file): every seal and
    /// every open asks it for the keys of the moment.
    pub fn builder_with_source(source: Arc<dyn KeySource>) -> StateSealerBuilder {
        StateSealerBuilder {
            keys: source,
            issuer: None,
            ttl: DEFAULT_TTL,
            max_lifetime: DEFAULT_TTL,
            leeway: Duration::ZERO,
            max_token_bytes: DEFAULT_MAX_TOKEN_BYTES,
            require_arguments: false,
            replay_store: None,
            clock: Arc::new(system_clock),
            metrics: None,
        }
    }

    /// The key ring in use now (a reloading source may give another one later).
    pub fn keyring(&self) -> Arc<Keyring> {
        self.keys.keyring()
    }

    /// Seals `state` for `user` and `target`, bound to `arguments` for a tool or prompt (`None` is
    /// absent, `{}`). Refused (a programming error, not a token) with `malformed` for a state that
    /// is not I-JSON or nests deeper than 32 levels, `wrong_request` for unbindable arguments
    /// (profile 3.4: pass 64-bit ids as strings), `too_large` past the size cap, and
    /// `unknown_key` when the first key cannot mint (an Ed25519 public key).
    pub fn seal(
        &self,
        state: &Value,
        user: &str,
        target: &Target,
        arguments: Option<&Value>,
    ) -> Result<String, InvalidRequestState> {
        if !claims::state_is_sealable(state) || user.is_empty() {
            return Err(Reason::Malformed.into());
        }
        let binding = Binding {
            user,
            target,
            arguments,
        };
        let digest = if target.takes_arguments() {
            Some(
                binding
                    .digest()
                    .map_err(|_| InvalidRequestState::new(Reason::WrongRequest))?,
            )
        } else {
            None
        };
        let mut random = [0u8; 16];
        getrandom::fill(&mut random)
            .map_err(|_| InvalidRequestState::new(Reason::StoreUnavailable))?;
        let jti = b64::encode(&random);
        let now = (self.clock)();
        let audience = target.audience();
        let claims_json = claims::encode(&NewClaims {
            issuer: &self.settings.issuer,
            user,
            audience: &audience,
            issued_at: now,
            expires_at: now + self.ttl,
            jti: &jti,
            args_sha256: digest.as_deref(),
            state,
        });
        let ring = self.keys.keyring();
        let key = ring.first();
        let token = match key.kind() {
            KeyKind::A256Gcm { .. } => jwe::encrypt(key, claims_json.as_bytes()),
            _ => jws::sign(key, claims_json.as_bytes()),
        }
        .ok_or(InvalidRequestState::new(Reason::UnknownKey))?;
        if token.len() > self.max_token_bytes {
            return Err(Reason::TooLarge.into());
        }
        metrics::record(&self.metrics, metrics::SEAL, &[("method", target.method())]);
        Ok(token)
    }

    /// Opens a token without the replay store (steps 1 to 19): the state, or the refusal.
    pub fn open_unconsumed(
        &self,
        token: &str,
        user: &str,
        target: &Target,
        arguments: Option<&Value>,
    ) -> Result<Value, InvalidRequestState> {
        let outcome = self
            .check(token, user, target, arguments, None)
            .map(|checked| checked.state);
        self.count_open(target, &outcome, false);
        outcome
    }

    /// Opens a token (profile section 5): steps 1 to 19, then with `consume` step 20, single use,
    /// in the replay store. `consume` without a store is refused `store_unavailable` (fail closed).
    pub async fn open(
        &self,
        token: &str,
        user: &str,
        target: &Target,
        arguments: Option<&Value>,
        consume: bool,
    ) -> Result<Value, InvalidRequestState> {
        let options = OpenOptions {
            consume,
            require_arguments: None,
        };
        self.open_with(token, user, target, arguments, &options)
            .await
    }

    /// [`StateSealer::open`] with per-call options: single use, and the argument binding required
    /// or not for this call whatever the builder said (an MCP boundary requires it, as Python's
    /// `StateBoundary` does by default).
    pub async fn open_with(
        &self,
        token: &str,
        user: &str,
        target: &Target,
        arguments: Option<&Value>,
        options: &OpenOptions,
    ) -> Result<Value, InvalidRequestState> {
        let outcome = self
            .open_counted(token, user, target, arguments, options)
            .await;
        self.count_open(target, &outcome, options.consume);
        outcome
    }

    fn count_open(
        &self,
        target: &Target,
        outcome: &Result<Value, InvalidRequestState>,
        consumed: bool,
    ) {
        if self.metrics.is_none() {
            return;
        }
        let method = target.method();
        match outcome {
            Ok(_) => {
                metrics::record(
                    &self.metrics,
                    metrics::OPEN,
                    &[("method", method), ("outcome", "accepted")],
                );
                if consumed {
                    metrics::record(&self.metrics, metrics::REDEMPTION, &[("method", method)]);
                }
            }
            Err(refusal) => {
                metrics::record(
                    &self.metrics,
                    metrics::OPEN,
                    &[("method", method), ("outcome", "refused")],
                );
                let reason = refusal.reason.as_str();
                metrics::record(
                    &self.metrics,
                    metrics::REFUSAL,
                    &[("method", method), ("reason", reason)],
                );
                if refusal.reason == Reason::StoreUnavailable {
                    metrics::record(&self.metrics, metrics::STORE_OUTAGE, &[("method", method)]);
                }
            }
        }
    }

    async fn open_counted(
        &self,
        token: &str,
        user: &str,
        target: &Target,
        arguments: Option<&Value>,
        options: &OpenOptions,
    ) -> Result<Value, InvalidRequestState> {
        let checked = self.check(token, user, target, arguments, options.require_arguments)?;
        if options.consume {
            // Profile 5, step 20: single use, last, so a token that fails any other step never
            // costs a store write. The key is iss#jti, never the token text; it is kept until
            // exp + 2 × leeway by this verifier's clock.
            let store = self
                .replay_store
                .as_ref()
                .ok_or(InvalidRequestState::new(Reason::StoreUnavailable))?;
            let key = format!("{}#{}", checked.issuer, checked.jti);
            match store
                .redeem(&key, checked.expires_at + 2 * self.settings.leeway)
                .await
            {
                Ok(true) => {}
                Ok(false) => return Err(Reason::Replayed.into()),
                Err(_) => return Err(Reason::StoreUnavailable.into()),
            }
        }
        Ok(checked.state)
    }

    fn check(
        &self,
        token: &str,
        user: &str,
        target: &Target,
        arguments: Option<&Value>,
        require_arguments: Option<bool>,
    ) -> Result<claims::Checked, InvalidRequestState> {
        // Profile 5, steps 1 to 11 (5.1 for the encrypted form), then steps 12 to 19.
        let decoded = match token::open_claims(&self.keys.keyring(), token, self.max_token_bytes) {
            // A kid the keys do not hold: another replica may already sign with a key the source
            // has not loaded yet, so the source looks at once, and the token is read again once
            // if it loaded new keys.
            Err(Reason::UnknownKey) if self.keys.refresh_for_unknown_key() => {
                token::open_claims(&self.keys.keyring(), token, self.max_token_bytes)?
            }
            other => other?,
        };
        let overridden;
        let settings = match require_arguments {
            Some(require) if require != self.settings.require_arguments => {
                overridden = VerifierSettings {
                    require_arguments: require,
                    ..self.settings.clone()
                };
                &overridden
            }
            _ => &self.settings,
        };
        let binding = Binding {
            user,
            target,
            arguments,
        };
        Ok(claims::check(decoded, settings, &binding, (self.clock)())?)
    }
}
