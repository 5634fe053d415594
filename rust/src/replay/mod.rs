//! Single use (profile 5, step 20, and 9.5): the replay store interface and the memory store.

#[cfg(feature = "redis")]
pub mod redis;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::errors::ReplayStoreError;

/// The future a store's `redeem` returns.
pub type RedeemFuture<'a> =
    Pin<Box<dyn Future<Output = Result<bool, ReplayStoreError>> + Send + 'a>>;

/// A replay store: records a token id once, atomically. The sealer passes the token's `iss` and
/// `jti` joined by `#` (profile 9.5), never the token text, and the time until which the record
/// must be kept (`exp + 2 × leeway`, by the verifier's clock).
pub trait ReplayStore: Send + Sync {
    /// Records `jti` until `expires_at_unix` (seconds since the epoch). `Ok(true)` for the first
    /// redemption, `Ok(false)` when it was already recorded, `Err` when the store gives no known
    /// answer (the sealer then refuses with `store_unavailable`, never accepts).
    fn redeem<'a>(&'a self, jti: &'a str, expires_at_unix: i64) -> RedeemFuture<'a>;
}

/// A replay store in this process's memory: for one replica, or tests. Replicas that share tokens
/// must share a store (profile 9.5); this one is lost on restart.
pub struct MemoryReplayStore {
    entries: Mutex<HashMap<String, i64>>,
    max_entries: usize,
    clock: Box<dyn Fn() -> i64 + Send + Sync>,
}

impl std::fmt::Debug for MemoryReplayStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryReplayStore")
            .field("max_entries", &self.max_entries)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryReplayStore {
    fn default() -> Self {
        MemoryReplayStore::new()
    }
}

impl MemoryReplayStore {
    /// A store of at most 1,000,000 live entries, on the system clock.
    pub fn new() -> Self {
        MemoryReplayStore::with_limit(1_000_000)
    }

    /// A store of at most `max_entries` live entries; when full (after dropping expired ones) it
    /// answers with an error, so the sealer refuses `store_unavailable` rather than forget.
    pub fn with_limit(max_entries: usize) -> Self {
        MemoryReplayStore {
            entries: Mutex::new(HashMap::new()),
            max_entries,
            clock: Box::new(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs() as i64)
                    .unwrap_or(0)
            }),
        }
    }

    /// The same store with another clock (seconds since the epoch), to expire entries in tests.
    pub fn with_clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// The number of entries held (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether the store holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn redeem_now(&self, key: &str, expires_at: i64) -> Result<bool, ReplayStoreError> {
        let mut entries = self
            .entries
            .lock()
            .map_err(|_| ReplayStoreError::new("the memory store's lock is poisoned"))?;
        // A recorded key is refused for as long as it is held, whatever this store's clock says:
        // the expiry was computed on the verifier's clock (profile 9.5), and only sweeping uses ours.
        if entries.contains_key(key) {
            return Ok(false);
        }
        if entries.len() >= self.max_entries || entries.len() % 1024 == 1023 {
            let now = (self.clock)();
            entries.retain(|_, &mut until| until > now);
            if entries.len() >= self.max_entries {
                return Err(ReplayStoreError::new("the memory store is full"));
            }
        }
        entries.insert(key.to_owned(), expires_at);
        Ok(true)
    }
}

impl ReplayStore for MemoryReplayStore {
    fn redeem<'a>(&'a self, jti: &'a str, expires_at_unix: i64) -> RedeemFuture<'a> {
        let outcome = self.redeem_now(jti, expires_at_unix);
        Box::pin(async move { outcome })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn redeems_once_until_expiry() {
        let now = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(100));
        let clock = now.clone();
        let store = MemoryReplayStore::with_limit(2)
            .with_clock(move || clock.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(store.redeem("a#1", 200).await, Ok(true));
        assert_eq!(store.redeem("a#1", 200).await, Ok(false));
        assert_eq!(store.redeem("a#2", 150).await, Ok(true));
        assert!(store.redeem("a#3", 200).await.is_err(), "full");
        now.store(160, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            store.redeem("a#3", 200).await,
            Ok(true),
            "the expired entry made room"
        );
        assert_eq!(store.redeem("a#1", 200).await, Ok(false));
    }
}
