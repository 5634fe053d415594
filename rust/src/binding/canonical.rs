//! The argument digest: BASE64URL(SHA-256(JCS(arguments))) (RFC 8785, profile 3.4).

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

use crate::token::b64;

/// How deep arguments may nest (issue 32, D3): the arguments object is level 1; 256 bind, 257 do not.
pub const MAX_ARGUMENT_DEPTH: usize = 256;

/// 2^53 as a double: a number whose double has this magnitude or more is unbindable (profile 3.4).
const TWO_POW_53: f64 = 9_007_199_254_740_992.0;

/// Arguments that have no digest (profile 3.4): not an object, a number whose double has magnitude
/// 2^53 or more, or nesting deeper than 256 levels. A minter refuses to seal them; a verifier finds
/// that they match no digest (`wrong_request`). Pass 64-bit ids and nanosecond timestamps as strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the arguments cannot be bound (profile 3.4): they must be a JSON object, nest at most 256 levels, and hold no number of magnitude 2^53 or more (pass 64-bit ids as strings)"
)]
pub struct Unbindable;

/// The RFC 8785 canonical text of any JSON value, or `Unbindable` for a number JCS cannot write
/// exactly (magnitude 2^53 or more) or nesting past `max_depth`.
pub fn canonicalize(value: &Value, max_depth: usize) -> Result<String, Unbindable> {
    let mut out = String::new();
    write(value, 0, max_depth, &mut out)?;
    Ok(out)
}

/// The canonical text of request arguments: an object, bindable by profile 3.4.
pub fn canonical_arguments(arguments: &Value) -> Result<String, Unbindable> {
    if !arguments.is_object() {
        return Err(Unbindable);
    }
    canonicalize(arguments, MAX_ARGUMENT_DEPTH)
}

/// The `args_sha256` of request arguments (`None` is absent, read as `{}`).
pub fn arguments_digest(arguments: Option<&Value>) -> Result<String, Unbindable> {
    let canonical = match arguments {
        None => "{}".to_owned(),
        Some(value) => canonical_arguments(value)?,
    };
    Ok(b64::encode(&Sha256::digest(canonical.as_bytes())))
}

fn write(
    value: &Value,
    depth: usize,
    max_depth: usize,
    out: &mut String,
) -> Result<(), Unbindable> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(n, out)?,
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            if depth + 1 > max_depth {
                return Err(Unbindable);
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, depth + 1, max_depth, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            if depth + 1 > max_depth {
                return Err(Unbindable);
            }
            // Members sorted by the UTF-16 code units of their names (RFC 8785 section 3.2.3).
            let mut members: Vec<(Vec<u16>, &String, &Value)> = map
                .iter()
                .map(|(k, v)| (k.encode_utf16().collect(), k, v))
                .collect();
            members.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (_, name, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(name, out);
                out.push(':');
                write(item, depth + 1, max_depth, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn write_number(n: &Number, out: &mut String) -> Result<(), Unbindable> {
    if let Some(i) = n.as_i64() {
        if i.unsigned_abs() >= TWO_POW_53 as u64 {
            return Err(Unbindable);
        }
        out.push_str(&i.to_string());
        return Ok(());
    }
    if n.as_u64().is_some() {
        return Err(Unbindable); // beyond i64, so far beyond 2^53
    }
    let double = n.as_f64().ok_or(Unbindable)?;
    if !double.is_finite() || double.abs() >= TWO_POW_53 {
        return Err(Unbindable);
    }
    if double == 0.0 {
        out.push('0'); // -0 is written 0
        return Ok(());
    }
    // ECMAScript Number.prototype.toString, as RFC 8785 section 3.2.2.3 requires.
    out.push_str(ryu_js::Buffer::new().format_finite(double));
    Ok(())
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_of_absent_is_digest_of_empty_object() {
        assert_eq!(
            arguments_digest(None).unwrap(),
            "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
        );
        assert_eq!(
            arguments_digest(Some(&json!({}))).unwrap(),
            arguments_digest(None).unwrap()
        );
    }

    #[test]
    fn non_objects_and_large_numbers_are_unbindable() {
        for v in [
            json!(null),
            json!([]),
            json!("x"),
            json!(1),
            json!(true),
            json!({"a": 9007199254740992u64}),
            json!({"a": -9007199254740992i64}),
            json!({"a": 1e21}),
            json!({"a": u64::MAX}),
        ] {
            assert_eq!(arguments_digest(Some(&v)), Err(Unbindable), "{v}");
        }
        assert!(arguments_digest(Some(&json!({"a": 9007199254740991u64}))).is_ok());
    }

    #[test]
    fn numbers_as_ecmascript_writes_them() {
        let v = json!({"a": 1e-7, "b": 4.5, "c": -0.0, "d": 100.0, "e": 1e15});
        assert_eq!(
            canonicalize(&v, 10).unwrap(),
            r#"{"a":1e-7,"b":4.5,"c":0,"d":100,"e":1000000000000000}"#
        );
    }
}
