//! Keys and key rings (profile section 7): loading JWKs and JWKS with every rule of the profile,
//! the environment variable and key file sources, and the public JWKS.

mod edwards;
mod file;
mod key;
mod ring;

pub use file::{KeyFileOptions, MAX_KEY_FILE_BYTES};
pub use key::{Key, KeyKind, MIN_SECRET_BYTES};
pub use ring::{DEFAULT_KEYS_VARIABLE, Keyring};
