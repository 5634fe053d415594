//! `mrtr-state-counted`: the loops that `benchmarks/bench_counted_rust.py` counts under valgrind's
//! callgrind, so that the cost of `seal` and `open` is a count of instructions, which does not move
//! with the machine's load, rather than a time, which does.
//!
//! It builds the sealers of `benches/seal_open.rs` (the keys of spec/vectors/keys.json: HS256,
//! EdDSA and A256GCM, each bound to the user, the tool and the arguments' digest) and the states of
//! `benchmarks/_harness.py` (200 B, 2 KiB and 5.5 KiB of state JSON), checks that every token opens
//! to its state, warms each operation up, and then runs each one `calls` times through one call of
//! `counted_loop`, first with an empty operation. The driver runs it with
//! `--collect-atstart=no --toggle-collect='*::counted_loop' --dump-after='*::counted_loop'`: callgrind
//! counts only inside those calls and writes one dump per call; the driver subtracts the empty
//! loop's count and divides by `calls`. The last line of standard output is the JSON list of the
//! loops in the order they ran.
//!
//! Usage: `mrtr-state-counted [CALLS]` (default 50). Without callgrind it just runs the loops.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

use aes_gcm::aead::{AeadInOut, Nonce};
use aes_gcm::{Aes256Gcm, KeyInit};
use mrtr_state::binding::arguments_digest;
use mrtr_state::keys::KeyKind;
use mrtr_state::token::{b64, claims, jws};
use mrtr_state::{Keyring, StateSealer, Target, Value};
use serde_json::json;

const ISSUER: &str = "https://files.example.com";
const USER: &str = "alice";
const TOOL: &str = "deploy";
const TTL: u64 = 3600;
/// The sealers' clock (2026-01-01T00:00:00Z): a token's `iat`, and so its length, never moves.
const NOW: i64 = 1_767_225_600;
/// The `jti` of the tokens the open loops verify (22 base64url characters, 128 bits).
const FIXED_JTI: &str = "AAECAwQFBgcICQoLDA0ODw";
/// The IV of the encrypted token the open loop verifies. A minter never reuses an IV (the crate
/// draws a fresh one for every token); this one only makes the verified bytes the same on every run.
const FIXED_IV: [u8; 12] = [7; 12];
/// The state sizes, named as in benchmarks/bench_counted.py.
const SIZES: [(&str, usize); 3] = [("200 B", 200), ("2 KiB", 2048), ("5.5 KiB", 5632)];
/// Calls before counting, so that first-call costs (lazy statics, the allocator's first chunks)
/// are not counted.
const WARMUP: u32 = 5;

/// Runs `op` `calls` times. Callgrind counts only inside this function (the driver toggles
/// collection on its name), so it must stay a function of its own.
#[inline(never)]
fn counted_loop(op: &mut dyn FnMut(), calls: u32) {
    for _ in 0..calls {
        op();
    }
}

fn items(state: &mut Value) -> Result<&mut Vec<Value>, String> {
    state["items"]
        .as_array_mut()
        .ok_or_else(|| "items is not an array".to_string())
}

/// benchmarks/_harness.py's `make_state`, as in benches/seal_open.rs: a plan, the answers so far
/// and a list of items, padded to exactly `size` bytes of compact JSON.
fn make_state(size: usize) -> Result<Value, String> {
    let mut state = json!({
        "step": 2,
        "plan": {"env": "prod", "branch": "release-1.2", "replicas": 3, "dry_run": false},
        "asked": ["confirm"],
        "items": [],
        "note": "",
    });
    let len = |state: &Value| serde_json::to_vec(state).map(|text| text.len());
    for i in 0.. {
        let item = json!({
            "id": i,
            "path": format!("/srv/app/releases/file-{i:04}.tar.gz"),
            "bytes": 1200 + 37 * i,
            "ok": true,
        });
        items(&mut state)?.push(item);
        if len(&state).map_err(|e| e.to_string())? > size {
            items(&mut state)?.pop();
            break;
        }
    }
    let pad = size
        .checked_sub(len(&state).map_err(|e| e.to_string())?)
        .ok_or("the state's skeleton is larger than the size")?;
    state["note"] = Value::String("n".repeat(pad));
    Ok(state)
}

/// One sealer per form, on the keys of spec/vectors/keys.json.
fn sealers() -> Result<Vec<(&'static str, StateSealer)>, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors/keys.json");
    let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let keys: Value = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
    let mut sealers = Vec::new();
    for (name, jwk) in [
        ("HS256", "hs256"),
        ("EdDSA", "eddsa"),
        ("A256GCM", "a256gcm"),
    ] {
        let ring = Keyring::from_jwks_value(&json!({"keys": [keys[jwk]]}))
            .map_err(|e| format!("{jwk}: {e}"))?;
        let sealer = StateSealer::builder(ring)
            .issuer(ISSUER)
            .ttl(Duration::from_secs(TTL))
            .max_lifetime(Duration::from_secs(TTL))
            .clock(|| NOW)
            .build()
            .map_err(|e| format!("{jwk}: {e}"))?;
        sealers.push((name, sealer));
    }
    Ok(sealers)
}

/// The token the open loop verifies: the one `seal` writes, but with a fixed `jti` (and, encrypted,
/// a fixed IV), so that its bytes, and so the count of an EdDSA verification, whose instructions
/// depend on the signature, are the same on every run. Built with the crate's own claims encoder
/// and signer; the encrypted form as `token::jwe::encrypt` builds it.
fn token_to_open(
    sealer: &StateSealer,
    state: &Value,
    target: &Target,
    args: &Value,
) -> Result<String, String> {
    let digest = arguments_digest(Some(args)).map_err(|e| e.to_string())?;
    let claims_json = claims::encode(&claims::NewClaims {
        issuer: ISSUER,
        user: USER,
        audience: &target.audience(),
        issued_at: NOW,
        expires_at: NOW + TTL as i64,
        jti: FIXED_JTI,
        args_sha256: Some(&digest),
        state,
    });
    let ring = sealer.keyring();
    let key = ring.first();
    let KeyKind::A256Gcm { key: secret } = key.kind() else {
        return jws::sign(key, claims_json.as_bytes()).ok_or_else(|| "the key cannot sign".into());
    };
    let header = json!({"alg": "dir", "enc": "A256GCM", "typ": "mrtr-state+jwt", "kid": key.kid()});
    let header_segment = b64::encode(header.to_string().as_bytes());
    let nonce = Nonce::<Aes256Gcm>::from(FIXED_IV);
    let cipher = Aes256Gcm::new_from_slice(secret).map_err(|e| e.to_string())?;
    let mut buffer = claims_json.into_bytes();
    let tag = cipher
        .encrypt_inout_detached(
            &nonce,
            header_segment.as_bytes(),
            buffer.as_mut_slice().into(),
        )
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{header_segment}..{}.{}.{}",
        b64::encode(&FIXED_IV),
        b64::encode(&buffer),
        b64::encode(&tag)
    ))
}

fn run(calls: u32) -> Result<Vec<Value>, String> {
    let sealers = sealers()?;
    let target = Target::Tool(TOOL.into());
    let args = json!({"env": "prod", "branch": "release-1.2"});
    let mut order = Vec::new();
    // An operation that fails inside a loop would be counting a refusal: the run fails instead.
    let mut failures = 0u32;
    let mut count = |size: &str, row: String, op: &mut dyn FnMut()| {
        for _ in 0..WARMUP {
            op();
        }
        counted_loop(op, calls);
        order.push(json!({"size": size, "row": row}));
    };
    count("", "empty".into(), &mut || {});
    for (size_name, size) in SIZES {
        let state = make_state(size)?;
        for (alg, sealer) in &sealers {
            let token = token_to_open(sealer, &state, &target, &args)
                .map_err(|e| format!("token {alg} {size_name}: {e}"))?;
            sealer
                .seal(&state, USER, &target, Some(&args))
                .map_err(|e| format!("seal {alg} {size_name}: {e}"))?;
            let opened = sealer
                .open_unconsumed(&token, USER, &target, Some(&args))
                .map_err(|e| format!("open {alg} {size_name}: {e}"))?;
            if opened != state {
                return Err(format!("open {alg} {size_name}: not the state sealed"));
            }
            count(
                size_name,
                format!("open: mrtr_state {alg} + argument digest"),
                &mut || {
                    let opened =
                        sealer.open_unconsumed(black_box(&token), USER, &target, Some(&args));
                    failures += u32::from(black_box(opened).is_err());
                },
            );
            count(
                size_name,
                format!("seal: mrtr_state {alg} + argument digest"),
                &mut || {
                    let sealed = sealer.seal(black_box(&state), USER, &target, Some(&args));
                    failures += u32::from(black_box(sealed).is_err());
                },
            );
        }
    }
    if failures > 0 {
        return Err(format!(
            "{failures} operations failed inside the counted loops"
        ));
    }
    Ok(order)
}

fn main() -> ExitCode {
    let calls = match std::env::args().nth(1).map(|arg| arg.parse::<u32>()) {
        None => 50,
        Some(Ok(calls)) if calls > 0 => calls,
        Some(_) => {
            eprintln!("usage: mrtr-state-counted [CALLS], CALLS a positive integer");
            return ExitCode::from(2);
        }
    };
    match run(calls) {
        Ok(order) => {
            println!("{}", Value::Array(order));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mrtr-state-counted: {e}");
            ExitCode::FAILURE
        }
    }
}
