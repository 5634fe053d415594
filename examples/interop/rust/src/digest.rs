//! The request binding (profile, section 3.4): `args_sha256 = BASE64URL(SHA-256(JCS(arguments)))`.
//!
//! JCS (RFC 8785) comes from `serde_jcs`: members sorted by UTF-16 code units, JSON string
//! escaping, and numbers printed as ECMAScript prints the IEEE 754 double (via `ryu-js`).
//!
//! Gotcha: serde_json reads `9007199254740993` as the exact u64, not as a double. RFC 8785 treats
//! every number as a double (serde_jcs 0.2 formats every integer through `as f64`), so neighbouring
//! integers beyond 2^53 share one canonical form and one digest. The profile (section 3.4) therefore
//! makes arguments holding a number whose value is an integer beyond +/-(2^53 - 1) unbindable,
//! however it is written: every double of magnitude 2^53 or more is an integer, so the rule is on
//! `as_f64()` (an integer beyond u64 already arrives as the nearest double; an underflow such as
//! `1e-400` arrives as 0).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The RFC 8785 canonical UTF-8 JSON of `value`.
pub fn canonicalize(value: &Value) -> Result<Vec<u8>, serde_json::Error> {
    serde_jcs::to_vec(value)
}

/// The RFC 8785 canonical JSON of `arguments`, or why they are unbindable (profile, 3.4).
pub fn canonical_arguments(arguments: &Value) -> Result<Vec<u8>, String> {
    // Profile 3.4 and 8.2: arguments present but not an object (null too) are unbindable.
    if !arguments.is_object() {
        return Err("the arguments are not a JSON object".into());
    }
    if depth(arguments, MAX_DEPTH) > MAX_DEPTH {
        return Err(format!("the arguments nest deeper than {MAX_DEPTH} levels"));
    }
    if !bindable(arguments) {
        return Err("a number whose value is an integer beyond +/-(2^53 - 1)".into());
    }
    canonicalize(arguments).map_err(|e| e.to_string())
}

/// The deepest arguments bind: 256 levels, the arguments object being level 1 (profile 3.4, issue 32 D3).
pub const MAX_DEPTH: usize = 256;

/// How deep `value` nests (a scalar 0, `[]` and `{}` 1), counted up to `limit + 1`.
fn depth(value: &Value, limit: usize) -> usize {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(members) => Box::new(members.values()),
        _ => return 0,
    };
    if limit == 0 {
        return 1;
    }
    let mut deepest = 0;
    for child in children {
        deepest = deepest.max(depth(child, limit - 1));
        if deepest >= limit {
            return limit + 1;
        }
    }
    deepest + 1
}

fn bindable(value: &Value) -> bool {
    match value {
        Value::Number(n) => n
            .as_f64()
            .is_some_and(|f| f.abs() <= 9_007_199_254_740_991.0),
        Value::Array(items) => items.iter().all(bindable),
        Value::Object(members) => members.values().all(bindable),
        _ => true,
    }
}

/// The argument digest of `arguments` (a JSON object; a request without arguments has `{}`).
pub fn arguments_digest(arguments: &Value) -> Result<String, String> {
    Ok(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical_arguments(arguments)?)))
}

#[cfg(test)]
mod tests {
    use super::canonicalize;

    fn jcs(text: &str) -> String {
        String::from_utf8(canonicalize(&serde_json::from_str(text).unwrap()).unwrap()).unwrap()
    }

    #[test]
    fn integers_beyond_2_53_are_written_as_the_nearest_double() {
        assert_eq!(jcs("[9007199254740993]"), "[9007199254740992]");
        assert_eq!(jcs("[18446744073709551615]"), "[18446744073709552000]");
        assert_eq!(jcs("[-9007199254740993]"), "[-9007199254740992]");
        assert_eq!(jcs("[100000000000000000000000]"), "[1e+23]");
    }

    #[test]
    fn numbers_follow_ecmascript_formatting() {
        assert_eq!(
            jcs("[1.0, -0.0, 1e21, 1e20, 1e-6, 1e-7, 5e-324]"),
            "[1,0,1e+21,100000000000000000000,0.000001,1e-7,5e-324]"
        );
    }

    #[test]
    fn members_are_sorted_by_utf16_code_units() {
        assert_eq!(
            jcs(r#"{"\ufffd":1,"\ud800\udc00":2,"\ue000":3}"#),
            "{\"\u{10000}\":2,\"\u{e000}\":3,\"\u{fffd}\":1}"
        );
    }
}
