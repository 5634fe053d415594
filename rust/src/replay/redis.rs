//! A replay store shared by every replica, in Redis (feature `redis`). It writes the very keys the
//! Python, TypeScript, Go and Java stores write, so a token redeemed on any replica in any language is
//! refused as replayed on all of them. One redemption is one atomic command:
//!
//! ```text
//! SET <prefix><BASE64URL(SHA-256(iss "#" jti))> 1 NX PX <retention in ms>
//! ```
//!
//! NX makes the first writer win; PX makes Redis forget the key once no verifier accepts the token,
//! measured by the store's clock (give it the sealer's), so an offset of Redis's own clock does not
//! matter. Every command has a bounded timeout and is sent once, never retried: a retried SET NX whose
//! first attempt was written would refuse the first redemption as replayed. Every failure
//! (unreachable, timed out, an error reply) is an error, which the sealer refuses as
//! `store_unavailable`. Messages name the failure's kind, never an address or a password.
//!
//! Replication is asynchronous: a primary that fails right after the SET may lose it. The durability
//! option ([`RedisReplayStore::with_wait`]) sends `WAIT <replicas> <ms>` in one pipeline with the SET,
//! on the same connection (WAIT counts the replicas that have that connection's writes), and a first
//! redemption counts only when WAIT reports at least `replicas` acknowledgements; otherwise the store
//! answers an error (`store_unavailable`, fail closed). A replay is a replay whatever WAIT answered.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client};
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

use super::{RedeemFuture, ReplayStore};
use crate::errors::ReplayStoreError;
use crate::token::b64;

/// The key prefix every implementation's Redis store uses.
pub const DEFAULT_PREFIX: &str = "mrtr-state:jti:";
/// The default timeout of a connection attempt.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The default timeout of one command.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// The default time WAIT waits for replicas with the durability option (as in the other languages).
pub const DEFAULT_WAIT_TIMEOUT: Duration = Duration::from_millis(500);
/// The most replicas the durability option waits for (as in the other languages).
pub const MAX_WAIT_REPLICAS: u32 = 100;

type MillisClock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// A `ReplayStore` in one Redis server (a URL such as `redis://127.0.0.1:6379/0`).
pub struct RedisReplayStore {
    client: Client,
    connection: Mutex<Option<MultiplexedConnection>>,
    prefix: String,
    connect_timeout: Duration,
    timeout: Duration,
    replicas: u32,
    wait_timeout: Duration,
    clock_ms: MillisClock,
}

impl std::fmt::Debug for RedisReplayStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // No address and no password: the URL may hold both.
        f.debug_struct("RedisReplayStore")
            .field("prefix", &self.prefix)
            .field("wait_replicas", &self.replicas)
            .finish_non_exhaustive()
    }
}

fn system_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl RedisReplayStore {
    /// A store for the Redis server of this URL. It connects on first use (and again after a
    /// failure); the URL is never shown in a message.
    pub fn from_url(url: &str) -> Result<RedisReplayStore, ReplayStoreError> {
        let client = Client::open(url).map_err(|_| {
            ReplayStoreError::new("the Redis URL cannot be read (the URL is not shown)")
        })?;
        Ok(RedisReplayStore {
            client,
            connection: Mutex::new(None),
            prefix: DEFAULT_PREFIX.to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            replicas: 0,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
            clock_ms: Arc::new(system_ms),
        })
    }

    /// Another key prefix (default `mrtr-state:jti:`, shared with the other languages).
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Other timeouts for connecting and for one command.
    pub fn with_timeouts(mut self, connect: Duration, command: Duration) -> Self {
        self.connect_timeout = connect;
        self.timeout = command;
        self
    }

    /// The durability option (the other languages' `wait_replicas`/`wait_timeout`): after the SET,
    /// `WAIT replicas <timeout in ms>` on the same connection, in one pipeline, and a first
    /// redemption counts only when at least `replicas` replicas acknowledged it within `timeout`;
    /// fewer is an error (`store_unavailable`). `replicas` 0 turns the option off (no WAIT is sent).
    /// `replicas` is at most 100; `timeout` is rounded to whole milliseconds, at least one (WAIT 0
    /// would wait forever). The client waits for the pipeline's answer for the command timeout plus
    /// `timeout`, so WAIT's own answer arrives before the client gives up.
    pub fn with_wait(mut self, replicas: u32, timeout: Duration) -> Result<Self, ReplayStoreError> {
        if replicas > MAX_WAIT_REPLICAS {
            return Err(ReplayStoreError::new(
                "the replicas to wait for must be from 0 to 100",
            ));
        }
        self.replicas = replicas;
        self.wait_timeout = timeout.max(Duration::from_millis(1));
        Ok(self)
    }

    /// How many replicas must acknowledge a redemption before it counts (0: not waited for).
    pub fn wait_replicas(&self) -> u32 {
        self.replicas
    }

    /// How long the client waits for one answer: the command timeout, plus WAIT's with the
    /// durability option.
    fn answer_timeout(&self) -> Duration {
        if self.replicas == 0 {
            self.timeout
        } else {
            self.timeout + self.wait_timeout
        }
    }

    /// The store's clock, in milliseconds since the epoch: give it the sealer's.
    pub fn with_clock_ms(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock_ms = Arc::new(clock);
        self
    }

    /// The Redis key of a store key (`iss#jti`): the prefix and BASE64URL(SHA-256(key)).
    pub fn redis_key(&self, key: &str) -> String {
        format!(
            "{}{}",
            self.prefix,
            b64::encode(&Sha256::digest(key.as_bytes()))
        )
    }

    async fn connection(&self) -> Result<MultiplexedConnection, ReplayStoreError> {
        let mut held = self.connection.lock().await;
        if let Some(connection) = held.as_ref() {
            return Ok(connection.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.answer_timeout()));
        let connection = tokio::time::timeout(
            self.connect_timeout + self.timeout,
            self.client
                .get_multiplexed_async_connection_with_config(&config),
        )
        .await
        .map_err(|_| ReplayStoreError::new("Redis did not answer the connection in time"))?
        .map_err(|e| failure("connect", &e))?;
        *held = Some(connection.clone());
        Ok(connection)
    }

    async fn redeem_once(&self, key: &str, expires_at_unix: i64) -> Result<bool, ReplayStoreError> {
        let left_ms = expires_at_unix.saturating_mul(1000) - (self.clock_ms)();
        if left_ms < 1 {
            return Err(ReplayStoreError::new(
                "the redemption's retention has already ended by the store's clock; give the store the sealer's clock",
            ));
        }
        let mut connection = self.connection().await?;
        if self.replicas > 0 {
            return self.redeem_durably(&mut connection, key, left_ms).await;
        }
        let command = redis::cmd("SET")
            .arg(self.redis_key(key))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(left_ms)
            .to_owned();
        let reply = tokio::time::timeout(
            self.timeout,
            command.query_async::<Option<String>>(&mut connection),
        )
        .await;
        let reply = match reply {
            Ok(reply) => reply,
            Err(_) => {
                self.forget_connection().await;
                return Err(ReplayStoreError::new(
                    "Redis did not answer the SET in time",
                ));
            }
        };
        match reply {
            Ok(Some(ok)) if ok == "OK" => Ok(true),
            Ok(None) => Ok(false),
            Ok(Some(_)) => Err(ReplayStoreError::new(
                "Redis answered the SET with an unexpected reply",
            )),
            Err(e) => {
                if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() {
                    self.forget_connection().await;
                }
                Err(failure("SET", &e))
            }
        }
    }

    /// SET NX PX and WAIT in one pipeline down one connection, sent once: a SET whose answer did
    /// not arrive is never sent again.
    async fn redeem_durably(
        &self,
        connection: &mut MultiplexedConnection,
        key: &str,
        left_ms: i64,
    ) -> Result<bool, ReplayStoreError> {
        let wait_ms = u64::try_from(self.wait_timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let pipeline = redis::pipe()
            .cmd("SET")
            .arg(self.redis_key(key))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(left_ms)
            .cmd("WAIT")
            .arg(self.replicas)
            .arg(wait_ms)
            .ignore_errors()
            .to_owned();
        let replies = tokio::time::timeout(
            self.answer_timeout(),
            pipeline.query_async::<Vec<redis::RedisResult<redis::Value>>>(connection),
        )
        .await;
        let replies = match replies {
            Ok(Ok(replies)) => replies,
            Ok(Err(e)) => {
                if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() {
                    self.forget_connection().await;
                }
                return Err(failure("SET and WAIT", &e));
            }
            Err(_) => {
                self.forget_connection().await;
                return Err(ReplayStoreError::new(
                    "Redis did not answer the SET and WAIT in time",
                ));
            }
        };
        durable_verdict(replies, self.replicas)
    }

    async fn forget_connection(&self) {
        *self.connection.lock().await = None;
    }
}

/// The verdict of SET NX followed by WAIT: a win counts only once `replicas` acknowledged it; a
/// replay is a replay whatever WAIT answered.
fn durable_verdict(
    replies: Vec<redis::RedisResult<redis::Value>>,
    replicas: u32,
) -> Result<bool, ReplayStoreError> {
    let mut replies = replies.into_iter();
    let (Some(set), Some(wait), None) = (replies.next(), replies.next(), replies.next()) else {
        return Err(ReplayStoreError::new(
            "Redis answered SET NX and WAIT with an unexpected number of replies",
        ));
    };
    match set {
        Ok(redis::Value::Okay) => {}
        Ok(redis::Value::SimpleString(ok)) if ok == "OK" => {}
        Ok(redis::Value::Nil) => return Ok(false),
        Ok(_) => {
            return Err(ReplayStoreError::new(
                "Redis answered the SET with an unexpected reply",
            ));
        }
        Err(e) => return Err(failure("SET", &e)),
    }
    let acknowledged = match wait {
        Ok(redis::Value::Int(n)) => n,
        Ok(_) => {
            return Err(ReplayStoreError::new(
                "Redis answered WAIT with an unexpected reply",
            ));
        }
        Err(e) => return Err(failure("WAIT", &e)),
    };
    if acknowledged < i64::from(replicas) {
        return Err(ReplayStoreError::new(format!(
            "Redis did not confirm the redemption on {replicas} replica(s) in time ({acknowledged} acknowledged)"
        )));
    }
    Ok(true)
}

/// A message naming the failure's kind and Redis's error code, never an address.
fn failure(what: &str, error: &redis::RedisError) -> ReplayStoreError {
    let kind = if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_io_error() || error.is_connection_dropped() || error.is_connection_refusal()
    {
        "the connection failed".to_owned()
    } else {
        match error.code() {
            Some(code) => format!("an error reply ({code})"),
            None => "an error".to_owned(),
        }
    };
    ReplayStoreError::new(format!("Redis {what}: {kind}"))
}

impl ReplayStore for RedisReplayStore {
    fn redeem<'a>(&'a self, jti: &'a str, expires_at_unix: i64) -> RedeemFuture<'a> {
        Box::pin(self.redeem_once(jti, expires_at_unix))
    }
}
