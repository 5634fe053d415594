//! The sealer the tests share: an HS256 development ring, single use in memory, arguments required.

use std::sync::Arc;

use mrtr_state::{Keyring, MemoryReplayStore, StateSealer};

/// A sealer over a fresh development ring, as a server builds one for the boundary.
pub fn sealer() -> StateSealer {
    StateSealer::builder(Keyring::dev_hs256())
        .issuer("https://tools.example.com")
        .require_arguments(true)
        .replay_store(Arc::new(MemoryReplayStore::new()))
        .build()
        .expect("a valid sealer")
}
