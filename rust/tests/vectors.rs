//! Every file of spec/vectors/ and every vector in it (profile section 12): token and encrypted
//! vectors through the conformance adapter and through the public `StateSealer`, argument vectors
//! (with `arguments_text` read by the crate's own parser), the valid keys of keys.json and the
//! invalid keys and rings of invalid-keys.json.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mrtr_state::binding::canonical_arguments;
use mrtr_state::conformance::answer;
use mrtr_state::token::json;
use mrtr_state::{Keyring, StateSealer, Target, Value};
use serde_json::{Map, json};

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors")
}

/// A vector file, read by the crate's reader (numbers as written; deep arguments allowed).
fn read(name: &str) -> Value {
    let path = vectors_dir().join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    json::read(&bytes, 4096)
        .unwrap_or_else(|_| panic!("{} is not JSON", path.display()))
        .0
}

fn ask(request: &Value) -> Value {
    answer(serde_json::to_string(request).unwrap().as_bytes())
}

/// JSON values equal as every JSON reader sees them: numbers by their double.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn target_of(vector: &Map<String, Value>) -> Target {
    for (name, make) in [
        ("tool", Target::Tool as fn(String) -> Target),
        ("prompt", Target::Prompt),
        ("resource", Target::Resource),
    ] {
        if let Some(Value::String(n)) = vector.get(name) {
            return make(n.clone());
        }
    }
    panic!("a vector without a target")
}

/// Runs one token file; returns the failures.
fn token_file(name: &str, keys: &Value) -> (usize, Vec<String>) {
    let file = read(name);
    let defaults = file["defaults"].as_object().expect("defaults").clone();
    let ring = Keyring::from_jwks_value(keys).expect("the vector ring loads");
    let ring = std::sync::Arc::new(ring);
    let mut failures = Vec::new();
    let vectors = file["vectors"].as_array().expect("vectors");
    for vector in vectors {
        let vector = vector.as_object().unwrap();
        let id = vector["id"].as_str().unwrap();
        let mut request = defaults.clone();
        request.extend(vector.clone());
        request.insert("op".into(), json!("verify"));
        request.insert("id".into(), json!(id));
        request.insert("keys".into(), keys.clone());
        let got = ask(&Value::Object(request.clone()));
        let expected = &vector["expected"];
        let ok = match expected["valid"].as_bool() {
            Some(true) => got["valid"] == json!(true) && same(&got["state"], &expected["state"]),
            _ => got["valid"] == json!(false) && got["reason"] == expected["reason"],
        };
        if !ok || got["id"] != json!(id) {
            failures.push(format!("{name} {id}: got {got}, expected {expected}"));
        }

        // The same vector through the public API: a sealer with the vector's settings and clock.
        let count = |n: &str| request[n].as_u64().unwrap();
        let now = request["now"].as_i64().unwrap();
        let max_lifetime = count("max_lifetime");
        let sealer = StateSealer::builder(ring.clone())
            .issuer(request["issuer"].as_str().unwrap())
            .max_lifetime(Duration::from_secs(max_lifetime))
            .ttl(Duration::from_secs(max_lifetime.max(1)))
            .leeway(Duration::from_secs(count("leeway")))
            .max_token_bytes(count("max_token_bytes") as usize)
            .require_arguments(
                request
                    .get("require_arguments")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            )
            .clock(move || now)
            .build()
            .expect("the vector's settings build a sealer");
        let verdict = sealer.open_unconsumed(
            vector["token"].as_str().unwrap(),
            vector["user"].as_str().unwrap(),
            &target_of(vector),
            vector.get("arguments"),
        );
        let ok = match (&verdict, expected["valid"].as_bool()) {
            (Ok(state), Some(true)) => same(state, &expected["state"]),
            (Err(refusal), Some(false)) => expected["reason"] == json!(refusal.reason.as_str()),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{name} {id} (StateSealer): got {verdict:?}, expected {expected}"
            ));
        }
    }
    (vectors.len(), failures)
}

fn arguments_file() -> (usize, Vec<String>) {
    let file = read("arguments.json");
    let mut failures = Vec::new();
    let vectors = file["vectors"].as_array().expect("vectors");
    for vector in vectors {
        let id = vector["id"].as_str().unwrap();
        // A vector with arguments_text is sent as that text, exactly, and read by the crate's parser.
        let line = match vector.get("arguments_text").and_then(Value::as_str) {
            Some(text) => format!(r#"{{"id": "{id}", "op": "digest", "arguments": {text}}}"#),
            None => serde_json::to_string(
                &json!({"id": id, "op": "digest", "arguments": vector["arguments"]}),
            )
            .unwrap(),
        };
        let got = answer(line.as_bytes());
        if vector.get("unbindable") == Some(&json!(true)) {
            if got != json!({"id": id, "unbindable": true}) {
                failures.push(format!("arguments {id}: got {got}, expected unbindable"));
            }
            if canonical_arguments(&vector["arguments"]).is_ok() {
                failures.push(format!(
                    "arguments {id}: canonicalized, expected unbindable"
                ));
            }
            continue;
        }
        if got != json!({"id": id, "digest": vector["digest"]}) {
            failures.push(format!(
                "arguments {id}: got {got}, expected digest {}",
                vector["digest"]
            ));
        }
        match canonical_arguments(&vector["arguments"]) {
            Ok(text) if json!(text) == vector["canonical"] => {}
            other => failures.push(format!(
                "arguments {id}: canonical {other:?}, expected {}",
                vector["canonical"]
            )),
        }
    }
    (vectors.len(), failures)
}

fn invalid_keys_file() -> (usize, Vec<String>) {
    let file = read("invalid-keys.json");
    let mut failures = Vec::new();
    let vectors = file["vectors"].as_array().expect("vectors");
    for vector in vectors {
        let id = vector["id"].as_str().unwrap();
        let mut request = json!({"id": id, "op": "load_key"});
        match (vector.get("jwk"), vector.get("jwks")) {
            (Some(jwk), None) => request["jwk"] = jwk.clone(),
            (None, Some(jwks)) => request["jwks"] = jwks.clone(),
            _ => panic!("{id}: exactly one of jwk, jwks"),
        }
        let got = ask(&request);
        if got != json!({"id": id, "loaded": false}) {
            failures.push(format!("invalid key {id}: got {got}, expected a refusal"));
        }
        // The library itself: each key of a ring loads alone, the ring as a whole is refused.
        let ring = match vector.get("jwks") {
            Some(jwks) => jwks.clone(),
            None => json!({"keys": [vector["jwk"]]}),
        };
        if Keyring::from_jwks_value(&ring).is_ok() {
            failures.push(format!(
                "invalid key {id}: Keyring::from_jwks_value loaded it"
            ));
        }
    }
    (vectors.len(), failures)
}

fn valid_keys(keys: &Value) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut n = 0;
    for (name, value) in keys.as_object().unwrap() {
        if name == "version" {
            continue;
        }
        n += 1;
        let request = if value.get("keys").is_some() {
            json!({"id": name, "op": "load_key", "jwks": value})
        } else {
            json!({"id": name, "op": "load_key", "jwk": value})
        };
        let got = ask(&request);
        if got != json!({"id": name, "loaded": true}) {
            failures.push(format!("keys.json {name}: got {got}, expected it to load"));
        }
    }
    (n, failures)
}

#[test]
fn every_vector_file_and_every_vector() {
    let keys = read("keys.json");
    let mut seen = Vec::new();
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(vectors_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    entries.sort();
    for name in entries {
        let name = name.to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let (count, fails) = match name.as_str() {
            "keys.json" => valid_keys(&keys),
            "tokens.json" => token_file(&name, &keys["verifier_jwks"]),
            "encrypted.json" => token_file(&name, &keys["encrypted_verifier_jwks"]),
            "arguments.json" => arguments_file(),
            "invalid-keys.json" => invalid_keys_file(),
            other => {
                panic!("spec/vectors/{other} is a vector file this test does not know: add it")
            }
        };
        assert!(count > 0, "{name} holds no vector");
        seen.push(format!("{name}: {count}"));
        failures.extend(fails);
    }
    assert_eq!(seen.len(), 5, "vector files checked: {seen:?}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("checked {}", seen.join(", "));
}
