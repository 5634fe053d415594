//! Bounded property tests, seeded from the vectors (the count is bounded: MRTR_PROPERTY_CASES,
//! default 4000 per property; the seed: MRTR_PROPERTY_SEED, default fixed, printed on failure).
//!
//! 1. open: every valid token of tokens.json and encrypted.json, changed by one character (changed,
//!    deleted or inserted), is refused with a reason code of the profile, by the public sealer and by
//!    the adapter alike, and never panics: the encodings are canonical, so no other text opens.
//! 2. the strict reader: JSON texts from the vectors (headers, claim sets, arguments), changed at
//!    random, are read exactly when serde_json (the oracle) reads them, apart from what the profile
//!    reads differently on purpose (lone surrogates, numbers beyond a double, depth), and to the same value.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mrtr_state::token::{b64, json};
use mrtr_state::{Keyring, Reason, StateSealer, Target, Value};
use serde_json::json;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn read(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../spec/vectors")
        .join(name);
    json::read(&std::fs::read(path).unwrap(), 4096).unwrap().0
}

fn target_of(vector: &Value) -> Target {
    if let Some(t) = vector["tool"].as_str() {
        return Target::Tool(t.into());
    }
    if let Some(p) = vector["prompt"].as_str() {
        return Target::Prompt(p.into());
    }
    Target::Resource(vector["resource"].as_str().unwrap().into())
}

const TOKEN_ALPHABET: &[u8] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ";

fn mutate(text: &[u8], alphabet: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = text.to_vec();
    let at = rng.below(out.len() + 1);
    let byte = alphabet[rng.below(alphabet.len())];
    match rng.below(3) {
        0 if at < out.len() => out[at] = byte,
        1 if at < out.len() => {
            out.remove(at);
        }
        _ => out.insert(at, byte),
    }
    out
}

#[test]
fn changed_tokens_never_open() {
    let cases = setting("MRTR_PROPERTY_CASES", 4000);
    let seed = setting("MRTR_PROPERTY_SEED", 0x6d72_7472);
    let mut rng = Rng(seed | 1);
    let keys = read("keys.json");
    let mut valid = Vec::new();
    for (file, ring) in [
        ("tokens.json", "verifier_jwks"),
        ("encrypted.json", "encrypted_verifier_jwks"),
    ] {
        let file = read(file);
        let ring = Arc::new(Keyring::from_jwks_value(&keys[ring]).unwrap());
        for vector in file["vectors"].as_array().unwrap() {
            if vector["expected"]["valid"] == json!(true) {
                valid.push((ring.clone(), vector.clone(), file["defaults"].clone()));
            }
        }
    }
    assert!(valid.len() > 10, "valid vectors found: {}", valid.len());
    for case in 0..cases {
        let (ring, vector, defaults) = &valid[rng.below(valid.len())];
        let token = vector["token"].as_str().unwrap();
        let changed = mutate(token.as_bytes(), TOKEN_ALPHABET, &mut rng);
        if changed == token.as_bytes() {
            continue;
        }
        let changed = String::from_utf8(changed).unwrap();
        let setting = |n: &str| vector.get(n).unwrap_or(&defaults[n]).as_u64().unwrap();
        let now = vector["now"].as_i64().unwrap();
        let sealer = StateSealer::builder(ring.clone())
            .issuer(
                vector
                    .get("issuer")
                    .unwrap_or(&defaults["issuer"])
                    .as_str()
                    .unwrap(),
            )
            .max_lifetime(Duration::from_secs(setting("max_lifetime")))
            .leeway(Duration::from_secs(setting("leeway")))
            .max_token_bytes(setting("max_token_bytes") as usize)
            .clock(move || now)
            .build()
            .unwrap();
        let user = vector["user"].as_str().unwrap();
        match sealer.open_unconsumed(&changed, user, &target_of(vector), vector.get("arguments")) {
            Ok(_) => panic!(
                "case {case} (seed {seed}): a changed token opened: vector {}",
                vector["id"]
            ),
            Err(refusal) => assert!(Reason::ALL.contains(&refusal.reason)),
        }
    }
}

const JSON_ALPHABET: &[u8] = b"{}[]\",:\\/0123456789eE.+-tnfalsu \t\nxd8DC";

fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| close(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn the_strict_reader_agrees_with_serde_json() {
    let cases = setting("MRTR_PROPERTY_CASES", 4000);
    let seed = setting("MRTR_PROPERTY_SEED", 0x6a73_6f6e);
    let mut rng = Rng(seed | 1);
    let mut texts: Vec<Vec<u8>> = Vec::new();
    for file in ["tokens.json", "encrypted.json"] {
        for vector in read(file)["vectors"].as_array().unwrap() {
            let token = vector["token"].as_str().unwrap();
            let segments: Vec<&str> = token.split('.').collect();
            if segments.len() == 3 {
                texts.extend(segments[..2].iter().filter_map(|s| b64::decode(s)));
            } else if let Some(header) = b64::decode(segments[0]) {
                texts.push(header);
            }
        }
    }
    for vector in read("arguments.json")["vectors"].as_array().unwrap() {
        match vector.get("arguments_text").and_then(Value::as_str) {
            Some(text) => texts.push(text.as_bytes().to_vec()),
            None => texts.push(serde_json::to_vec(&vector["arguments"]).unwrap()),
        }
    }
    texts.retain(|t| t.len() < 4000);
    let (mut agreed_ok, mut agreed_err) = (0, 0);
    for case in 0..cases {
        let mut text = texts[rng.below(texts.len())].clone();
        for _ in 0..=rng.below(3) {
            text = mutate(&text, JSON_ALPHABET, &mut rng);
        }
        let ours = json::read(&text, 4096);
        if ours.as_ref().is_ok_and(|(_, f)| f.depth > 100) {
            continue; // serde_json stops at its recursion limit (128); the profile reads deeper arguments
        }
        let oracle = serde_json::from_slice::<Value>(&text);
        match (&ours, &oracle) {
            // Read the profile's way on purpose: a lone surrogate (serde_json refuses it) and a
            // number beyond a double (serde_json refuses it) are findings, not syntax errors.
            (Ok((_, f)), Err(_)) if f.lone_surrogate || f.number_overflow => {}
            (Ok((value, _)), Ok(expected)) => {
                assert!(
                    close(value, expected),
                    "case {case} (seed {seed}): {:?} read differently",
                    String::from_utf8_lossy(&text)
                );
                agreed_ok += 1;
            }
            (Err(_), Err(_)) => agreed_err += 1,
            _ => panic!(
                "case {case} (seed {seed}): {:?}: ours {}, serde_json {}",
                String::from_utf8_lossy(&text),
                if ours.is_ok() {
                    "reads it"
                } else {
                    "refuses it"
                },
                if oracle.is_ok() {
                    "reads it"
                } else {
                    "refuses it"
                }
            ),
        }
    }
    assert!(
        agreed_ok > 0 && agreed_err > 0,
        "both outcomes seen: {agreed_ok} read, {agreed_err} refused"
    );
}
