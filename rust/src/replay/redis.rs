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
//!
//! Deployments: a single Redis ([`RedisReplayStore::from_url`]), a primary with replicas behind
//! Sentinel ([`RedisReplayStore::from_sentinel`]) or a Redis Cluster
//! ([`RedisReplayStore::from_cluster`]). Behind Sentinel the store asks the Sentinels for the primary
//! when it connects, and again after any redemption whose answer did not arrive or that met a
//! read-only node (a demoted primary): it follows a failover once the Sentinels name the promoted
//! replica. On a Cluster the redis crate's cluster client routes each SET to its slot's primary (with
//! WAIT, the SET and the WAIT go down that primary's connection, in one pipeline); it is built with no
//! retries at all, so a `MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN` or `READONLY` answer, or a lost
//! connection, refuses that redemption (the SET did not run, or may have: either way it is never sent
//! again), and the client relearns the slot map (on `MOVED` and `READONLY`, and when a node's
//! connection is lost and its slot is tried elsewhere), so the next redemption goes to the promoted
//! primary.
//!
//! An outage is logged once, when it begins, with its cause (through the `log` facade, target
//! `mrtr_state::replay::redis`, never an address, a key or a token), and once when Redis answers
//! again. The redis crate logs through the same facade (target `redis`), and some of its lines name a
//! node's address: filter that target out if addresses must not reach the log.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::MultiplexedConnection;
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{AsyncConnectionConfig, Client, ConnectionInfo, IntoConnectionInfo};
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

/// Where the store's Redis is, and the connection it holds to it.
enum Deployment {
    /// One server; the connection is dropped after a failure and opened again on the next use.
    Single {
        client: Client,
        connection: Mutex<Option<MultiplexedConnection>>,
    },
    /// The primary the Sentinels name; after a failure the next use asks them again.
    Sentinel {
        sentinels: Mutex<SentinelClient>,
        connection: Mutex<Option<MultiplexedConnection>>,
    },
    /// A Redis Cluster: the start-up nodes, and the cluster client's connection once made (it
    /// keeps the slot map and a connection per node, and repairs both itself).
    Cluster {
        nodes: Vec<ConnectionInfo>,
        connection: Mutex<Option<ClusterConnection>>,
    },
}

impl Deployment {
    fn name(&self) -> &'static str {
        match self {
            Deployment::Single { .. } => "single",
            Deployment::Sentinel { .. } => "sentinel",
            Deployment::Cluster { .. } => "cluster",
        }
    }
}

/// A `ReplayStore` in Redis: one server ([`from_url`](Self::from_url)), the primary a set of
/// Sentinels names ([`from_sentinel`](Self::from_sentinel)) or a Redis Cluster
/// ([`from_cluster`](Self::from_cluster)).
pub struct RedisReplayStore {
    deployment: Deployment,
    prefix: String,
    connect_timeout: Duration,
    timeout: Duration,
    replicas: u32,
    wait_timeout: Duration,
    clock_ms: MillisClock,
    outage: AtomicBool,
}

impl std::fmt::Debug for RedisReplayStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // No address and no password: the URLs may hold both.
        f.debug_struct("RedisReplayStore")
            .field("deployment", &self.deployment.name())
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

fn unreadable_url() -> ReplayStoreError {
    ReplayStoreError::new("a Redis URL cannot be read (the URL is not shown)")
}

impl RedisReplayStore {
    fn with_deployment(deployment: Deployment) -> RedisReplayStore {
        RedisReplayStore {
            deployment,
            prefix: DEFAULT_PREFIX.to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            replicas: 0,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
            clock_ms: Arc::new(system_ms),
            outage: AtomicBool::new(false),
        }
    }

    /// A store for the Redis server of this URL. It connects on first use (and again after a
    /// failure); the URL is never shown in a message.
    pub fn from_url(url: &str) -> Result<RedisReplayStore, ReplayStoreError> {
        let client = Client::open(url).map_err(|_| unreadable_url())?;
        Ok(RedisReplayStore::with_deployment(Deployment::Single {
            client,
            connection: Mutex::new(None),
        }))
    }

    /// A store writing to the primary that the Sentinels at `sentinels` (URLs such as
    /// `redis://127.0.0.1:26379`, a password in the URL for Sentinels that have one) name for
    /// `service_name`. The primary is reached with no password, database 0 and no TLS; see
    /// [`from_sentinel_with`](Self::from_sentinel_with) for others.
    ///
    /// The store asks the Sentinels (each lookup bounded by the connect timeout plus the command
    /// timeout) when it first connects, and again on the redemption after one whose answer did not
    /// arrive, whose connection failed, or that met a read-only node (a demoted primary); that
    /// redemption is refused (`store_unavailable`), never sent again.
    pub fn from_sentinel(
        sentinels: &[&str],
        service_name: &str,
    ) -> Result<RedisReplayStore, ReplayStoreError> {
        RedisReplayStore::from_sentinel_with(sentinels, service_name, None)
    }

    /// As [`from_sentinel`](Self::from_sentinel), with the TLS mode and the login (user name,
    /// password, database) of the primary in `primary`.
    pub fn from_sentinel_with(
        sentinels: &[&str],
        service_name: &str,
        primary: Option<SentinelNodeConnectionInfo>,
    ) -> Result<RedisReplayStore, ReplayStoreError> {
        if sentinels.is_empty() {
            return Err(ReplayStoreError::new("give at least one Sentinel"));
        }
        if service_name.is_empty() {
            return Err(ReplayStoreError::new(
                "the Sentinel service name (the primary's name) must not be empty",
            ));
        }
        let infos = sentinels
            .iter()
            .map(|url| url.into_connection_info().map_err(|_| unreadable_url()))
            .collect::<Result<Vec<_>, _>>()?;
        let client = SentinelClient::build(
            infos,
            service_name.to_owned(),
            primary,
            SentinelServerType::Master,
        )
        .map_err(|_| {
            ReplayStoreError::new(
                "the Sentinel client cannot be built from these URLs (they are not shown)",
            )
        })?;
        Ok(RedisReplayStore::with_deployment(Deployment::Sentinel {
            sentinels: Mutex::new(client),
            connection: Mutex::new(None),
        }))
    }

    /// A store on the Redis Cluster whose start-up nodes are at `urls` (`redis://` or
    /// `rediss://`, one per node; every one with the same user name, password and TLS). Give
    /// several: the client learns the cluster from any start-up node that answers, so a start-up
    /// node that is down (a primary that failed) does not keep the store down.
    ///
    /// The cluster client is made on first use (and connects to every node), with the store's
    /// timeouts and no retries: a redemption that meets `MOVED`, `ASK`, `TRYAGAIN`, `CLUSTERDOWN`,
    /// `READONLY` or a lost connection is refused (`store_unavailable`) and never sent again, and
    /// the client relearns the slot map for the next one.
    pub fn from_cluster(urls: &[&str]) -> Result<RedisReplayStore, ReplayStoreError> {
        if urls.is_empty() {
            return Err(ReplayStoreError::new(
                "give at least one Redis Cluster node",
            ));
        }
        let nodes = urls
            .iter()
            .map(|url| url.into_connection_info().map_err(|_| unreadable_url()))
            .collect::<Result<Vec<_>, _>>()?;
        // Checked now (the schemes and logins agree), built again with the timeouts on first use.
        ClusterClientBuilder::new(nodes.clone())
            .build()
            .map_err(|_| {
                ReplayStoreError::new(
                    "the Redis Cluster URLs cannot be used together: every one needs the same scheme, user name and password (they are not shown)",
                )
            })?;
        Ok(RedisReplayStore::with_deployment(Deployment::Cluster {
            nodes,
            connection: Mutex::new(None),
        }))
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

    fn connection_config(&self) -> AsyncConnectionConfig {
        AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.answer_timeout()))
    }

    /// The connection to the single server or to the primary the Sentinels name, opened if none
    /// is held.
    async fn node_connection(
        &self,
        held: &Mutex<Option<MultiplexedConnection>>,
        open: impl Future<Output = redis::RedisResult<MultiplexedConnection>>,
    ) -> Result<MultiplexedConnection, ReplayStoreError> {
        let mut held = held.lock().await;
        if let Some(connection) = held.as_ref() {
            return Ok(connection.clone());
        }
        let connection = tokio::time::timeout(self.connect_timeout + self.timeout, open)
            .await
            .map_err(|_| ReplayStoreError::new("Redis did not answer the connection in time"))?
            .map_err(|e| failure("connect", &e))?;
        *held = Some(connection.clone());
        Ok(connection)
    }

    async fn cluster_connection(
        &self,
        nodes: &[ConnectionInfo],
        held: &Mutex<Option<ClusterConnection>>,
    ) -> Result<ClusterConnection, ReplayStoreError> {
        let mut held = held.lock().await;
        if let Some(connection) = held.as_ref() {
            return Ok(connection.clone());
        }
        let client = ClusterClientBuilder::new(nodes.to_vec())
            .retries(0)
            .connection_timeout(self.connect_timeout)
            .response_timeout(self.answer_timeout())
            .build()
            .map_err(|e| failure("cluster client", &e))?;
        let connection = tokio::time::timeout(
            self.connect_timeout + self.timeout,
            client.get_async_connection(),
        )
        .await
        .map_err(|_| {
            ReplayStoreError::new("the Redis Cluster did not answer the connection in time")
        })?
        .map_err(|e| failure("connect to the cluster", &e))?;
        *held = Some(connection.clone());
        Ok(connection)
    }

    async fn redeem_once(&self, key: &str, expires_at_unix: i64) -> Result<bool, ReplayStoreError> {
        let left_ms = expires_at_unix.saturating_mul(1000) - (self.clock_ms)();
        if left_ms < 1 {
            // No fault of Redis's: not an outage.
            return Err(ReplayStoreError::new(
                "the redemption's retention has already ended by the store's clock; give the store the sealer's clock",
            ));
        }
        match self.redeem_in_redis(key, left_ms).await {
            Ok(first) => {
                self.answered();
                Ok(first)
            }
            Err(error) => Err(self.outage_begins(error)),
        }
    }

    async fn redeem_in_redis(&self, key: &str, left_ms: i64) -> Result<bool, ReplayStoreError> {
        match &self.deployment {
            Deployment::Single { client, connection } => {
                let config = self.connection_config();
                let open = client.get_multiplexed_async_connection_with_config(&config);
                let mut node = self.node_connection(connection, open).await?;
                self.redeem_on_node(&mut node, connection, key, left_ms)
                    .await
            }
            Deployment::Sentinel {
                sentinels,
                connection,
            } => {
                let config = self.connection_config();
                let open = async {
                    sentinels
                        .lock()
                        .await
                        .get_async_connection_with_config(&config)
                        .await
                };
                let mut node = self.node_connection(connection, open).await?;
                self.redeem_on_node(&mut node, connection, key, left_ms)
                    .await
            }
            Deployment::Cluster { nodes, connection } => {
                let mut cluster = self.cluster_connection(nodes, connection).await?;
                self.redeem_on_cluster(&mut cluster, key, left_ms).await
            }
        }
    }

    fn set_command(&self, key: &str, left_ms: i64) -> redis::Cmd {
        redis::cmd("SET")
            .arg(self.redis_key(key))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(left_ms)
            .to_owned()
    }

    /// SET NX PX, then WAIT, in one pipeline (no MULTI): both go down one connection.
    fn durable_pipeline(&self, key: &str, left_ms: i64) -> redis::Pipeline {
        let wait_ms = u64::try_from(self.wait_timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        redis::pipe()
            .add_command(self.set_command(key, left_ms))
            .cmd("WAIT")
            .arg(self.replicas)
            .arg(wait_ms)
            .ignore_errors()
            .to_owned()
    }

    /// One redemption on a single server or the Sentinels' primary, sent once; the connection is
    /// dropped when its answer did not arrive or the node is read-only, so the next redemption
    /// connects again (behind Sentinel, to the primary the Sentinels name then).
    async fn redeem_on_node(
        &self,
        node: &mut MultiplexedConnection,
        held: &Mutex<Option<MultiplexedConnection>>,
        key: &str,
        left_ms: i64,
    ) -> Result<bool, ReplayStoreError> {
        let forget = || async { *held.lock().await = None };
        if self.replicas > 0 {
            let replies = tokio::time::timeout(
                self.answer_timeout(),
                self.durable_pipeline(key, left_ms)
                    .query_async::<Vec<redis::RedisResult<redis::Value>>>(node),
            )
            .await;
            return match replies {
                Ok(Ok(replies)) => {
                    if replies.iter().any(|r| r.as_ref().is_err_and(stale_node)) {
                        forget().await;
                    }
                    durable_verdict(replies, self.replicas)
                }
                Ok(Err(e)) => {
                    if stale_node(&e) {
                        forget().await;
                    }
                    Err(failure("SET and WAIT", &e))
                }
                Err(_) => {
                    forget().await;
                    Err(ReplayStoreError::new(
                        "Redis did not answer the SET and WAIT in time",
                    ))
                }
            };
        }
        let reply = tokio::time::timeout(
            self.timeout,
            self.set_command(key, left_ms)
                .query_async::<Option<String>>(node),
        )
        .await;
        match reply {
            Ok(reply) => {
                if reply.as_ref().is_err_and(stale_node) {
                    forget().await;
                }
                set_verdict(reply)
            }
            Err(_) => {
                forget().await;
                Err(ReplayStoreError::new(
                    "Redis did not answer the SET in time",
                ))
            }
        }
    }

    /// One redemption on a Cluster, sent once: the SET through the cluster client (routed to the
    /// key's primary), or, with WAIT, the SET and the WAIT in one pipeline to that primary.
    async fn redeem_on_cluster(
        &self,
        cluster: &mut ClusterConnection,
        key: &str,
        left_ms: i64,
    ) -> Result<bool, ReplayStoreError> {
        if self.replicas == 0 {
            let reply = tokio::time::timeout(
                self.timeout,
                self.set_command(key, left_ms)
                    .query_async::<Option<String>>(cluster),
            )
            .await
            .map_err(|_| ReplayStoreError::new("Redis did not answer the SET in time"))?;
            return set_verdict(reply);
        }
        let route = SingleNodeRoutingInfo::SpecificNode(Route::with_key(
            self.redis_key(key).as_bytes(),
            SlotAddr::Master,
        ));
        let replies = tokio::time::timeout(
            self.answer_timeout(),
            cluster.route_pipeline(self.durable_pipeline(key, left_ms), 0, 2, route),
        )
        .await
        .map_err(|_| ReplayStoreError::new("Redis did not answer the SET and WAIT in time"))?
        .map_err(|e| failure("SET and WAIT", &e))?;
        let replies = replies
            .into_iter()
            .map(redis::Value::extract_error)
            .collect::<Vec<_>>();
        durable_verdict(replies, self.replicas)
    }

    /// Logs the first failure of an outage (once, with its cause) and returns it.
    fn outage_begins(&self, error: ReplayStoreError) -> ReplayStoreError {
        if !self.outage.swap(true, Ordering::SeqCst) {
            log::warn!(
                "mrtr-state: the Redis replay store ({}) is unavailable: {error}; redemptions are refused store_unavailable until it answers",
                self.deployment.name()
            );
        }
        error
    }

    /// Logs the end of an outage, once, when Redis answers again.
    fn answered(&self) {
        if self.outage.load(Ordering::Relaxed) && self.outage.swap(false, Ordering::SeqCst) {
            log::info!(
                "mrtr-state: the Redis replay store ({}) answers again",
                self.deployment.name()
            );
        }
    }
}

/// Whether an error says the held connection is no use any more: its answer did not arrive, its
/// connection failed, or the node is read-only (a primary demoted by a failover).
fn stale_node(error: &redis::RedisError) -> bool {
    error.is_io_error()
        || error.is_timeout()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.code() == Some("READONLY")
}

/// SET NX's answer: OK when it wrote, nil when the key was there.
fn set_verdict(reply: redis::RedisResult<Option<String>>) -> Result<bool, ReplayStoreError> {
    match reply {
        Ok(Some(ok)) if ok == "OK" => Ok(true),
        Ok(None) => Ok(false),
        Ok(Some(_)) => Err(ReplayStoreError::new(
            "Redis answered the SET with an unexpected reply",
        )),
        Err(e) => Err(failure("SET", &e)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_refuse_what_they_cannot_use_without_showing_it() {
        let secret = "s3cret-in-the-url";
        let bad = format!("redis://:{secret}@[not-an-address/0");
        for error in [
            RedisReplayStore::from_url(&bad).unwrap_err(),
            RedisReplayStore::from_sentinel(&[bad.as_str()], "primary").unwrap_err(),
            RedisReplayStore::from_cluster(&[bad.as_str()]).unwrap_err(),
            RedisReplayStore::from_sentinel(&[], "primary").unwrap_err(),
            RedisReplayStore::from_sentinel(&["redis://127.0.0.1:26379"], "").unwrap_err(),
            RedisReplayStore::from_cluster(&[]).unwrap_err(),
            // The client logs in to every node as the first URL says: others may not differ.
            RedisReplayStore::from_cluster(&[
                &format!("redis://:{secret}@127.0.0.1:7000"),
                "redis://:other@127.0.0.1:7001",
            ])
            .unwrap_err(),
        ] {
            assert!(!error.to_string().contains(secret), "{error}");
            assert!(!error.to_string().contains("other"), "{error}");
        }
    }

    #[test]
    fn debug_names_the_deployment_and_no_address() {
        let url = "redis://:s3cret@127.0.0.1:7000";
        let stores = [
            RedisReplayStore::from_url(url).unwrap(),
            RedisReplayStore::from_sentinel(&[url], "primary").unwrap(),
            RedisReplayStore::from_cluster(&[url]).unwrap(),
        ];
        for (store, name) in stores.iter().zip(["single", "sentinel", "cluster"]) {
            let shown = format!("{store:?}");
            assert!(shown.contains(name), "{shown}");
            assert!(
                !shown.contains("s3cret") && !shown.contains("7000"),
                "{shown}"
            );
        }
    }

    #[tokio::test]
    async fn nothing_listening_is_an_error_naming_no_address_and_an_outage() {
        // Port 1 on loopback: refused at once, for every deployment.
        let url = "redis://127.0.0.1:1";
        let later = (system_ms() / 1000) + 60;
        for store in [
            RedisReplayStore::from_url(url).unwrap(),
            RedisReplayStore::from_sentinel(&[url], "primary").unwrap(),
            RedisReplayStore::from_cluster(&[url]).unwrap(),
        ] {
            let store = store.with_timeouts(Duration::from_millis(500), Duration::from_millis(500));
            for _ in 0..2 {
                let error = store.redeem("iss#jti", later).await.unwrap_err();
                assert!(!error.to_string().contains("127.0.0.1"), "{error}");
            }
            assert!(store.outage.load(Ordering::SeqCst));
        }
    }
}
