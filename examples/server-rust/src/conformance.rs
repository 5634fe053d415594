//! The fixtures the MCP conformance suite's `input-required-result-*` scenarios call, as the Python and
//! Go examples serve them. State goes through the same boundary as the real tools; the suite's harness
//! sends no credentials, so the conformance server binds every state to one fixed principal (main.rs).

use std::collections::BTreeMap;

use mrtr_state_rmcp::{input_required, verified_state};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, InputRequest, InputRequests, InputRequiredResult,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

const FIXTURES: [(&str, &str); 8] = [
    (
        "test_input_required_result_elicitation",
        "Ask for a name, then greet.",
    ),
    (
        "test_input_required_result_sampling",
        "Ask the client's model a question, then report its answer.",
    ),
    (
        "test_input_required_result_list_roots",
        "Ask for the client's roots, then list them.",
    ),
    (
        "test_input_required_result_request_state",
        "Ask for a confirmation with a sealed state.",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Ask for a name, a model's greeting and the roots at once.",
    ),
    (
        "test_input_required_result_tampered_state",
        "Ask with a sealed state; a tampered one never reaches this code.",
    ),
    (
        "test_input_required_result_capabilities",
        "Ask only for what the client declared it can answer.",
    ),
    (
        "test_input_required_result_multi_round",
        "Ask for a name, then (with the name in the state) for a colour.",
    ),
];
const PROMPT: &str = "test_input_required_result_prompt";

fn request(method: &str, params: Value) -> InputRequest {
    let mut message = json!({"method": method});
    if !params.is_null() {
        message["params"] = params;
    }
    serde_json::from_value(message).expect("the fixtures' input requests are valid")
}

fn form(message: &str, field: &str, kind: &str) -> InputRequest {
    request(
        "elicitation/create",
        json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
        }),
    )
}

fn sample(text: &str, max_tokens: u32) -> InputRequest {
    request(
        "sampling/createMessage",
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens}),
    )
}

fn list_roots() -> InputRequest {
    request("roots/list", Value::Null)
}

/// Ask for `requests`, carrying `state` (without one, the boundary's `input_required` records what was
/// asked, so the answers are read against a verified state).
fn ask(requests: Vec<(&str, InputRequest)>, state: Option<Value>) -> CallToolResponse {
    let requests: InputRequests = requests
        .into_iter()
        .map(|(key, request)| (key.to_owned(), request))
        .collect();
    CallToolResponse::InputRequired(input_required(requests, state))
}

fn text(message: String) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(message)]))
}

fn answers(request: &CallToolRequestParams) -> BTreeMap<String, Value> {
    request.input_responses.clone().unwrap_or_default()
}

fn accepted(answers: &BTreeMap<String, Value>, key: &str) -> Option<Map<String, Value>> {
    let answer = answers.get(key)?;
    (answer.get("action")? == "accept").then(|| {
        answer
            .get("content")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    })
}

/// The text of a sampling answer (its content, one item or a list).
fn sampled(answers: &BTreeMap<String, Value>, key: &str) -> Option<String> {
    let content = answers.get(key)?.get("content")?;
    let items = match content {
        Value::Array(items) => items.clone(),
        item => vec![item.clone()],
    };
    items
        .iter()
        .find_map(|item| item.get("text").and_then(Value::as_str).map(str::to_owned))
}

fn roots(answers: &BTreeMap<String, Value>, key: &str) -> Option<Vec<String>> {
    let roots = answers.get(key)?.get("roots")?.as_array()?;
    Some(
        roots
            .iter()
            .filter_map(|root| root.get("uri").and_then(Value::as_str).map(str::to_owned))
            .collect(),
    )
}

fn show(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "<nil>".into(),
    }
}

/// The conformance fixtures' handler.
#[derive(Clone)]
pub struct Fixtures;

impl Fixtures {
    fn call(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<CallToolResponse> {
        let answers = answers(request);
        let state = verified_state(context);
        let confirm = || form("Please confirm", "ok", "boolean");
        Some(match request.name.as_ref() {
            "test_input_required_result_elicitation" => match accepted(&answers, "user_name")
                .and_then(|answer| {
                    answer
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                }) {
                Some(name) => text(format!("Hello, {name}!")),
                None => ask(
                    vec![("user_name", form("What is your name?", "name", "string"))],
                    None,
                ),
            },
            "test_input_required_result_sampling" => match sampled(&answers, "capital_question") {
                Some(said) => text(format!("The model said: {said}")),
                None => ask(
                    vec![(
                        "capital_question",
                        sample("What is the capital of France?", 100),
                    )],
                    None,
                ),
            },
            "test_input_required_result_list_roots" => match roots(&answers, "client_roots") {
                Some(uris) => text(format!("Roots: {}", uris.join(", "))),
                None => ask(vec![("client_roots", list_roots())], None),
            },
            "test_input_required_result_request_state" => {
                let answer = accepted(&answers, "confirm");
                match (state.as_ref().and_then(|s| s.get("asked")), answer) {
                    (Some(asked), Some(answer)) if asked == "confirm" => text(format!(
                        "state-ok: the sealed requestState verified; ok={}",
                        show(answer.get("ok"))
                    )),
                    _ => ask(
                        vec![("confirm", confirm())],
                        Some(json!({"asked": "confirm"})),
                    ),
                }
            }
            "test_input_required_result_multiple_inputs" => {
                let name = accepted(&answers, "user_name");
                let greeting = sampled(&answers, "greeting");
                let uris = roots(&answers, "client_roots");
                match (state, name, greeting, uris) {
                    (Some(_), Some(name), Some(greeting), Some(uris)) => text(format!(
                        "{greeting} {}; roots: {}",
                        show(name.get("name")),
                        uris.join(", ")
                    )),
                    _ => ask(
                        vec![
                            ("user_name", form("What is your name?", "name", "string")),
                            ("greeting", sample("Generate a greeting", 50)),
                            ("client_roots", list_roots()),
                        ],
                        Some(json!({"asked": ["client_roots", "greeting", "user_name"]})),
                    ),
                }
            }
            "test_input_required_result_tampered_state" => {
                if state.is_none() || accepted(&answers, "confirm").is_none() {
                    ask(
                        vec![("confirm", confirm())],
                        Some(json!({"asked": "confirm"})),
                    )
                } else {
                    text("The state verified.".into())
                }
            }
            "test_input_required_result_capabilities" => {
                let capabilities = context.meta.client_capabilities();
                let elicitation = capabilities
                    .as_ref()
                    .is_some_and(|c| c.elicitation.is_some());
                let sampling = capabilities.as_ref().is_some_and(|c| c.sampling.is_some());
                let mut requests = Vec::new();
                let mut asked = Vec::new();
                if sampling {
                    requests.push(("greeting", sample("Generate a greeting", 50)));
                    asked.push("greeting");
                }
                if elicitation {
                    requests.push(("user_name", form("What is your name?", "name", "string")));
                    asked.push("user_name");
                }
                if requests.is_empty() {
                    text(
                        "The client declared neither elicitation nor sampling; nothing to ask."
                            .into(),
                    )
                } else if state.is_some()
                    && requests.iter().all(|(key, _)| answers.contains_key(*key))
                {
                    text("Every declared input arrived.".into())
                } else {
                    ask(requests, Some(json!({"asked": asked})))
                }
            }
            "test_input_required_result_multi_round" => {
                let color_form = || form("Step 2: What is your favorite color?", "color", "string");
                if let Some(s) = state
                    .as_ref()
                    .filter(|s| s.get("step").is_some_and(|step| step == "color"))
                {
                    return Some(match accepted(&answers, "step2") {
                        Some(color) => text(format!(
                            "{} likes {}.",
                            show(s.get("name")),
                            show(color.get("color"))
                        )),
                        None => ask(vec![("step2", color_form())], Some(s.clone())),
                    });
                }
                let name = state
                    .as_ref()
                    .filter(|s| s.get("step").is_some_and(|step| step == "name"))
                    .and_then(|_| accepted(&answers, "step1"));
                match name {
                    None => ask(
                        vec![(
                            "step1",
                            form("Step 1: What is your name?", "name", "string"),
                        )],
                        Some(json!({"step": "name"})),
                    ),
                    Some(name) => ask(
                        vec![("step2", color_form())],
                        Some(
                            json!({"step": "color", "name": name.get("name").cloned().unwrap_or(Value::Null)}),
                        ),
                    ),
                }
            }
            _ => return None,
        })
    }
}

impl ServerHandler for Fixtures {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new(
            "mrtr-state-example-rust",
            "1.0.0",
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            FIXTURES.iter().map(|(name, _)| fixture(name)).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        FIXTURES
            .iter()
            .any(|(fixture_name, _)| *fixture_name == name)
            .then(|| fixture(name))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(&request, &context).ok_or_else(|| {
            ErrorData::invalid_params(format!("Unknown tool: {}", request.name), None)
        })
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompt = Prompt::new(PROMPT, Some("A prompt that asks for context first."), None);
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != PROMPT {
            return Err(ErrorData::invalid_params(
                format!("Unknown prompt: {}", request.name),
                None,
            ));
        }
        let answer = request
            .input_responses
            .as_ref()
            .and_then(|answers| answers.get("user_context"));
        if let Some(answer) =
            answer.filter(|a| a.get("action").is_some_and(|action| action == "accept"))
            && request.request_state.is_some()
        {
            let context = show(
                answer
                    .get("content")
                    .and_then(|content| content.get("context")),
            );
            let message =
                PromptMessage::new_text(Role::User, format!("Use this context: {context}"));
            return Ok(GetPromptResult::new(vec![message]).into());
        }
        let requests: InputRequests = [(
            "user_context".to_owned(),
            form("What context should the prompt use?", "context", "string"),
        )]
        .into();
        Ok(
            InputRequiredResult::new(Some(requests), Some(r#"{"asked":"user_context"}"#.into()))
                .into(),
        )
    }
}

fn fixture(name: &str) -> Tool {
    let description = FIXTURES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, d)| d);
    let schema = match json!({"type": "object"}) {
        Value::Object(schema) => schema,
        _ => unreachable!("a schema is an object"),
    };
    Tool::new(name.to_owned(), description.to_owned(), schema)
}
