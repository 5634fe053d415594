//! The strict JSON reader: any input never panics, and reads exactly when serde_json (the oracle) reads
//! it, to the same value, apart from what the profile reads differently on purpose (a lone surrogate and
//! a number beyond a double are findings; nesting past serde_json's 128 levels). Seeded from
//! spec/vectors (fuzz/seed.py).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mrtr_state::token::json;
use serde_json::Value;

/// Equal, numbers compared as doubles (serde_json and the reader may keep a number in another form).
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
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

fuzz_target!(|data: &[u8]| {
    let ours = json::read(data, 4096);
    let _ = json::read_strict(data, 4096);
    if ours
        .as_ref()
        .is_ok_and(|(_, findings)| findings.depth > 100)
    {
        return; // serde_json stops at 128 levels; the profile reads deeper arguments
    }
    let oracle = serde_json::from_slice::<Value>(data);
    match (&ours, &oracle) {
        (Ok((_, findings)), Err(_)) if findings.lone_surrogate || findings.number_overflow => {}
        (Ok((value, _)), Ok(expected)) => assert!(close(value, expected), "read differently"),
        (Err(_), Err(_)) => {}
        _ => panic!("the reader and serde_json disagree on whether this is JSON"),
    }
});
