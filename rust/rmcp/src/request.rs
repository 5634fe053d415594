//! What a `requestState` is bound to, read from a request's raw `params`, and what the layer found.
//!
//! | method           | target          | arguments bound                       |
//! |------------------|-----------------|---------------------------------------|
//! | `tools/call`     | `params.name`   | `params.arguments` (absent: `{}`)     |
//! | `prompts/get`    | `params.name`   | `params.arguments` (absent: `{}`)     |
//! | `resources/read` | `params.uri`    | none: the URI is the whole request    |
//!
//! Arguments that are present but not an object (`null` included) are bound as they are, which makes
//! them unbindable (profile 3.4 and 8.2): no state is sealed for them, and a state is refused
//! `wrong_request` on them.

use std::sync::Arc;

use mrtr_state::{InvalidRequestState, Target};
use serde_json::{Map, Value};

/// The methods whose results may be `input_required`.
pub(crate) const METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// The target and the arguments of one request, and the user it is served for.
#[derive(Debug)]
pub(crate) struct Binding {
    /// `None`: no principal (the boundary neither seals nor opens).
    pub(crate) user: Option<String>,
    pub(crate) target: Target,
    /// `None` for `resources/read`; otherwise the arguments as sent (`{}` when absent).
    pub(crate) arguments: Option<Value>,
}

/// What the layer did with a request's `requestState`.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// No `requestState` (absent or `null`): a first round.
    First,
    /// The state opened: its claim, and the text the handler sees as `request_state`.
    Verified { state: Value, text: String },
    /// The state was refused; the handler must not run.
    Refused(InvalidRequestState),
}

/// One request the layer read, put in the HTTP request's extensions for [`crate::StateHandler`].
#[derive(Clone, Debug)]
pub(crate) struct Round(pub(crate) Arc<RoundData>);

#[derive(Debug)]
pub(crate) struct RoundData {
    /// The JSON-RPC id, as sent.
    pub(crate) id: Value,
    pub(crate) method: &'static str,
    pub(crate) binding: Binding,
    pub(crate) outcome: Outcome,
}

/// The target and arguments of a request from its raw `params`, or the message of a `-32602` error
/// (it names the field, never a value).
pub(crate) fn target_of(
    method: &'static str,
    params: &Map<String, Value>,
) -> Result<(Target, Option<Value>), String> {
    let field = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    let name = match params.get(field) {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => return Err(format!("{method} needs a non-empty string '{field}'")),
    };
    Ok(match method {
        "tools/call" => (Target::Tool(name), Some(arguments_of(params))),
        "prompts/get" => (Target::Prompt(name), Some(arguments_of(params))),
        _ => (Target::Resource(name), None),
    })
}

fn arguments_of(params: &Map<String, Value>) -> Value {
    // Profile 8.2: absent arguments are {}; present ones are bound as they are ("arguments": null is not {}).
    params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()))
}

/// The `requestState` text a handler sees for a verified `state` claim: a string as it is, any other
/// value as its compact JSON text.
pub(crate) fn text_of(state: &Value) -> String {
    match state {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The `state` claim for a handler's `requestState` text: the JSON text of an object or array becomes
/// that value (so a replica in another language reads structured state); any other text is carried
/// verbatim as a JSON string.
pub(crate) fn claim_of(text: &str) -> Value {
    let trimmed = text.trim_start_matches([' ', '\t', '\r', '\n']);
    if trimmed.starts_with(['{', '['])
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return value;
    }
    Value::String(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("test params are objects"),
        }
    }

    #[test]
    fn arguments_absent_are_an_empty_object_and_null_stays_null() {
        let (target, arguments) = target_of("tools/call", &params(json!({"name": "t"}))).unwrap();
        assert_eq!(target, Target::Tool("t".into()));
        assert_eq!(arguments, Some(json!({})));
        let (_, arguments) = target_of(
            "prompts/get",
            &params(json!({"name": "p", "arguments": null})),
        )
        .unwrap();
        assert_eq!(arguments, Some(Value::Null));
        let (target, arguments) = target_of(
            "resources/read",
            &params(json!({"uri": "u://x", "arguments": 1})),
        )
        .unwrap();
        assert_eq!(target, Target::Resource("u://x".into()));
        assert_eq!(arguments, None);
    }

    #[test]
    fn a_missing_or_empty_or_non_string_target_is_named_in_the_message() {
        for bad in [json!({}), json!({"name": ""}), json!({"name": 3})] {
            assert_eq!(
                target_of("tools/call", &params(bad)).unwrap_err(),
                "tools/call needs a non-empty string 'name'"
            );
        }
        assert_eq!(
            target_of("resources/read", &params(json!({"name": "x"}))).unwrap_err(),
            "resources/read needs a non-empty string 'uri'"
        );
    }

    #[test]
    fn structured_text_becomes_json_and_other_text_stays_a_string() {
        assert_eq!(claim_of(" {\"a\": [1, 2]}"), json!({"a": [1, 2]}));
        assert_eq!(claim_of("[1"), json!("[1"));
        assert_eq!(claim_of("42"), json!("42"));
        assert_eq!(text_of(&json!({"a": [1, 2]})), "{\"a\":[1,2]}");
        assert_eq!(text_of(&json!("plain")), "plain");
    }
}
