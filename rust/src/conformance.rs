//! The conformance protocol of `mrtr-state conformance` (docs/conformance.md): one JSON request
//! per line in, one answer per line out, in order. The binary `mrtr-state-conformance` serves it.

use std::io::{BufRead, Write};

use serde_json::{Map, Value, json};

use crate::binding::{Binding, Target, arguments_digest};
use crate::keys::{Key, Keyring};
use crate::token::claims::{self, VerifierSettings};
use crate::token::json;

/// How deep a request line may nest: a guard for the stack, well beyond the 256 levels arguments
/// bind to, so deeper arguments are read and found unbindable; a deeper line gets an error answer.
const MAX_LINE_DEPTH: usize = 2048;

/// Serves the protocol: reads request lines until the end of `input`, writes and flushes one
/// answer line per request.
pub fn serve(input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    for line in input.split(b'\n') {
        let line = line?;
        let reply = answer(&line);
        serde_json::to_writer(&mut output, &reply)?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

/// The arguments of a request: absent, readable, or unreadable as a JSON value (a number beyond a
/// double or a lone surrogate), which profile 3.4 makes unbindable.
enum Arguments {
    Absent,
    Value(Value),
    Unbindable,
}

impl Arguments {
    /// As the library takes them. A text no `Value` can hold is unbindable; it is handed on as
    /// `null`, which profile 3.4 also makes unbindable, so the verdict is the same by construction.
    fn as_option(&self) -> Option<&Value> {
        const UNBINDABLE: &Value = &Value::Null;
        match self {
            Arguments::Absent => None,
            Arguments::Value(v) => Some(v),
            Arguments::Unbindable => Some(UNBINDABLE),
        }
    }
}

/// The answer to one request line (its `id` included).
pub fn answer(line: &[u8]) -> Value {
    let Ok((Value::Object(request), _, spans)) = json::read_with_spans(line, MAX_LINE_DEPTH) else {
        return json!({ "id": null, "error": "a request must be one JSON object per line" });
    };
    let arguments = match spans.iter().rev().find(|(name, _)| name == "arguments") {
        None => Arguments::Absent,
        // The last member of a name wins, as in the request's value; read again on its own.
        Some((_, range)) => match json::read(&line[range.clone()], MAX_LINE_DEPTH) {
            Ok((value, findings)) if !findings.number_overflow && !findings.lone_surrogate => {
                Arguments::Value(value)
            }
            _ => Arguments::Unbindable,
        },
    };
    let outcome = match request.get("op").and_then(Value::as_str) {
        Some("verify") => verify(&request, &arguments),
        Some("digest") => Ok(match arguments_digest(arguments.as_option()) {
            Ok(digest) => json!({ "digest": digest }),
            Err(_) => json!({ "unbindable": true }),
        }),
        Some("load_key") => Ok(json!({ "loaded": load_key(&request) })),
        _ => Ok(json!({ "unsupported": true })),
    };
    let mut reply = outcome.unwrap_or_else(|problem| json!({ "error": problem }));
    reply["id"] = request.get("id").cloned().unwrap_or(Value::Null);
    reply
}

fn load_key(request: &Map<String, Value>) -> bool {
    match (request.get("jwks"), request.get("jwk")) {
        (Some(jwks), _) => Keyring::from_jwks_value(jwks).is_ok(),
        (None, Some(jwk)) => Key::from_jwk(jwk)
            .and_then(|key| Keyring::new(vec![key]))
            .is_ok(),
        (None, None) => false,
    }
}

fn string<'a>(request: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    request
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{name:?} must be a string"))
}

fn count(request: &Map<String, Value>, name: &str, default: i64) -> Result<i64, String> {
    match request.get(name) {
        None => Ok(default),
        Some(v) => v
            .as_i64()
            .filter(|n| *n >= 0 && !v.as_number().is_some_and(serde_json::Number::is_f64))
            .ok_or_else(|| format!("{name:?} must be a non-negative integer")),
    }
}

fn target(request: &Map<String, Value>) -> Result<Target, String> {
    let mut found = Vec::new();
    for (name, make) in [
        ("tool", Target::Tool as fn(String) -> Target),
        ("prompt", Target::Prompt),
        ("resource", Target::Resource),
    ] {
        if request.contains_key(name) {
            found.push(make(string(request, name)?.to_owned()));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        _ => Err("exactly one of \"tool\", \"prompt\", \"resource\" is needed".into()),
    }
}

fn verify(request: &Map<String, Value>, arguments: &Arguments) -> Result<Value, String> {
    let keys = request.get("keys").ok_or("missing \"keys\"")?;
    let ring = Keyring::from_jwks_value(keys)
        .map_err(|e| format!("the verifier's ring does not load: {}", e.message()))?;
    let leeway = count(request, "leeway", 0)?;
    if leeway > 300 {
        return Err("\"leeway\" must be at most 300 seconds".into());
    }
    let settings = VerifierSettings {
        issuer: string(request, "issuer")?.to_owned(),
        max_lifetime: count(request, "max_lifetime", 600)?,
        leeway,
        require_arguments: match request.get("require_arguments") {
            None => false,
            Some(v) => v
                .as_bool()
                .ok_or("\"require_arguments\" must be true or false")?,
        },
    };
    let max_token_bytes =
        usize::try_from(count(request, "max_token_bytes", 8192)?).map_err(|e| e.to_string())?;
    let now = request
        .get("now")
        .filter(|v| !v.as_number().is_some_and(serde_json::Number::is_f64))
        .and_then(Value::as_i64)
        .ok_or("\"now\" must be an integer")?;
    let target = target(request)?;
    let user = string(request, "user")?;
    let verdict = match request.get("token") {
        // Profile 5, step 1: a value that is not a string at all is malformed.
        Some(Value::String(token)) => crate::token::open_claims(&ring, token, max_token_bytes)
            .and_then(|decoded| {
                let binding = Binding {
                    user,
                    target: &target,
                    arguments: arguments.as_option(),
                };
                claims::check(decoded, &settings, &binding, now).map(|checked| checked.state)
            }),
        _ => Err(crate::errors::Reason::Malformed),
    };
    Ok(match verdict {
        Ok(state) => json!({ "valid": true, "state": state }),
        Err(reason) => json!({ "valid": false, "reason": reason.as_str() }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(line: &str) -> Value {
        answer(line.as_bytes())
    }

    #[test]
    fn edge_cases_of_the_protocol() {
        assert_eq!(
            ask("not json"),
            json!({"id": null, "error": "a request must be one JSON object per line"})
        );
        assert_eq!(ask("[1]")["id"], Value::Null);
        let deep = format!(
            r#"{{"id": "d", "op": "digest", "arguments": {}{}}}"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        assert!(
            ask(&deep)["error"].is_string(),
            "a line past the depth guard is an error, not a crash"
        );
        assert_eq!(
            ask(r#"{"id": 1, "op": "mint"}"#),
            json!({"id": 1, "unsupported": true})
        );
        assert_eq!(
            ask(r#"{"id": "a", "op": "digest"}"#),
            json!({"id": "a", "digest": "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"})
        );
        for unbindable in [
            "null",
            "[]",
            "1e400",
            r#"{"x": 1e400}"#,
            r#"{"x": "\ud800"}"#,
            r#"{"x": 9007199254740991.5}"#,
        ] {
            let line = format!(r#"{{"id": "u", "op": "digest", "arguments": {unbindable}}}"#);
            assert_eq!(
                ask(&line),
                json!({"id": "u", "unbindable": true}),
                "{unbindable}"
            );
        }
        // The last of two "arguments" members is the one read, as in the request's value.
        assert_eq!(
            ask(r#"{"id": "l", "op": "digest", "arguments": {"x": 1e400}, "arguments": {}}"#)["digest"],
            "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
        );
        assert_eq!(ask(r#"{"id": "k", "op": "load_key"}"#)["loaded"], false);
    }

    #[test]
    fn a_token_that_is_not_a_string_is_malformed_and_a_bad_ring_is_an_error() {
        let ring = json!({"keys": [{"kty": "oct", "k": crate::token::b64::encode(&(0..32u8).map(|i| i * 7 + 3).collect::<Vec<_>>())}]});
        let request = |token: Value, keys: &Value| json!({"id": "v", "op": "verify", "keys": keys, "token": token, "issuer": "i", "user": "u", "tool": "t", "now": 0});
        let got = answer(request(json!(12), &ring).to_string().as_bytes());
        assert_eq!(
            got,
            json!({"id": "v", "valid": false, "reason": "malformed"})
        );
        let got = answer(
            request(json!(""), &json!({"keys": []}))
                .to_string()
                .as_bytes(),
        );
        assert!(
            got["error"]
                .as_str()
                .unwrap()
                .starts_with("the verifier's ring does not load")
        );
    }
}
