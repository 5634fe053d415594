//! The Redis replay store against a redis-server started on loopback (feature `redis`). Without
//! redis-server on PATH the tests say so and pass, except under CI=true, where they fail.
#![cfg(feature = "redis")]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mrtr_state::replay::redis::RedisReplayStore;
use mrtr_state::{Keyring, Reason, ReplayStore, StateSealer, Target};
use serde_json::json;

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "TRUE" | "yes"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A redis-server on loopback, or `None` (a failure under CI=true) when there is none.
fn redis_server(port: u16) -> Option<Server> {
    redis_server_with(port, &[])
}

/// As `redis_server`, with more arguments (`--replicaof` for a replica).
fn redis_server_with(port: u16, more: &[&str]) -> Option<Server> {
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(more)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(_) if in_ci() => {
            panic!("redis-server not found on PATH (CI=true: a missing tool is a failure)")
        }
        Err(_) => {
            eprintln!("redis-server not found on PATH: the Redis store test did not run");
            return None;
        }
    };
    let server = Server(child);
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "redis-server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(server)
}

#[test]
fn the_redis_key_is_the_other_languages_key() {
    let store = RedisReplayStore::from_url("redis://127.0.0.1:1/0").unwrap();
    // BASE64URL(SHA-256("https://mcp.example.com#abc")), as Python's hashlib computes it.
    assert_eq!(
        store.redis_key("https://mcp.example.com#abc"),
        "mrtr-state:jti:CzVZrp6MrwH3B2V7F6H4R0hzdkVe9o2CFUW7ShwPIWc"
    );
    assert!(!format!("{store:?}").contains("127.0.0.1"));
}

#[tokio::test]
async fn single_use_through_redis_and_store_unavailable_when_it_is_down() {
    let port = free_port();
    let Some(server) = redis_server(port) else {
        return;
    };
    let store = Arc::new(
        RedisReplayStore::from_url(&format!("redis://127.0.0.1:{port}/0"))
            .unwrap()
            .with_timeouts(Duration::from_millis(500), Duration::from_millis(500)),
    );
    let sealer = StateSealer::builder(Keyring::dev_hs256())
        .issuer("https://mcp.example.com")
        .replay_store(store.clone())
        .build()
        .unwrap();
    let tool = Target::Tool("pay".into());
    let token = sealer
        .seal(&json!({"amount": 5}), "alice", &tool, None)
        .unwrap();
    assert!(
        sealer
            .open(&token, "alice", &tool, None, true)
            .await
            .is_ok()
    );
    let again = sealer
        .open(&token, "alice", &tool, None, true)
        .await
        .unwrap_err();
    assert_eq!(again.reason, Reason::Replayed);
    // A second store (another replica) sees the same key.
    let replica = RedisReplayStore::from_url(&format!("redis://127.0.0.1:{port}/0")).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert_eq!(
        replica
            .redeem("https://mcp.example.com#replica-key-000000", now + 60)
            .await,
        Ok(true)
    );
    assert_eq!(
        store
            .redeem("https://mcp.example.com#replica-key-000000", now + 60)
            .await,
        Ok(false)
    );
    // A retention already over is refused, not written.
    assert!(
        store
            .redeem("https://mcp.example.com#old-0000000000000000", now - 1)
            .await
            .is_err()
    );

    drop(server); // Redis goes away: the store fails closed.
    let fresh = sealer.seal(&json!(1), "alice", &tool, None).unwrap();
    let down = sealer
        .open(&fresh, "alice", &tool, None, true)
        .await
        .unwrap_err();
    assert_eq!(down.reason, Reason::StoreUnavailable);

    let _back = redis_server(port).unwrap(); // and answers again once Redis does.
    assert!(
        sealer
            .open(&fresh, "alice", &tool, None, true)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    // A loopback listener that accepts and never replies: the SET is bounded by the timeout.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let store = RedisReplayStore::from_url(&format!("redis://127.0.0.1:{port}/0"))
        .unwrap()
        .with_timeouts(Duration::from_millis(300), Duration::from_millis(300));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let started = Instant::now();
    assert!(
        store
            .redeem("iss#silent-00000000000000", now + 60)
            .await
            .is_err()
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[tokio::test]
async fn waiting_for_a_replica_that_is_not_there_fails_closed() {
    let port = free_port();
    let Some(_server) = redis_server(port) else {
        return;
    };
    let url = format!("redis://127.0.0.1:{port}/0");
    let durable = RedisReplayStore::from_url(&url)
        .unwrap()
        .with_wait(1, Duration::from_millis(50))
        .unwrap();
    assert_eq!(durable.wait_replicas(), 1);
    let key = "https://mcp.example.com#waiting-000000000000";
    // No replica is attached: WAIT 1 reports 0 acknowledgements, so the first redemption is refused.
    let refused = durable.redeem(key, now_unix() + 60).await.unwrap_err();
    assert!(
        refused.to_string().contains("1 replica(s)") && !refused.to_string().contains("127.0.0.1"),
        "{refused}"
    );
    // The SET was written, and sent once: a replay stays a replay whatever WAIT answers.
    assert_eq!(durable.redeem(key, now_unix() + 60).await, Ok(false));

    // Through the sealer the refusal is store_unavailable, never an acceptance.
    let sealer = StateSealer::builder(Keyring::dev_hs256())
        .issuer("https://mcp.example.com")
        .replay_store(Arc::new(durable))
        .build()
        .unwrap();
    let tool = Target::Tool("pay".into());
    let token = sealer.seal(&json!(1), "alice", &tool, None).unwrap();
    let err = sealer
        .open(&token, "alice", &tool, None, true)
        .await
        .unwrap_err();
    assert_eq!(err.reason, Reason::StoreUnavailable);

    // WAIT 0 (the option off) accepts a first redemption as before.
    let plain = RedisReplayStore::from_url(&url)
        .unwrap()
        .with_wait(0, Duration::from_millis(50))
        .unwrap();
    let other = "https://mcp.example.com#not-waiting-0000000000";
    assert_eq!(plain.redeem(other, now_unix() + 60).await, Ok(true));
    assert_eq!(plain.redeem(other, now_unix() + 60).await, Ok(false));
}

#[test]
fn the_wait_option_is_bounded() {
    let store = || RedisReplayStore::from_url("redis://127.0.0.1:1/0").unwrap();
    assert!(store().with_wait(101, Duration::from_millis(50)).is_err());
    assert_eq!(
        store()
            .with_wait(100, Duration::ZERO)
            .unwrap()
            .wait_replicas(),
        100
    );
}

#[tokio::test]
async fn waiting_for_a_replica_that_acknowledges_accepts_once() {
    // A replica writes the primary's snapshot to its directory: a scratch one, not the crate's.
    let dir = std::env::temp_dir().join(format!("mrtr-redis-wait-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.display().to_string();
    let port = free_port();
    let Some(primary_server) = redis_server_with(port, &["--dir", &dir_arg]) else {
        return;
    };
    let replica_port = free_port();
    let primary = port.to_string();
    let replica_server = redis_server_with(
        replica_port,
        &[
            "--dir",
            &dir_arg,
            "--dbfilename",
            "replica.rdb",
            "--replicaof",
            "127.0.0.1",
            &primary,
        ],
    )
    .expect("redis-server ran for the primary");
    // Wait until the primary sees its replica online.
    let url = format!("redis://127.0.0.1:{port}/0");
    let mut admin = redis::Client::open(url.as_str())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let started = Instant::now();
    loop {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut admin)
            .await
            .unwrap();
        if info.contains("connected_slaves:1") && info.contains("state=online") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the replica did not attach: {info}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let durable = RedisReplayStore::from_url(&url)
        .unwrap()
        .with_wait(1, Duration::from_secs(2))
        .unwrap();
    let key = "https://mcp.example.com#replicated-0000000000";
    assert_eq!(durable.redeem(key, now_unix() + 60).await, Ok(true));
    assert_eq!(durable.redeem(key, now_unix() + 60).await, Ok(false));
    // Two replicas are asked for and one is there: refused, never accepted.
    let two = RedisReplayStore::from_url(&url)
        .unwrap()
        .with_wait(2, Duration::from_millis(50))
        .unwrap();
    assert!(
        two.redeem(
            "https://mcp.example.com#two-replicas-00000000",
            now_unix() + 60
        )
        .await
        .is_err()
    );
    drop((replica_server, primary_server));
    let _ = std::fs::remove_dir_all(&dir);
}
