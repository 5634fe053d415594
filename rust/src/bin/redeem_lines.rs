//! `mrtr-state-redeem-lines` (feature `redis`): redeems replay-store keys with one long-lived Redis
//! store, one key a line, for the failover tests in tests/replay (a store must follow a failover
//! while it runs, which a process per redemption cannot show). The line protocol of
//! go/internal/cmd/redeemlines and typescript/runtimes/redeem-lines.mjs:
//!
//! ```text
//! mrtr-state-redeem-lines --url redis://127.0.0.1:6379/0
//! mrtr-state-redeem-lines --sentinel redis://127.0.0.1:26379,redis://127.0.0.1:26380 --master NAME
//! mrtr-state-redeem-lines --cluster redis://127.0.0.1:7000,redis://127.0.0.1:7001
//!     [--timeout-ms N] [--connect-timeout-ms N] [--wait N --wait-timeout-ms N]
//! ```
//!
//! Each line of stdin is `KEY EXPIRES_AT` (the store key, `iss#jti`, and the retention's end in
//! seconds since the epoch); each answer is one line of stdout, `{"first": true|false}` or
//! `{"error": "..."}`, in the order of the lines: a line is redeemed once the one before it has its
//! answer. It ends at the end of stdin. A usage error is one `{"error": ...}` line and exit code 2.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use mrtr_state::ReplayStore;
use mrtr_state::replay::redis::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_WAIT_TIMEOUT, RedisReplayStore,
};
use serde_json::json;

const USAGE: &str = "give --url URL, --sentinel URL,... --master NAME, or --cluster URL,...; \
    and optionally --timeout-ms N, --connect-timeout-ms N, --wait N, --wait-timeout-ms N";

/// The store the arguments describe.
fn store_from(args: &[String]) -> Result<RedisReplayStore, String> {
    let mut url = None;
    let mut sentinels = None;
    let mut master = None;
    let mut cluster = None;
    let mut timeout = DEFAULT_TIMEOUT;
    let mut connect_timeout = DEFAULT_CONNECT_TIMEOUT;
    let mut wait = 0u32;
    let mut wait_timeout = DEFAULT_WAIT_TIMEOUT;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))?;
        let millis = || {
            value
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| format!("{flag} takes whole milliseconds"))
        };
        match flag.as_str() {
            "--url" => url = Some(value.clone()),
            "--sentinel" => sentinels = Some(value.clone()),
            "--master" => master = Some(value.clone()),
            "--cluster" => cluster = Some(value.clone()),
            "--timeout-ms" => timeout = millis()?,
            "--connect-timeout-ms" => connect_timeout = millis()?,
            "--wait-timeout-ms" => wait_timeout = millis()?,
            "--wait" => {
                wait = value
                    .parse()
                    .map_err(|_| "--wait takes a number of replicas".to_owned())?
            }
            _ => return Err(format!("unknown argument {flag}; {USAGE}")),
        }
    }
    let store = match (url, sentinels, master, cluster) {
        (Some(url), None, None, None) => RedisReplayStore::from_url(&url),
        (None, Some(sentinels), Some(master), None) => {
            let sentinels: Vec<&str> = sentinels.split(',').collect();
            RedisReplayStore::from_sentinel(&sentinels, &master)
        }
        (None, None, None, Some(nodes)) => {
            let nodes: Vec<&str> = nodes.split(',').collect();
            RedisReplayStore::from_cluster(&nodes)
        }
        _ => return Err(USAGE.to_owned()),
    }
    .map_err(|e| e.to_string())?;
    store
        .with_timeouts(connect_timeout, timeout)
        .with_wait(wait, wait_timeout)
        .map_err(|e| e.to_string())
}

/// The answer to one line.
async fn answer(store: &RedisReplayStore, line: &str) -> serde_json::Value {
    let mut parts = line.trim().splitn(2, ' ');
    let key = parts.next().unwrap_or_default();
    match parts.next().map(str::parse::<i64>) {
        Some(Ok(expires_at)) if !key.is_empty() => match store.redeem(key, expires_at).await {
            Ok(first) => json!({ "first": first }),
            Err(e) => json!({ "error": e.to_string() }),
        },
        _ => json!({ "error": "a line is KEY EXPIRES_AT" }),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let store = match store_from(&args) {
        Ok(store) => store,
        Err(message) => {
            println!("{}", json!({ "error": message }));
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            println!("{}", json!({ "error": format!("no runtime: {e}") }));
            return ExitCode::from(2);
        }
    };
    // stdin is read on a thread of its own, so the runtime (and the Redis client's tasks on it)
    // keeps running while the next line is awaited.
    let (lines, mut received) = tokio::sync::mpsc::channel::<String>(1);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines.blocking_send(line).is_err() {
                break;
            }
        }
    });
    runtime.block_on(async {
        let mut stdout = std::io::stdout().lock();
        while let Some(line) = received.recv().await {
            let answer = answer(&store, &line).await;
            if writeln!(stdout, "{answer}")
                .and_then(|()| stdout.flush())
                .is_err()
            {
                break;
            }
        }
    });
    ExitCode::SUCCESS
}
