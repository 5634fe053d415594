//! The open path: any input, presented as a token to a sealer holding the vectors' verifier rings
//! (signed and encrypted), never panics, is refused with a reason code of the profile, and opens only
//! when it is exactly one of the vectors' tokens (every encoding is canonical, so no changed text opens;
//! another vector's token may open under the same request, as one without the argument binding does).
//! Seeded from spec/vectors (fuzz/seed.py).
#![no_main]

use std::collections::HashSet;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mrtr_state::token::json;
use mrtr_state::{Keyring, Reason, StateSealer, Target, Value};

/// One valid vector: its token, and a sealer and request under which it opens.
struct Case {
    token: String,
    sealer: StateSealer,
    user: String,
    target: Target,
    arguments: Option<Value>,
}

fn vectors(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../spec/vectors")
        .join(name);
    json::read(&std::fs::read(path).expect("the vectors"), 4096)
        .expect("JSON")
        .0
}

/// Every token of the vector files, valid or not.
static TOKENS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    ["tokens.json", "encrypted.json"]
        .iter()
        .flat_map(|file| {
            vectors(file)["vectors"]
                .as_array()
                .expect("vectors")
                .clone()
        })
        .filter_map(|vector| vector["token"].as_str().map(str::to_owned))
        .collect()
});

static CASES: LazyLock<Vec<Case>> = LazyLock::new(|| {
    let keys = vectors("keys.json");
    let mut cases = Vec::new();
    for (file, ring) in [
        ("tokens.json", "verifier_jwks"),
        ("encrypted.json", "encrypted_verifier_jwks"),
    ] {
        let file = vectors(file);
        let ring = Arc::new(Keyring::from_jwks_value(&keys[ring]).expect("the ring"));
        let defaults = &file["defaults"];
        // The first valid vector of each file: enough for the open path, fast per input.
        let vector = file["vectors"]
            .as_array()
            .expect("vectors")
            .iter()
            .find(|vector| vector["expected"]["valid"] == Value::Bool(true))
            .expect("a valid vector");
        let setting = |name: &str| {
            vector
                .get(name)
                .unwrap_or(&defaults[name])
                .as_u64()
                .expect("a number")
        };
        let now = vector["now"].as_i64().expect("now");
        let sealer = StateSealer::builder(Arc::clone(&ring))
            .issuer(
                vector
                    .get("issuer")
                    .unwrap_or(&defaults["issuer"])
                    .as_str()
                    .expect("issuer"),
            )
            .max_lifetime(Duration::from_secs(setting("max_lifetime")))
            .leeway(Duration::from_secs(setting("leeway")))
            .max_token_bytes(setting("max_token_bytes") as usize)
            .clock(move || now)
            .build()
            .expect("a sealer");
        let target = match (vector["tool"].as_str(), vector["prompt"].as_str()) {
            (Some(tool), _) => Target::Tool(tool.into()),
            (None, Some(prompt)) => Target::Prompt(prompt.into()),
            _ => Target::Resource(vector["resource"].as_str().expect("a target").into()),
        };
        cases.push(Case {
            token: vector["token"].as_str().expect("token").to_owned(),
            sealer,
            user: vector["user"].as_str().expect("user").to_owned(),
            target,
            arguments: vector.get("arguments").cloned(),
        });
    }
    cases
});

fuzz_target!(|data: &[u8]| {
    let Ok(token) = std::str::from_utf8(data) else {
        return;
    };
    for case in CASES.iter() {
        match case
            .sealer
            .open_unconsumed(token, &case.user, &case.target, case.arguments.as_ref())
        {
            Ok(_) => assert!(
                token == case.token || TOKENS.contains(token),
                "a token that is none of the vectors' opened"
            ),
            Err(refusal) => assert!(Reason::ALL.contains(&refusal.reason)),
        }
    }
});
