//! Public keys read from a published JWKS: the key source of a verify-only replica (Python's
//! `RemoteJWKS`, npm's `RemoteJwks`, Go's `keys.RemoteJWKS`, Java's `RemoteJwks`), behind the
//! `remote-jwks` feature.
//!
//! A replica that only verifies EdDSA tokens (profile 7.5) reads the minting replicas' public JWKS
//! from a URL instead of having it copied and redeployed at every rotation:
//!
//! - [`RemoteJwks::load`] fetches the JWKS once and fails if it cannot (a replica should not start
//!   without keys); then [`KeySource::keyring`] starts a fetch in the background, without waiting
//!   for it, when `refresh_interval` (default 300 s) has passed since the last one, and a token
//!   naming a `kid` the keys do not hold makes it fetch at once, at most once per `cooldown`
//!   (default 30 s), so tokens with random `kid`s cannot make it fetch; callers that arrive during a
//!   fetch wait for that fetch instead of starting another;
//! - every fetch is bounded: `https://`, or `http://` on a loopback address only; no user name or
//!   password in the URL; no redirect followed; only a `200` answer read; at most `max_bytes`
//!   (default 64 KiB), counted while the body streams in (a larger `content-length` is refused
//!   before the body is read); and one deadline, `timeout` (default 5 s), over the whole fetch:
//!   resolving the host name, connecting, the TLS handshake, the headers and the body, so a server
//!   that sends slowly is cut off at the deadline, and a caller never waits longer;
//! - the JWKS goes through [`Keyring::from_jwks_json`], so every rule of a local key file holds, and
//!   then must hold Ed25519 *public* keys only: a JWKS holding a private key (`d`), a secret (`oct`)
//!   or no key is refused whole;
//! - a failed fetch keeps the last good keys, warns (through the `log` facade, target
//!   `mrtr_state::keys`: the URL, the reason and how old the kept keys are, never key material),
//!   sets [`RemoteJwks::last_error`], and is retried after the cooldown.
//!
//! The HTTP is [ureq](https://docs.rs/ureq)'s (blocking, on `std::net`), the TLS rustls's (the
//! `ring` provider, the Mozilla root certificates of `webpki-roots`, or the root certificates given
//! in [`RemoteJwksOptions::root_certificates`] for a private CA). Every fetch runs in a short-lived
//! thread of its own: fetches are rare (one per interval or per cooldown), and `keyring`, which
//! every seal and open calls, never waits for one.

use std::fmt;
use std::io::Read;
use std::net::IpAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use super::key::KeyKind;
use super::ring::Keyring;
use super::source::KeySource;
use crate::errors::KeyringError;
use crate::metrics::{KEY_REFRESH, MetricsFn, record};

/// The time between two scheduled fetches (as in Python, npm, Go and Java).
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(300);
/// The fewest time between two fetches caused by unknown `kid`s, and before a retry after a failed
/// fetch (as in the other languages).
pub const DEFAULT_REMOTE_COOLDOWN: Duration = Duration::from_secs(30);
/// The longest a whole fetch may take (as in the other languages).
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest JWKS accepted, in bytes (as in the other languages).
pub const DEFAULT_MAX_JWKS_BYTES: u64 = 64 * 1024;
/// The smallest `max_bytes` accepted (as in Python).
const MIN_MAX_BYTES: u64 = 1024;

/// The media types asked for.
const ACCEPT: &str = "application/jwk-set+json, application/json;q=0.9";

/// A monotonic clock for the refresh schedule and the cooldown (tests move it forward); the
/// deadline of a fetch is always measured on the real clock.
pub type RemoteClock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// How a [`RemoteJwks`] fetches its JWKS.
#[derive(Clone)]
pub struct RemoteJwksOptions {
    /// The time between two scheduled fetches (default 300 s): a fetch is started in the background
    /// by the first `keyring` call (every seal and open makes one) after it is due.
    pub refresh_interval: Duration,
    /// The fewest time between two fetches caused by unknown `kid`s, and before a retry after a
    /// failed fetch (default 30 s; at most `refresh_interval`).
    pub cooldown: Duration,
    /// The longest a whole fetch may take: resolving the host name, connecting, the TLS handshake,
    /// the headers and the body (default 5 s).
    pub timeout: Duration,
    /// The largest JWKS accepted, in bytes (default 64 KiB, at least 1024).
    pub max_bytes: u64,
    /// The root certificates (DER) trusted for `https://`, e.g. a private CA's; empty (the default)
    /// trusts the Mozilla roots compiled in (`webpki-roots`). The certificate chain and the host
    /// name are always checked. [`RemoteJwksOptions::root_certificates_pem`] reads them from PEM
    /// (and refuses a text holding none); a DER certificate put here that rustls cannot parse is
    /// skipped, so with no usable one every `https://` fetch fails its handshake.
    pub root_certificates: Vec<Vec<u8>>,
    /// The clock of the schedule and the cooldown (default `Instant::now`).
    pub clock: Option<RemoteClock>,
    /// Counts every fetch as a `key_refresh` event (spec/metrics.json): `f(event, attributes)` with
    /// `source` `remote_jwks` and `outcome` `updated`, `unchanged` or `failed`, as
    /// [`StateSealerBuilder::metrics`](crate::StateSealerBuilder::metrics) counts seals and opens.
    /// A function that panics loses the count, nothing else.
    pub metrics: Option<MetricsFn>,
}

impl Default for RemoteJwksOptions {
    fn default() -> Self {
        RemoteJwksOptions {
            refresh_interval: DEFAULT_REFRESH_INTERVAL,
            cooldown: DEFAULT_REMOTE_COOLDOWN,
            timeout: DEFAULT_FETCH_TIMEOUT,
            max_bytes: DEFAULT_MAX_JWKS_BYTES,
            root_certificates: Vec::new(),
            clock: None,
            metrics: None,
        }
    }
}

impl fmt::Debug for RemoteJwksOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteJwksOptions")
            .field("refresh_interval", &self.refresh_interval)
            .field("cooldown", &self.cooldown)
            .field("timeout", &self.timeout)
            .field("max_bytes", &self.max_bytes)
            .field("root_certificates", &self.root_certificates.len())
            .field("clock", &self.clock.is_some())
            .field("metrics", &self.metrics.is_some())
            .finish()
    }
}

impl RemoteJwksOptions {
    /// Trusts, for `https://`, the certificates of this PEM text (one or more `CERTIFICATE`
    /// blocks, e.g. a private CA's bundle) in place of the Mozilla roots. An error when it holds no
    /// certificate or a block cannot be read (the message never quotes the text).
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, KeyringError> {
        let mut found = 0;
        for item in ureq::tls::parse_pem(pem) {
            match item {
                Ok(ureq::tls::PemItem::Certificate(cert)) => {
                    self.root_certificates.push(cert.der().to_vec());
                    found += 1;
                }
                Ok(_) => {}
                Err(_) => {
                    return Err(KeyringError::new("the root certificates are not valid PEM"));
                }
            }
        }
        if found == 0 {
            return Err(KeyringError::new(
                "the root certificates hold no CERTIFICATE block",
            ));
        }
        Ok(self)
    }

    /// Sets the `key_refresh` counter function (see [`RemoteJwksOptions::metrics`]).
    pub fn with_metrics(
        mut self,
        f: impl Fn(&str, &[(&str, &str)]) + Send + Sync + 'static,
    ) -> Self {
        self.metrics = Some(Arc::new(f));
        self
    }

    /// Sets the clock of the schedule and the cooldown (see [`RemoteJwksOptions::clock`]).
    pub fn with_clock(mut self, clock: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }
}

/// Returns `Ok` if a JWKS may be fetched from `url`: `https://` anywhere, `http://` only on a
/// loopback address (`127.0.0.0/8`, `[::1]`, `localhost`), since public keys fetched in the clear
/// could be replaced on the way; no user name or password (it would reach logs); no backslash,
/// space or control character.
pub fn check_jwks_url(url: &str) -> Result<(), KeyringError> {
    let refuse = |why: &str| Err(KeyringError::new(why.to_owned()));
    if url
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    {
        return refuse(
            "the JWKS URL is not a valid URL (a space, a control character or a backslash)",
        );
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return refuse("the JWKS URL must start with https:// (or http:// on a loopback address)");
    };
    let https = scheme.eq_ignore_ascii_case("https");
    if !https && !scheme.eq_ignore_ascii_case("http") {
        return refuse("the JWKS URL must start with https:// (or http:// on a loopback address)");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return refuse("the JWKS URL must not hold a user name or password");
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return refuse("the JWKS URL is not a valid URL (an unclosed '[')");
        };
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return refuse("the JWKS URL is not a valid URL (after ']')"),
            },
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return refuse("the JWKS URL has no host");
    }
    if let Some(port) = port
        && !port.is_empty()
        && (!port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u16>().is_err())
    {
        return refuse("the JWKS URL is not a valid URL (its port)");
    }
    if !https && !is_loopback(host) {
        return refuse(
            "the JWKS URL must use https:// unless it is on a loopback address (127.0.0.1, [::1], localhost): public keys fetched in the clear could be replaced on the way",
        );
    }
    Ok(())
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The outcome of one fetch, as its waiters see it: `Ok(changed)` or the reason it failed.
type Outcome = Result<bool, String>;

/// One fetch under way; callers that arrive during it wait for it.
struct Flight {
    outcome: Mutex<Option<Outcome>>,
    done: Condvar,
    /// When the fetch gives up (real time).
    deadline: Instant,
}

impl Flight {
    fn finish(&self, outcome: Outcome) {
        *lock(&self.outcome) = Some(outcome);
        self.done.notify_all();
    }

    /// The outcome, or `None` if the deadline came first.
    fn wait(&self) -> Option<Outcome> {
        let mut outcome = lock(&self.outcome);
        loop {
            if let Some(done) = outcome.as_ref() {
                return Some(done.clone());
            }
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            outcome = self
                .done
                .wait_timeout(outcome, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

struct Schedule {
    /// When the last good fetch ended (the source's clock).
    fetched_at: Instant,
    /// When the last fetch started (the source's clock).
    last_attempt: Instant,
    /// When the next scheduled fetch is due (the source's clock).
    next_due: Instant,
    inflight: Option<Arc<Flight>>,
    last_error: Option<String>,
}

/// Why a fetch is asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// `keyring` found the refresh interval over: never waited for.
    Scheduled,
    /// A token named a `kid` the keys do not hold: at most once per cooldown.
    UnknownKey,
    /// `refresh`: whatever the schedule.
    Forced,
}

struct Shared {
    url: String,
    refresh_interval: Duration,
    cooldown: Duration,
    timeout: Duration,
    max_bytes: u64,
    agent: ureq::Agent,
    clock: RemoteClock,
    metrics: Option<MetricsFn>,
    ring: RwLock<Arc<Keyring>>,
    schedule: Mutex<Schedule>,
}

/// A key source that reads a published JWKS of Ed25519 public keys from a URL; a [`KeySource`] for
/// [`StateSealer::builder_with_source`](crate::StateSealer::builder_with_source) (it can only
/// verify). Safe to share between threads. `Debug` shows the URL and the key ids, never key
/// material.
pub struct RemoteJwks {
    shared: Arc<Shared>,
}

impl fmt::Debug for RemoteJwks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteJwks")
            .field("url", &self.shared.url)
            .field("keys", &self.shared.current())
            .finish_non_exhaustive()
    }
}

impl RemoteJwks {
    /// Fetches the JWKS at `url` once, with the default options, and follows it; an error when the
    /// URL is not allowed or the fetch fails or its JWKS is refused (a replica should not start
    /// without keys; the message says why).
    pub fn load(url: &str) -> Result<RemoteJwks, KeyringError> {
        RemoteJwks::load_with(url, RemoteJwksOptions::default())
    }

    /// As [`load`](Self::load), with these options (an error for a zero duration or a `max_bytes`
    /// under 1024).
    pub fn load_with(url: &str, options: RemoteJwksOptions) -> Result<RemoteJwks, KeyringError> {
        check_jwks_url(url)?;
        for (name, value) in [
            ("refresh_interval", options.refresh_interval),
            ("cooldown", options.cooldown),
            ("timeout", options.timeout),
        ] {
            if value.is_zero() {
                return Err(KeyringError::new(format!(
                    "{name} must be a positive duration"
                )));
            }
        }
        if options.max_bytes < MIN_MAX_BYTES {
            return Err(KeyringError::new(format!(
                "max_bytes must be at least {MIN_MAX_BYTES}, got {}",
                options.max_bytes
            )));
        }
        let agent = agent(url, &options);
        let clock = options
            .clock
            .clone()
            .unwrap_or_else(|| Arc::new(Instant::now));
        let started = clock();
        let deadline = Instant::now() + options.timeout;
        let (timeout, max_bytes) = (options.timeout, options.max_bytes);
        let fetched = run_until(deadline, timeout, {
            let (agent, url) = (agent.clone(), url.to_owned());
            move || fetch(&agent, &url, deadline, timeout, max_bytes)
        });
        let ring = match fetched {
            Ok(ring) => ring,
            Err(reason) => {
                let message = format!("could not fetch the JWKS from {url}: {reason}");
                log::warn!(target: "mrtr_state::keys", "{message}");
                count(&options.metrics, "failed");
                return Err(KeyringError::new(message));
            }
        };
        let fetched_at = clock();
        log::info!(
            target: "mrtr_state::keys",
            "the JWKS from {url} loaded: {} key(s), kid {}",
            ring.keys().len(),
            kids(&ring)
        );
        count(&options.metrics, "updated");
        let refresh_interval = options.refresh_interval;
        Ok(RemoteJwks {
            shared: Arc::new(Shared {
                url: url.to_owned(),
                refresh_interval,
                cooldown: options.cooldown.min(refresh_interval),
                timeout,
                max_bytes,
                agent,
                clock,
                metrics: options.metrics,
                ring: RwLock::new(Arc::new(ring)),
                schedule: Mutex::new(Schedule {
                    fetched_at,
                    last_attempt: started,
                    next_due: fetched_at + refresh_interval,
                    inflight: None,
                    last_error: None,
                }),
            }),
        })
    }

    /// The URL the JWKS is read from.
    pub fn url(&self) -> &str {
        &self.shared.url
    }

    /// Why the last fetch failed (or a caller gave up waiting for it), or `None` after a good one.
    /// Names the URL and the rule, never key material.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.shared.schedule).last_error.clone()
    }

    /// Fetches the JWKS now, whatever the schedule and the cooldown (or waits for the fetch under
    /// way), at most `timeout`: `Ok(true)` when the keys changed, an error when the fetch failed
    /// or its JWKS was refused (the last good keys then stay).
    pub fn refresh(&self) -> Result<bool, KeyringError> {
        match Shared::start(&self.shared, Cause::Forced) {
            Some(flight) => self.shared.wait(&flight).map_err(KeyringError::new),
            None => Ok(false),
        }
    }
}

impl Shared {
    fn current(&self) -> Arc<Keyring> {
        Arc::clone(&self.ring.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The fetch under way, or a new one if `cause` allows it now; `None` when none is.
    fn start(shared: &Arc<Shared>, cause: Cause) -> Option<Arc<Flight>> {
        let flight = {
            let mut schedule = lock(&shared.schedule);
            if let Some(flight) = &schedule.inflight {
                return Some(Arc::clone(flight));
            }
            let now = (shared.clock)();
            let allowed = match cause {
                Cause::Forced => true,
                Cause::UnknownKey => {
                    now.saturating_duration_since(schedule.last_attempt) >= shared.cooldown
                }
                Cause::Scheduled => now >= schedule.next_due,
            };
            if !allowed {
                return None;
            }
            let flight = Arc::new(Flight {
                outcome: Mutex::new(None),
                done: Condvar::new(),
                deadline: Instant::now() + shared.timeout,
            });
            schedule.inflight = Some(Arc::clone(&flight));
            schedule.last_attempt = now;
            // Until this fetch ends, no other scheduled one starts.
            schedule.next_due = now + shared.refresh_interval;
            flight
        };
        let worker = Arc::clone(shared);
        let in_thread = Arc::clone(&flight);
        let spawned = std::thread::Builder::new()
            .name("mrtr-state-jwks".into())
            .spawn(move || {
                let fetched = catch_unwind(AssertUnwindSafe(|| {
                    fetch(
                        &worker.agent,
                        &worker.url,
                        in_thread.deadline,
                        worker.timeout,
                        worker.max_bytes,
                    )
                }))
                .unwrap_or_else(|_| Err("the fetch panicked".to_owned()));
                worker.settle(&in_thread, fetched);
            });
        if spawned.is_err() {
            shared.settle(&flight, Err("no thread could be started".to_owned()));
        }
        Some(flight)
    }

    /// Waits for `flight` up to its deadline: `Ok(changed)` or the reason it failed.
    fn wait(&self, flight: &Flight) -> Result<bool, String> {
        match flight.wait() {
            Some(outcome) => outcome,
            None => {
                // The fetch ends by itself at its own deadline; until then this is the news.
                let message = format!(
                    "could not fetch the JWKS from {}: no answer within {}",
                    self.url,
                    seconds(self.timeout)
                );
                lock(&self.schedule).last_error = Some(message.clone());
                Err(message)
            }
        }
    }

    /// Takes in what a fetch found: new keys, the same keys, or a failure (the last good keys stay).
    fn settle(&self, flight: &Flight, fetched: Result<Keyring, String>) {
        let ring = match fetched {
            Ok(ring) => ring,
            Err(reason) => {
                let message = format!("could not fetch the JWKS from {}: {reason}", self.url);
                let (kept, age) = {
                    let mut schedule = lock(&self.schedule);
                    let now = (self.clock)();
                    schedule.last_error = Some(message.clone());
                    // Retried after the cooldown, not a whole interval later.
                    schedule.next_due = now + self.cooldown;
                    schedule.inflight = None;
                    (
                        self.current().keys().len(),
                        now.saturating_duration_since(schedule.fetched_at),
                    )
                };
                log::warn!(
                    target: "mrtr_state::keys",
                    "{message}; keeping the {kept} key(s) fetched {} s ago",
                    age.as_secs()
                );
                count(&self.metrics, "failed");
                flight.finish(Err(message));
                return;
            }
        };
        let changed = self.current().public_jwks() != ring.public_jwks();
        let line = changed.then(|| {
            format!(
                "the JWKS from {} changed: {} key(s), kid {}",
                self.url,
                ring.keys().len(),
                kids(&ring)
            )
        });
        {
            let mut schedule = lock(&self.schedule);
            if changed {
                *self.ring.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(ring);
            }
            let now = (self.clock)();
            schedule.fetched_at = now;
            schedule.next_due = now + self.refresh_interval;
            schedule.last_error = None;
            schedule.inflight = None;
        }
        if let Some(line) = line {
            log::info!(target: "mrtr_state::keys", "{line}");
        }
        count(&self.metrics, if changed { "updated" } else { "unchanged" });
        flight.finish(Ok(changed));
    }
}

impl KeySource for RemoteJwks {
    /// The keys of the last good fetch; starts a fetch in the background when one is due (the
    /// refresh interval since the last fetch, or the cooldown since a failed one), never waits for it.
    fn keyring(&self) -> Arc<Keyring> {
        let _ = Shared::start(&self.shared, Cause::Scheduled);
        self.shared.current()
    }

    /// Fetches at once for a token whose `kid` the keys do not hold, unless a fetch started less
    /// than the cooldown ago; waits for the fetch under way if there is one (at most `timeout`).
    /// Tells whether the keys changed; a failure is logged, and the last good keys stay.
    fn refresh_for_unknown_key(&self) -> bool {
        match Shared::start(&self.shared, Cause::UnknownKey) {
            Some(flight) => self.shared.wait(&flight).unwrap_or(false),
            None => false,
        }
    }
}

fn count(metrics: &Option<MetricsFn>, outcome: &str) {
    record(
        metrics,
        KEY_REFRESH,
        &[("source", "remote_jwks"), ("outcome", outcome)],
    );
}

fn kids(ring: &Keyring) -> String {
    ring.keys()
        .iter()
        .map(|k| k.kid())
        .collect::<Vec<_>>()
        .join(", ")
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// The HTTP client of one URL: no redirect followed, any status returned as an answer, the whole
/// fetch under one deadline, no connection kept, no proxy for `http://` (loopback only).
fn agent(url: &str, options: &RemoteJwksOptions) -> ureq::Agent {
    let roots = if options.root_certificates.is_empty() {
        ureq::tls::RootCerts::WebPki
    } else {
        ureq::tls::RootCerts::new_with_certs(
            &options
                .root_certificates
                .iter()
                .map(|der| ureq::tls::Certificate::from_der(der).to_owned())
                .collect::<Vec<_>>(),
        )
    };
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .max_idle_connections(0)
        .max_idle_connections_per_host(0)
        .accept(ACCEPT)
        // Each request sets what is left of its fetch's deadline.
        .timeout_global(Some(options.timeout))
        .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build());
    let plain = url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"));
    if plain {
        config = config.proxy(None);
    }
    config.build().new_agent()
}

/// Runs `work` in a short-lived thread and waits for it until `deadline`; past it, the thread is
/// left to end by itself (every fetch has its own deadline) and the reason says so.
fn run_until(
    deadline: Instant,
    timeout: Duration,
    work: impl FnOnce() -> Result<Keyring, String> + Send + 'static,
) -> Result<Keyring, String> {
    let (tx, rx) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("mrtr-state-jwks".into())
        .spawn(move || {
            let fetched = catch_unwind(AssertUnwindSafe(work))
                .unwrap_or_else(|_| Err("the fetch panicked".to_owned()));
            let _ = tx.send(fetched);
        })
        .map_err(|_| "no thread could be started".to_owned())?;
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .unwrap_or_else(|_| Err(format!("no answer within {}", seconds(timeout))))
}

/// GETs the JWKS and reads its keys, all before `deadline` (`timeout` after the fetch was asked
/// for); the reason of a failure names the rule, never the body.
fn fetch(
    agent: &ureq::Agent,
    url: &str,
    deadline: Instant,
    timeout: Duration,
    max_bytes: u64,
) -> Result<Keyring, String> {
    let late = || format!("no answer within {}", seconds(timeout));
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(late());
    }
    let body = download(agent, url, left, max_bytes).map_err(|reason| {
        if Instant::now() >= deadline {
            late()
        } else {
            reason
        }
    })?;
    // What was read after the deadline is not trusted.
    if Instant::now() >= deadline {
        return Err(late());
    }
    parse(&body).map_err(|e| e.message().to_owned())
}

fn download(
    agent: &ureq::Agent,
    url: &str,
    left: Duration,
    max_bytes: u64,
) -> Result<Vec<u8>, String> {
    let mut response = agent
        .get(url)
        .config()
        .timeout_global(Some(left))
        .build()
        .call()
        .map_err(|e| describe(&e))?;
    let status = response.status().as_u16();
    if status != 200 {
        let hint = if (300..400).contains(&status) {
            " (redirects are not followed: configure the final URL)"
        } else {
            ""
        };
        return Err(format!("the server answered HTTP {status}{hint}"));
    }
    if let Some(length) = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        && length > max_bytes
    {
        return Err(format!(
            "the answer is {length} bytes, over the limit of {max_bytes}"
        ));
    }
    let reader = response
        .body_mut()
        .with_config()
        .limit(max_bytes + 1)
        .reader();
    let mut body = Vec::new();
    reader
        .take(max_bytes + 1)
        .read_to_end(&mut body)
        .map_err(|e| describe_io(&e))?;
    if body.len() as u64 > max_bytes {
        return Err(format!("the answer is over the limit of {max_bytes} bytes"));
    }
    Ok(body)
}

/// A short reason for a failed request: the kind of failure, never a response body.
fn describe(error: &ureq::Error) -> String {
    match error {
        ureq::Error::Timeout(_) => "no answer in time".to_owned(),
        ureq::Error::HostNotFound => "cannot connect: the host name was not found".to_owned(),
        ureq::Error::Io(e) => describe_io(e),
        ureq::Error::TooManyRedirects => {
            "the server answered a redirect (redirects are not followed: configure the final URL)"
                .to_owned()
        }
        ureq::Error::Rustls(e) => format!("the TLS handshake failed: {e}"),
        ureq::Error::Tls(e) => format!("TLS failed: {e}"),
        ureq::Error::Protocol(e) => format!("the answer is not valid HTTP/1.1 ({e})"),
        ureq::Error::LargeResponseHeader(..) => "the answer's headers are too large".to_owned(),
        ureq::Error::ConnectionFailed => "cannot connect".to_owned(),
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => "the URL cannot be requested".to_owned(),
        other => format!("the request failed ({other})"),
    }
}

fn describe_io(error: &std::io::Error) -> String {
    if let Some(inner) = error.get_ref() {
        if let Some(inner) = inner.downcast_ref::<ureq::Error>() {
            return describe(inner);
        }
        if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
            return format!("the TLS handshake failed: {tls}");
        }
    }
    match error.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
            "no answer in time".to_owned()
        }
        kind => format!("the connection failed: {kind}"),
    }
}

/// The keys of a fetched JWKS: every rule of a local key file, then Ed25519 public keys only.
fn parse(body: &[u8]) -> Result<Keyring, KeyringError> {
    let text =
        std::str::from_utf8(body).map_err(|_| KeyringError::new("the answer is not UTF-8 text"))?;
    if !text.trim_start().starts_with('{') {
        return Err(KeyringError::new(
            "the answer is not a JSON object (an HTML page, an error page?)",
        ));
    }
    let ring = Keyring::from_jwks_json(text)?;
    for key in ring.keys() {
        match key.kind() {
            KeyKind::EdDsa { private: None, .. } => {}
            KeyKind::EdDsa { .. } => {
                return Err(KeyringError::new(format!(
                    "the JWKS holds an Ed25519 private key ('d', kid {:?}): a published JWKS must hold public keys only (replace the key, it is no longer private)",
                    key.kid()
                )));
            }
            _ => {
                return Err(KeyringError::new(format!(
                    "the JWKS holds a secret key (alg {}, kid {:?}): a published JWKS must hold Ed25519 public keys only (replace the secret, it is no longer one)",
                    key.algorithm(),
                    key.kid()
                )));
            }
        }
    }
    Ok(ring)
}

#[cfg(test)]
mod tests {
    use super::check_jwks_url;

    #[test]
    fn urls() {
        for good in [
            "https://tools.example.com/.well-known/mrtr-state-jwks.json",
            "HTTPS://tools.example.com:8443/jwks",
            "http://127.0.0.1:8080/jwks",
            "http://127.9.9.9/jwks",
            "http://localhost/jwks",
            "http://[::1]:9000/jwks",
            "https://[2001:db8::1]/jwks",
        ] {
            assert!(check_jwks_url(good).is_ok(), "{good}");
        }
        for bad in [
            "http://tools.example.com/jwks",
            "http://10.0.0.1/jwks",
            "http://[::2]/jwks",
            "http://tools.example.com#@127.0.0.1/",
            "http://127.0.0.1@tools.example.com/",
            "https://user:pass@tools.example.com/jwks",
            "https://user@tools.example.com/jwks",
            "ftp://tools.example.com/jwks",
            "file:///etc/passwd",
            "tools.example.com/jwks",
            "https:///jwks",
            "https://tools.example.com:99999/",
            "https://tools.example.com:8x/",
            "https://[::1/",
            "https://tools.example.com/a b",
            "http://127.0.0.1\\@tools.example.com/",
        ] {
            assert!(check_jwks_url(bad).is_err(), "{bad}");
        }
    }
}
