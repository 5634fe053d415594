//! The peer rows of the counted benchmark (`benchmarks/bench_counted_rust.py --peers`):
//! jsonwebtoken's `decode` and `encode`, HS256, at the three state sizes, in loops counted by
//! callgrind exactly as `src/bin/counted.rs` counts the crate's (one call of `counted_loop` per
//! row, an empty loop first). A bench target, not a binary, because jsonwebtoken is a
//! dev-dependency; it is built only when the driver is asked for the peers (`cargo bench --no-run`),
//! never in CI.
//!
//! `decode` opens the very token `mrtr-state` mints (HS256, the key of spec/vectors/keys.json, a
//! fixed `jti`, the argument digest, which jsonwebtoken ignores), with `iss`, `sub`, `aud` and `exp`
//! required and checked and `typ` compared by hand, as in `benches/seal_open.rs`; `encode` writes the
//! same claims (header `typ` and `kid`). The last line of standard output is the JSON list of the
//! loops in the order they ran.

use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use mrtr_state::binding::arguments_digest;
use mrtr_state::keys::Keyring;
use mrtr_state::token::{claims, jws};
use mrtr_state::{Target, Value};
use serde::{Deserialize, Serialize};
use serde_json::json;

const ISSUER: &str = "https://files.example.com";
const USER: &str = "alice";
const AUD: &str = "tools/call:deploy";
const TYP: &str = "mrtr-state+jwt";
const TTL: i64 = 3600;
const FIXED_JTI: &str = "AAECAwQFBgcICQoLDA0ODw";
const SIZES: [(&str, usize); 3] = [("200 B", 200), ("2 KiB", 2048), ("5.5 KiB", 5632)];
const WARMUP: u32 = 5;

#[derive(Serialize, Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    aud: String,
    iat: i64,
    exp: i64,
    jti: String,
    state: Value,
}

/// Runs `op` `calls` times; callgrind counts only inside this function.
#[inline(never)]
fn counted_loop(op: &mut dyn FnMut(), calls: u32) {
    for _ in 0..calls {
        op();
    }
}

/// benchmarks/_harness.py's `make_state`, as in benches/seal_open.rs.
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
    state
}

fn main() {
    let calls: u32 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .filter(|&calls| calls > 0)
        .unwrap_or(50);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors/keys.json");
    let keys: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let hs256 = &keys["hs256"];
    let secret = URL_SAFE_NO_PAD
        .decode(hs256["k"].as_str().unwrap())
        .unwrap();
    let kid = hs256["kid"].as_str().unwrap();
    let ring = Keyring::from_jwks_value(&json!({"keys": [hs256]})).unwrap();
    let mut header = Header::new(Algorithm::HS256);
    header.typ = Some(TYP.into());
    header.kid = Some(kid.into());
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_issuer(&[ISSUER]);
    validation.set_audience(&[AUD]);
    validation.sub = Some(USER.into());
    validation.leeway = 0;
    validation.set_required_spec_claims(&["iss", "sub", "aud", "exp"]);
    let encoding = EncodingKey::from_secret(&secret).unwrap();
    let decoding = DecodingKey::from_secret(&secret).unwrap();
    // jsonwebtoken checks exp against the system clock: the tokens are minted now (the digits of a
    // timestamp do not change their count).
    let now = i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    let args = json!({"env": "prod", "branch": "release-1.2"});
    let digest = arguments_digest(Some(&args)).unwrap();
    let audience = Target::Tool("deploy".into()).audience();

    let mut order = Vec::new();
    let mut count = |size: &str, row: &str, op: &mut dyn FnMut()| {
        for _ in 0..WARMUP {
            op();
        }
        counted_loop(op, calls);
        order.push(json!({"size": size, "row": row}));
    };
    count("", "empty", &mut || {});
    for (size_name, size) in SIZES {
        let state = make_state(size);
        let claims_json = claims::encode(&claims::NewClaims {
            issuer: ISSUER,
            user: USER,
            audience: &audience,
            issued_at: now,
            expires_at: now + TTL,
            jti: FIXED_JTI,
            args_sha256: Some(&digest),
            state: &state,
        });
        let token = jws::sign(ring.first(), claims_json.as_bytes()).unwrap();
        let open = || {
            let data = jsonwebtoken::decode::<Claims>(&token, &decoding, &validation).unwrap();
            assert_eq!(data.header.typ.as_deref(), Some(TYP));
            data.claims.state
        };
        assert_eq!(open(), state);
        count(size_name, "open: jsonwebtoken HS256", &mut || {
            black_box(open());
        });
        let new_claims = Claims {
            iss: ISSUER.into(),
            sub: USER.into(),
            aud: AUD.into(),
            iat: now,
            exp: now + TTL,
            jti: FIXED_JTI.into(),
            state: state.clone(),
        };
        count(size_name, "seal: jsonwebtoken HS256", &mut || {
            black_box(jsonwebtoken::encode(&header, black_box(&new_claims), &encoding).unwrap());
        });
    }
    println!("{}", Value::Array(order));
}
