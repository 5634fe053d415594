//! Seal and open, HS256 with the argument digest, at the three state sizes of the other languages'
//! benchmarks (200 B, 2 KiB and 5.5 KiB of state JSON; benchmarks/_harness.py's `make_state`), for
//! this crate's `StateSealer` next to what a Rust author would otherwise use (docs/benchmarks.md,
//! "Rust"):
//!
//! - `mrtr-state`: `StateSealer::seal` and `open_unconsumed` (every step of profile section 5 but
//!   the replay store), bound to the user, the tool and the arguments (`args_sha256`); EdDSA and
//!   A256GCM at 2 KiB as well;
//! - `jsonwebtoken`: `encode` of the same claims (header `typ` and `kid`, no argument digest: it has
//!   none), and `decode` of the very token `mrtr-state` minted with `iss`, `sub`, `aud` and `exp`
//!   required and checked, `typ` compared by hand;
//! - `rmcp-codec`: rmcp's `RequestStateCodec` (`rs2`, one key), the state as JSON, the associated
//!   data built by the caller as its docs say (user, audience and the arguments' RFC 8785 digest,
//!   computed on every call), a one-hour TTL.
//!
//! Every candidate round-trips once before it is timed (a panic otherwise). Run with
//! `cargo bench --bench seal_open -- --warm-up-time 1 --measurement-time 3`; a filter such as
//! `/jsonwebtoken$` runs one candidate (docs/benchmarks.md gives the interleaved rounds).

use std::hint::black_box;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mrtr_state::binding::arguments_digest;
use mrtr_state::{Keyring, StateSealer, Target, Value};
use rmcp::model::{RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::json;

const ISSUER: &str = "https://files.example.com";
const USER: &str = "alice";
const TOOL: &str = "deploy";
const AUD: &str = "tools/call:deploy";
const TTL: u64 = 3600;
const TYP: &str = "mrtr-state+jwt";
const SIZES: [(&str, usize); 3] = [("200B", 200), ("2KiB", 2048), ("5.5KiB", 5632)];

fn arguments() -> Value {
    json!({"env": "prod", "branch": "release-1.2"})
}

/// benchmarks/_harness.py's `make_state`: a plan, the answers so far and a list of items, padded
/// to exactly `size` bytes of compact JSON.
fn make_state(size: usize) -> Value {
    let mut state = json!({
        "step": 2,
        "plan": {"env": "prod", "branch": "release-1.2", "replicas": 3, "dry_run": false},
        "asked": ["confirm"],
        "items": [],
        "note": "",
    });
    let len = |state: &Value| serde_json::to_vec(state).unwrap().len();
    for i in 0.. {
        let item = json!({
            "id": i,
            "path": format!("/srv/app/releases/file-{i:04}.tar.gz"),
            "bytes": 1200 + 37 * i,
            "ok": true,
        });
        state["items"].as_array_mut().unwrap().push(item);
        if len(&state) > size {
            state["items"].as_array_mut().unwrap().pop();
            break;
        }
    }
    let pad = size - len(&state);
    state["note"] = Value::String("n".repeat(pad));
    assert_eq!(len(&state), size);
    state
}

fn vector_keys() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors/keys.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn sealer(jwk: &Value) -> StateSealer {
    let ring = Keyring::from_jwks_value(&json!({"keys": [jwk]})).unwrap();
    StateSealer::builder(ring)
        .issuer(ISSUER)
        .ttl(Duration::from_secs(TTL))
        .max_lifetime(Duration::from_secs(TTL))
        .build()
        .unwrap()
}

#[derive(Serialize, Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    aud: String,
    iat: u64,
    exp: u64,
    jti: String,
    state: Value,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

struct Jwt {
    header: Header,
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl Jwt {
    fn new(secret: &[u8], kid: &str) -> Jwt {
        let mut header = Header::new(Algorithm::HS256);
        header.typ = Some(TYP.into());
        header.kid = Some(kid.into());
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUD]);
        validation.sub = Some(USER.into());
        validation.leeway = 0;
        validation.set_required_spec_claims(&["iss", "sub", "aud", "exp"]);
        Jwt {
            header,
            encoding: EncodingKey::from_secret(secret).unwrap(),
            decoding: DecodingKey::from_secret(secret).unwrap(),
            validation,
        }
    }

    fn seal(&self, state: &Value) -> String {
        let mut random = [0u8; 16];
        getrandom::fill(&mut random).unwrap();
        let iat = now();
        let claims = Claims {
            iss: ISSUER.into(),
            sub: USER.into(),
            aud: AUD.into(),
            iat,
            exp: iat + TTL,
            jti: URL_SAFE_NO_PAD.encode(random),
            state: state.clone(),
        };
        jsonwebtoken::encode(&self.header, &claims, &self.encoding).unwrap()
    }

    fn open(&self, token: &str) -> Value {
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).unwrap();
        assert_eq!(data.header.typ.as_deref(), Some(TYP));
        data.claims.state
    }
}

struct Codec {
    codec: RequestStateCodec,
}

impl Codec {
    /// The associated data rmcp's docs ask the caller to build: who, what, and the arguments'
    /// digest (rmcp has no digest of its own; this crate's RFC 8785 one is used).
    fn associated_data(arguments: &Value) -> Vec<u8> {
        let digest = arguments_digest(Some(arguments)).unwrap();
        let mut data = Vec::with_capacity(USER.len() + AUD.len() + digest.len() + 2);
        data.extend_from_slice(USER.as_bytes());
        data.push(0);
        data.extend_from_slice(AUD.as_bytes());
        data.push(0);
        data.extend_from_slice(digest.as_bytes());
        data
    }

    fn seal(&self, state: &Value, arguments: &Value) -> String {
        let data = Self::associated_data(arguments);
        let options = SealOptions::new()
            .associated_data(&data)
            .ttl(Duration::from_secs(TTL));
        self.codec.seal_json_with(state, &options).unwrap()
    }

    fn open(&self, token: &str, arguments: &Value) -> Value {
        let data = Self::associated_data(arguments);
        self.codec.open_json_with(token, &data).unwrap()
    }
}

fn benches(c: &mut Criterion) {
    let keys = vector_keys();
    let hs256 = &keys["hs256"];
    let secret = URL_SAFE_NO_PAD
        .decode(hs256["k"].as_str().unwrap())
        .unwrap();
    let kid = hs256["kid"].as_str().unwrap();
    let mrtr_hs = sealer(hs256);
    let mrtr_ed = sealer(&keys["eddsa"]);
    let mrtr_enc = sealer(&keys["a256gcm"]);
    let jwt = Jwt::new(&secret, kid);
    let codec = Codec {
        codec: RequestStateCodec::new_with_keyring(kid, [(kid, secret.as_slice())]).unwrap(),
    };
    let target = Target::Tool(TOOL.into());
    let args = arguments();

    for (name, size) in SIZES {
        let state = make_state(size);

        // Each candidate round-trips once before it is timed.
        let token = mrtr_hs.seal(&state, USER, &target, Some(&args)).unwrap();
        assert_eq!(
            mrtr_hs
                .open_unconsumed(&token, USER, &target, Some(&args))
                .unwrap(),
            state
        );
        // jsonwebtoken opens the very token mrtr-state minted (args_sha256 is a claim it ignores).
        assert_eq!(jwt.open(&token), state);
        assert_eq!(jwt.open(&jwt.seal(&state)), state);
        let rmcp_token = codec.seal(&state, &args);
        assert_eq!(codec.open(&rmcp_token, &args), state);

        let mut group = c.benchmark_group(format!("seal/HS256/{name}"));
        group.bench_function("mrtr-state", |b| {
            b.iter(|| {
                mrtr_hs
                    .seal(black_box(&state), USER, &target, Some(&args))
                    .unwrap()
            })
        });
        group.bench_function("jsonwebtoken", |b| b.iter(|| jwt.seal(black_box(&state))));
        group.bench_function("rmcp-codec", |b| {
            b.iter(|| codec.seal(black_box(&state), &args))
        });
        group.finish();

        let mut group = c.benchmark_group(format!("open/HS256/{name}"));
        group.bench_function("mrtr-state", |b| {
            b.iter(|| {
                mrtr_hs
                    .open_unconsumed(black_box(&token), USER, &target, Some(&args))
                    .unwrap()
            })
        });
        group.bench_function("jsonwebtoken", |b| b.iter(|| jwt.open(black_box(&token))));
        group.bench_function("rmcp-codec", |b| {
            b.iter(|| codec.open(black_box(&rmcp_token), &args))
        });
        group.finish();
    }

    // The other two forms of this crate, at 2 KiB (no peer row: jsonwebtoken has no JWE, and rmcp's
    // codec neither signs with a public key nor encrypts).
    let state = make_state(2048);
    for (alg, sealer) in [("EdDSA", &mrtr_ed), ("A256GCM", &mrtr_enc)] {
        let token = sealer.seal(&state, USER, &target, Some(&args)).unwrap();
        assert_eq!(
            sealer
                .open_unconsumed(&token, USER, &target, Some(&args))
                .unwrap(),
            state
        );
        c.bench_function(&format!("seal/{alg}/2KiB/mrtr-state"), |b| {
            b.iter(|| {
                sealer
                    .seal(black_box(&state), USER, &target, Some(&args))
                    .unwrap()
            })
        });
        c.bench_function(&format!("open/{alg}/2KiB/mrtr-state"), |b| {
            b.iter(|| {
                sealer
                    .open_unconsumed(black_box(&token), USER, &target, Some(&args))
                    .unwrap()
            })
        });
    }
}

criterion_group!(seal_open, benches);
criterion_main!(seal_open);
