//! Keys and key rings (profile section 7): loading JWKs and JWKS with every rule of the profile,
//! the environment variable and key file sources, a key ring that follows its file, a published JWKS
//! read from a URL (feature `remote-jwks`), and the public JWKS.

mod edwards;
mod file;
mod key;
mod reloading;
#[cfg(feature = "remote-jwks")]
mod remote;
mod ring;
mod source;

pub use file::{KeyFileOptions, MAX_KEY_FILE_BYTES};
pub use key::{Key, KeyKind, MIN_SECRET_BYTES};
pub use reloading::{
    DEFAULT_CHECK_INTERVAL, DEFAULT_FILE_COOLDOWN, ReloadingKeyring, ReloadingOptions,
};
#[cfg(feature = "remote-jwks")]
pub use remote::{
    DEFAULT_FETCH_TIMEOUT, DEFAULT_MAX_JWKS_BYTES, DEFAULT_REFRESH_INTERVAL,
    DEFAULT_REMOTE_COOLDOWN, RemoteClock, RemoteJwks, RemoteJwksOptions, check_jwks_url,
};
pub use ring::{DEFAULT_KEYS_VARIABLE, Keyring};
pub use source::KeySource;
