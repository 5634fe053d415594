//! Where a sealer gets its keys: a fixed ring, or a source that may change them (a key file that is
//! reread when it changes, a JWKS fetched from a URL).

use std::fmt;
use std::sync::Arc;

use super::ring::Keyring;

/// A provider of the keys of the moment. The sealer asks for them on every seal and every open, so
/// `keyring` must be cheap and must never block on I/O (a source that rereads a file does it at most
/// once per interval, and never waits for a look another thread is making). `Debug` must show no
/// key material.
pub trait KeySource: Send + Sync + fmt::Debug {
    /// The keys to use now.
    fn keyring(&self) -> Arc<Keyring>;

    /// Called when a token names a `kid` the keys do not hold: look for new keys at once (within
    /// the source's own limits) and tell whether new keys were loaded, so the sealer reads the
    /// token again. A fixed ring never has new keys (the default).
    fn refresh_for_unknown_key(&self) -> bool {
        false
    }
}

/// A fixed ring: always the same keys.
impl KeySource for Arc<Keyring> {
    fn keyring(&self) -> Arc<Keyring> {
        Arc::clone(self)
    }
}
