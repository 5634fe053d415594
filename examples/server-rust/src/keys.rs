//! The example's key ring and sealer: `MRTR_STATE_KEYS_FILE`, else `MRTR_STATE_KEYS`, or with `--dev-key`
//! an ephemeral key made here; the sealer redeems single-use states in Redis (`--redis-url`) or in this
//! process's memory.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::SigningKey;
use mrtr_state::keys::DEFAULT_KEYS_VARIABLE;
use mrtr_state::replay::redis::RedisReplayStore;
use mrtr_state::{Keyring, MemoryReplayStore, ReplayStore, StateSealer};
use serde_json::json;
use zeroize::Zeroizing;

/// The variable naming a key file, as the other examples read it.
const KEYS_FILE_VARIABLE: &str = "MRTR_STATE_KEYS_FILE";

/// The ring the server seals and opens with.
#[derive(Clone)]
pub struct Source {
    ring: Arc<Keyring>,
}

impl Source {
    /// The public JWKS document of the ring, or `None` when it holds no public key (secrets only,
    /// which are never published).
    pub fn public_jwks(&self) -> Option<String> {
        let document = self.ring.public_jwks();
        let empty = document["keys"].as_array().is_none_or(Vec::is_empty);
        (!empty).then(|| document.to_string())
    }
}

fn random_32() -> Result<Zeroizing<[u8; 32]>, String> {
    let mut bytes = Zeroizing::new([0u8; 32]);
    getrandom::fill(bytes.as_mut_slice()).map_err(|_| "the OS random source failed".to_owned())?;
    Ok(bytes)
}

/// A ring of one new key of `alg`, made here and held only by this process. (The JWK text it passes
/// through is dropped at once; the ring keeps the key material zeroized on drop.)
fn ephemeral(alg: &str) -> Result<Keyring, String> {
    let jwk = match alg {
        "HS256" => return Ok(Keyring::dev_hs256()),
        "EdDSA" => {
            let seed = random_32()?;
            let signing = SigningKey::from_bytes(&seed);
            json!({
                "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig",
                "d": URL_SAFE_NO_PAD.encode(seed.as_slice()),
                "x": URL_SAFE_NO_PAD.encode(signing.verifying_key().as_bytes()),
            })
        }
        "A256GCM" => {
            let key = random_32()?;
            json!({"kty": "oct", "alg": "A256GCM", "use": "enc", "k": URL_SAFE_NO_PAD.encode(key.as_slice())})
        }
        other => {
            return Err(format!(
                "--dev-key-alg must be EdDSA, HS256 or A256GCM, not {other:?}"
            ));
        }
    };
    Keyring::from_jwks_value(&json!({"keys": [jwk]})).map_err(|error| error.to_string())
}

/// The ring: an ephemeral development key of `dev_key_alg`, else the key file named by
/// `MRTR_STATE_KEYS_FILE`, else `MRTR_STATE_KEYS`.
pub fn load(dev_key_alg: Option<&str>) -> Result<Source, String> {
    let ring = match dev_key_alg {
        Some(alg) => {
            eprintln!(
                "example server: WARNING: --dev-key: sealing with an EPHEMERAL key generated now. Every requestState \
                 dies with this process and no other replica can open it. Development only; set MRTR_STATE_KEYS for \
                 anything else."
            );
            ephemeral(alg)?
        }
        None => match std::env::var_os(KEYS_FILE_VARIABLE) {
            Some(path) => Keyring::from_file(path).map_err(|error| error.to_string())?,
            None => Keyring::from_env(DEFAULT_KEYS_VARIABLE).map_err(|error| error.to_string())?,
        },
    };
    Ok(Source {
        ring: Arc::new(ring),
    })
}

/// The sealer over the ring: states live `ttl`, a presented state may have lived up to the default 600 s
/// (or `ttl`, when longer), a state without the argument binding is refused (as every example's boundary
/// does), and single-use states are redeemed in the Redis at `redis_url` (shared with the other
/// replicas, in any language), else in this process's memory.
pub fn sealer(
    source: &Source,
    issuer: &str,
    ttl: Duration,
    redis_url: Option<&str>,
) -> Result<StateSealer, String> {
    let store: Arc<dyn ReplayStore> = match redis_url {
        Some(url) => Arc::new(
            RedisReplayStore::from_url(url).map_err(|error| format!("--redis-url: {error}"))?,
        ),
        None => Arc::new(MemoryReplayStore::new()),
    };
    StateSealer::builder(Arc::clone(&source.ring))
        .issuer(issuer)
        .ttl(ttl)
        .max_lifetime(ttl.max(Duration::from_secs(crate::DEFAULT_TTL)))
        .require_arguments(true)
        .replay_store(store)
        .build()
        .map_err(|error| error.to_string())
}
