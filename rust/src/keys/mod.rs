//! Keys and key rings (profile section 7): loading JWKs and JWKS with every rule of the profile,
//! the environment variable and key file sources, a key ring that follows its file, and the public JWKS.

mod edwards;
mod file;
mod key;
mod reloading;
mod ring;
mod source;

pub use file::{KeyFileOptions, MAX_KEY_FILE_BYTES};
pub use key::{Key, KeyKind, MIN_SECRET_BYTES};
pub use reloading::{
    DEFAULT_CHECK_INTERVAL, DEFAULT_FILE_COOLDOWN, ReloadingKeyring, ReloadingOptions,
};
pub use ring::{DEFAULT_KEYS_VARIABLE, Keyring};
pub use source::KeySource;
