//! The boundary in front of rmcp's stateless Streamable HTTP service, driven in process with raw
//! JSON-RPC over HTTP requests (no socket): the round trip, each refusal and its wire form, the edge
//! inputs of profile 8.2, and the fail-closed paths.

use std::future::poll_fn;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use mrtr_state::{Reason, Target};
use mrtr_state_rmcp::{AuthenticatedUser, Principal, StateBoundary, ToolRefusal, verified_state};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, InputRequiredResult, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents, Role,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tower_layer::Layer;
use tower_service::Service;

mod support;

/// A handler whose three targets ask on a first round (state `{"n": 1}`) and, on a retry, tell what
/// they were handed: the verified state, the request_state text, and whether answers came.
#[derive(Clone)]
struct Probe;

fn asks() -> InputRequiredResult {
    InputRequiredResult::from_request_state(r#"{"n": 1}"#)
}

fn told(
    request_state: Option<&str>,
    answered: bool,
    context: &RequestContext<RoleServer>,
) -> String {
    json!({
        "state": verified_state(context),
        "text": request_state,
        "answered": answered,
    })
    .to_string()
}

impl ServerHandler for Probe {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.request_state.is_none() && request.input_responses.is_none() {
            return Ok(asks().into());
        }
        let text = told(
            request.request_state.as_deref(),
            request.input_responses.is_some(),
            &context,
        );
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.request_state.is_none() {
            return Ok(asks().into());
        }
        let text = told(
            request.request_state.as_deref(),
            request.input_responses.is_some(),
            &context,
        );
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.request_state.is_none() {
            return Ok(asks().into());
        }
        let text = told(
            request.request_state.as_deref(),
            request.input_responses.is_some(),
            &context,
        );
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }
}

type Endpoint = Box<
    dyn FnMut(
            Request<Full<Bytes>>,
        ) -> std::pin::Pin<Box<dyn Future<Output = Response<Bytes>> + Send>>
        + Send,
>;

async fn collect<B: Body>(response: Response<B>) -> Response<Bytes> {
    let (parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    Response::from_parts(parts, bytes)
}

fn rmcp_service<H: ServerHandler + Clone>(
    handler: H,
) -> StreamableHttpService<H, NeverSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

/// The boundary's layer and handler around rmcp's service, as a server assembles them.
fn endpoint(boundary: &StateBoundary) -> Endpoint {
    let service = boundary
        .layer()
        .layer(rmcp_service(boundary.handler(Probe)));
    Box::new(move |request| {
        let mut service = service.clone();
        Box::pin(async move {
            poll_fn(|cx| Service::<Request<Full<Bytes>>>::poll_ready(&mut service, cx))
                .await
                .unwrap();
            collect(service.call(request).await.unwrap()).await
        })
    })
}

/// The handler wrapper without the layer: a server that forgot it.
fn endpoint_without_layer(boundary: &StateBoundary) -> Endpoint {
    let service = rmcp_service(boundary.handler(Probe));
    Box::new(move |request| {
        let mut service = service.clone();
        Box::pin(async move { collect(service.call(request).await.unwrap()).await })
    })
}

fn boundary() -> StateBoundary {
    StateBoundary::new(Arc::new(support::sealer())).single_use([Target::Tool("once".into())])
}

/// A JSON-RPC request to `method` with `params` (the per-request _meta of 2026-07-28 added), as `user`.
fn post(method: &str, mut params: Value, user: Option<&str>) -> Request<Full<Bytes>> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "boundary-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let id = params.get("_test_id").cloned().unwrap_or(json!(7));
    if let Some(params) = params.as_object_mut() {
        params.remove("_test_id");
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut request = Request::post("http://127.0.0.1/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let mut request = request
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    if let Some(user) = user {
        request
            .extensions_mut()
            .insert(AuthenticatedUser::new(user));
    }
    request
}

/// Sends a request and reads its JSON answer: HTTP 200, except a JSON-RPC `-32602` error, which MCP
/// 2026-07-28 (SEP-2575) sends with 400 (and `-32601` with 404), as every language's server does.
async fn send(endpoint: &mut Endpoint, request: Request<Full<Bytes>>) -> Value {
    let response = endpoint(request).await;
    let answer: Value = serde_json::from_slice(response.body()).unwrap();
    let expected = match answer["error"]["code"].as_i64() {
        Some(-32602) => 400,
        Some(-32601) => 404,
        _ => 200,
    };
    assert_eq!(response.status(), expected, "{answer}");
    answer
}

/// The token of an input_required answer.
fn token_of(answer: &Value) -> String {
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    answer["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn one_byte_changed(token: &str) -> String {
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let middle = parts.len() - 2;
    let mut bytes = parts[middle].clone().into_bytes();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    parts[middle] = String::from_utf8(bytes).unwrap();
    parts.join(".")
}

fn assert_tool_refusal(answer: &Value, reason: Reason) {
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert_eq!(
        result["_meta"]["io.github.mrtr-state/reason"],
        reason.as_str(),
        "{answer}"
    );
    assert_eq!(result["content"][0]["text"], reason.message(), "{answer}");
}

fn assert_jsonrpc_refusal(answer: &Value, reason: Reason) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["message"], reason.message(), "{answer}");
    assert_eq!(
        answer["error"]["data"]["reason"],
        reason.as_str(),
        "{answer}"
    );
}

fn tool(name: &str, arguments: Value, state: Option<Value>) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    if let Some(state) = state {
        params["requestState"] = state;
        params["inputResponses"] = json!({"q": {"action": "accept", "content": {}}});
    }
    params
}

fn completed_text(answer: &Value) -> Value {
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_round_trip_hands_the_handler_the_verified_state_and_never_the_token() {
    let mut endpoint = endpoint(&boundary());
    let asked = send(
        &mut endpoint,
        post(
            "tools/call",
            tool("t", json!({"a": 1}), None),
            Some("alice"),
        ),
    )
    .await;
    let token = token_of(&asked);
    assert_eq!(token.split('.').count(), 3, "a compact JWS: {token}");
    assert!(!token.contains("\"n\""));
    let done = send(
        &mut endpoint,
        post(
            "tools/call",
            tool("t", json!({"a": 1}), Some(json!(token))),
            Some("alice"),
        ),
    )
    .await;
    let seen = completed_text(&done);
    assert_eq!(
        seen,
        json!({"state": {"n": 1}, "text": "{\"n\":1}", "answered": true})
    );
}

#[tokio::test]
async fn a_changed_state_another_users_and_other_arguments_are_refused_before_the_handler() {
    let mut endpoint = endpoint(&boundary());
    let asked = send(
        &mut endpoint,
        post(
            "tools/call",
            tool("t", json!({"a": 1}), None),
            Some("alice"),
        ),
    )
    .await;
    let token = token_of(&asked);
    let changed = tool("t", json!({"a": 1}), Some(json!(one_byte_changed(&token))));
    assert_tool_refusal(
        &send(&mut endpoint, post("tools/call", changed, Some("alice"))).await,
        Reason::BadSignature,
    );
    let bobs = tool("t", json!({"a": 1}), Some(json!(token)));
    assert_tool_refusal(
        &send(&mut endpoint, post("tools/call", bobs, Some("bob"))).await,
        Reason::WrongUser,
    );
    let other = tool("t", json!({"a": 2}), Some(json!(token)));
    assert_tool_refusal(
        &send(&mut endpoint, post("tools/call", other, Some("alice"))).await,
        Reason::WrongRequest,
    );
    let other_tool = tool("u", json!({"a": 1}), Some(json!(token)));
    assert_tool_refusal(
        &send(&mut endpoint, post("tools/call", other_tool, Some("alice"))).await,
        Reason::WrongTool,
    );
}

#[tokio::test]
async fn a_single_use_state_opens_once() {
    let mut endpoint = endpoint(&boundary());
    let token = token_of(
        &send(
            &mut endpoint,
            post("tools/call", tool("once", json!({}), None), Some("alice")),
        )
        .await,
    );
    let retry = || {
        post(
            "tools/call",
            tool("once", json!({}), Some(json!(token.clone()))),
            Some("alice"),
        )
    };
    completed_text(&send(&mut endpoint, retry()).await);
    assert_tool_refusal(&send(&mut endpoint, retry()).await, Reason::Replayed);
}

#[tokio::test]
async fn edge_inputs_get_the_profiles_answers() {
    let mut endpoint = endpoint(&boundary());
    let token = token_of(
        &send(
            &mut endpoint,
            post("tools/call", tool("t", json!({}), None), Some("alice")),
        )
        .await,
    );
    // An empty or non-string state is a malformed token, not a first round.
    for state in [json!(""), json!(5), json!({"n": 1}), json!(["x"])] {
        let answer = send(
            &mut endpoint,
            post(
                "tools/call",
                tool("t", json!({}), Some(state)),
                Some("alice"),
            ),
        )
        .await;
        assert_tool_refusal(&answer, Reason::Malformed);
    }
    // Arguments null or not an object are unbindable: the state is refused, it is never {}.
    for arguments in [Value::Null, json!([1]), json!("a"), json!(3)] {
        let params = tool("t", arguments, Some(json!(token.clone())));
        assert_tool_refusal(
            &send(&mut endpoint, post("tools/call", params, Some("alice"))).await,
            Reason::WrongRequest,
        );
    }
    // Absent arguments are {}: the state minted for {} opens.
    let params = json!({"name": "t", "requestState": token});
    completed_text(&send(&mut endpoint, post("tools/call", params, Some("alice"))).await);
    // A null state is a first round.
    let params = json!({"name": "t", "arguments": {}, "requestState": null});
    token_of_first_round(&send(&mut endpoint, post("tools/call", params, Some("alice"))).await);
}

fn token_of_first_round(answer: &Value) {
    token_of(answer);
}

#[tokio::test]
async fn answers_on_a_first_round_never_reach_the_handler() {
    let mut endpoint = endpoint(&boundary());
    let params = json!({"name": "t", "arguments": {}, "inputResponses": {"q": {"action": "accept", "content": {}}}});
    // The probe completes when it sees answers; with them dropped, it asks.
    token_of(&send(&mut endpoint, post("tools/call", params, Some("alice"))).await);
}

#[tokio::test]
async fn a_state_without_a_usable_target_or_user_is_an_error_not_a_refusal() {
    let mut endpoint = endpoint(&boundary());
    let answer = send(
        &mut endpoint,
        post(
            "tools/call",
            json!({"name": "", "requestState": "x"}),
            Some("alice"),
        ),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "tools/call needs a non-empty string 'name'"
    );
    let answer = send(
        &mut endpoint,
        post("tools/call", tool("t", json!({}), Some(json!("x"))), None),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    // Nor is a state sealed for nobody.
    let answer = send(
        &mut endpoint,
        post("tools/call", tool("t", json!({}), None), None),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no authenticated principal"),
        "{answer}"
    );
}

#[tokio::test]
async fn unbindable_arguments_get_no_state() {
    let mut endpoint = endpoint(&boundary());
    let answer = send(
        &mut endpoint,
        post("tools/call", tool("t", Value::Null, None), Some("alice")),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be bound"),
        "{answer}"
    );
}

#[tokio::test]
async fn prompts_resources_and_jsonrpc_tool_refusals_are_json_rpc_errors() {
    let mut endpoint = endpoint(&boundary().tool_refusal(ToolRefusal::JsonRpc));
    let prompt = |state: Option<&str>, user| {
        let mut params = json!({"name": "p", "arguments": {"x": "1"}});
        if let Some(state) = state {
            params["requestState"] = json!(state);
        }
        post("prompts/get", params, Some(user))
    };
    let token = token_of(&send(&mut endpoint, prompt(None, "alice")).await);
    let done = send(&mut endpoint, prompt(Some(&token), "alice")).await;
    assert!(
        done["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("\"n\":1"),
        "{done}"
    );
    assert_jsonrpc_refusal(
        &send(&mut endpoint, prompt(Some(&token), "bob")).await,
        Reason::WrongUser,
    );

    let resource = |state: Option<&str>| {
        let mut params = json!({"uri": "res://x"});
        if let Some(state) = state {
            params["requestState"] = json!(state);
        }
        post("resources/read", params, Some("alice"))
    };
    let token = token_of(&send(&mut endpoint, resource(None)).await);
    let done = send(&mut endpoint, resource(Some(&token))).await;
    assert!(
        done["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"n\":1"),
        "{done}"
    );
    assert_jsonrpc_refusal(
        &send(&mut endpoint, resource(Some(&one_byte_changed(&token)))).await,
        Reason::BadSignature,
    );

    let tool_token = {
        let asked = send(
            &mut endpoint,
            post("tools/call", tool("t", json!({}), None), Some("alice")),
        )
        .await;
        self::token_of(&asked)
    };
    let answer = send(
        &mut endpoint,
        post(
            "tools/call",
            tool("t", json!({}), Some(json!(tool_token))),
            Some("bob"),
        ),
    )
    .await;
    assert_jsonrpc_refusal(&answer, Reason::WrongUser);
}

#[tokio::test]
async fn a_fixed_principal_binds_every_request() {
    let mut endpoint = endpoint(&boundary().principal(Principal::Fixed("local-user".into())));
    let token = token_of(
        &send(
            &mut endpoint,
            post("tools/call", tool("t", json!({}), None), None),
        )
        .await,
    );
    // The authenticated user does not matter: the fixed principal is the user.
    let done = send(
        &mut endpoint,
        post(
            "tools/call",
            tool("t", json!({}), Some(json!(token))),
            Some("bob"),
        ),
    )
    .await;
    completed_text(&done);
}

#[tokio::test]
async fn without_the_layer_the_handler_wrapper_fails_closed() {
    let boundary = boundary();
    let mut with_layer = endpoint(&boundary);
    let token = token_of(
        &send(
            &mut with_layer,
            post("tools/call", tool("t", json!({}), None), Some("alice")),
        )
        .await,
    );
    let mut without = endpoint_without_layer(&boundary);
    let answer = send(
        &mut without,
        post(
            "tools/call",
            tool("t", json!({}), Some(json!(token))),
            Some("alice"),
        ),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let answer = send(
        &mut without,
        post("tools/call", tool("t", json!({}), None), Some("alice")),
    )
    .await;
    assert_eq!(
        answer["error"]["code"], -32603,
        "a state is never sent unsealed: {answer}"
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_answered_413() {
    let mut endpoint = endpoint(&boundary().max_body_bytes(64));
    let response = endpoint(post(
        "tools/call",
        tool("t", json!({"pad": "x".repeat(100)}), None),
        Some("alice"),
    ))
    .await;
    assert_eq!(response.status(), 413);
}

#[tokio::test]
async fn a_body_nested_past_the_json_readers_limit_reaches_no_handler() {
    let mut endpoint = endpoint(&boundary());
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!({"d": deep});
    }
    let request = post(
        "tools/call",
        tool("t", json!({"deep": deep}), Some(json!("x.y.z"))),
        Some("alice"),
    );
    let response = endpoint(request).await;
    let text = String::from_utf8_lossy(response.body()).into_owned();
    assert!(!text.contains("\"result\""), "no handler ran: {text}");
    assert!(!text.contains("answered"), "{text}");
}

#[tokio::test]
async fn a_request_rmcp_turns_away_for_its_headers_redeems_no_state() {
    let mut endpoint = endpoint(&boundary());
    let asked = send(
        &mut endpoint,
        post("tools/call", tool("once", json!({}), None), Some("alice")),
    )
    .await;
    let token = token_of(&asked);
    let retry = || {
        post(
            "tools/call",
            tool("once", json!({}), Some(json!(token.clone()))),
            Some("alice"),
        )
    };
    // Without text/event-stream in Accept rmcp answers 406 unread; the state must survive that.
    let mut unacceptable = retry();
    unacceptable
        .headers_mut()
        .insert("accept", "application/json".parse().unwrap());
    assert_eq!(endpoint(unacceptable).await.status(), 406);
    completed_text(&send(&mut endpoint, retry()).await);
}

/// The boundary in front of rmcp answering as an event stream (`json_response` off), as rmcp does when a
/// handler sends anything before its result: the answer is the same, only framed as SSE.
#[tokio::test]
async fn answers_framed_as_an_event_stream_are_sealed_and_refused_alike() {
    let boundary = boundary();
    let handler = boundary.handler(Probe);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(false)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let service = boundary.layer().layer(service);
    let call = |request: Request<Full<Bytes>>| {
        let mut service = service.clone();
        async move {
            let response = Service::<Request<Full<Bytes>>>::call(&mut service, request)
                .await
                .unwrap();
            assert_eq!(response.headers()["content-type"], "text/event-stream");
            // The stream ends after the one answer; read it whole and take the data line holding it.
            let body = String::from_utf8(collect(response).await.into_body().to_vec()).unwrap();
            let data = body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .find(|data| data.contains("\"jsonrpc\""))
                .unwrap_or_else(|| panic!("no JSON-RPC message in {body}"))
                .trim()
                .to_owned();
            serde_json::from_str::<Value>(&data).unwrap()
        }
    };
    let asked = call(post(
        "tools/call",
        tool("t", json!({}), None),
        Some("alice"),
    ))
    .await;
    let token = token_of(&asked);
    assert_eq!(token.split('.').count(), 3);
    let bobs = call(post(
        "tools/call",
        tool("t", json!({}), Some(json!(token))),
        Some("bob"),
    ))
    .await;
    assert_tool_refusal(&bobs, Reason::WrongUser);
    let done = call(post(
        "tools/call",
        tool("t", json!({}), Some(json!(token))),
        Some("alice"),
    ))
    .await;
    assert_eq!(completed_text(&done)["state"], json!({"n": 1}));
}

#[tokio::test]
async fn a_string_request_id_is_matched_like_a_number() {
    let mut endpoint = endpoint(&boundary());
    let mut params = tool("t", json!({}), None);
    params["_test_id"] = json!("call-1");
    let asked = send(&mut endpoint, post("tools/call", params, Some("alice"))).await;
    assert_eq!(asked["id"], "call-1");
    let mut params = tool("t", json!({}), Some(json!(token_of(&asked))));
    params["_test_id"] = json!("call-2");
    let done = send(&mut endpoint, post("tools/call", params, Some("alice"))).await;
    assert_eq!(completed_text(&done)["state"], json!({"n": 1}));
}

#[tokio::test]
async fn answers_that_are_no_results_and_prompt_arguments_that_are_no_strings_are_invalid_params() {
    let mut endpoint = endpoint(&boundary());
    let token = token_of(
        &send(
            &mut endpoint,
            post("tools/call", tool("once", json!({}), None), Some("alice")),
        )
        .await,
    );
    // inputResponses that is not an object is refused before the state is opened: the single-use
    // state still completes.
    for responses in [json!(["yes"]), json!("yes")] {
        let mut params = tool("once", json!({}), Some(json!(token.clone())));
        params["inputResponses"] = responses;
        let answer = send(&mut endpoint, post("tools/call", params, Some("alice"))).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
    let params = tool("once", json!({}), Some(json!(token)));
    completed_text(&send(&mut endpoint, post("tools/call", params, Some("alice"))).await);
    // An entry that is no result is refused once the state opens, as Python's boundary refuses it:
    // -32602 naming the entry, never its value.
    let token = token_of(
        &send(
            &mut endpoint,
            post("tools/call", tool("once", json!({}), None), Some("alice")),
        )
        .await,
    );
    let mut params = tool("once", json!({}), Some(json!(token)));
    params["inputResponses"] = json!({"q": "yes-kept-secret"});
    let answer = send(&mut endpoint, post("tools/call", params, Some("alice"))).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(r#"inputResponses["q"]"#), "{answer}");
    assert!(!message.contains("yes-kept-secret"), "{answer}");
    // A refused state is refused first, whatever its answers hold.
    let mut params = tool("once", json!({}), Some(json!("not-a-token")));
    params["inputResponses"] = json!({"q": "yes"});
    let answer = send(&mut endpoint, post("tools/call", params, Some("alice"))).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    // On a first round, prompts/get arguments that are not an object of strings (a value that is not a
    // string, or arguments that are a string or an array, which rmcp would answer -32601) are -32602.
    for arguments in [json!({"x": 1}), json!("x"), json!([1])] {
        let prompt = json!({"name": "p", "arguments": arguments});
        let answer = send(&mut endpoint, post("prompts/get", prompt, Some("alice"))).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("object of strings"),
            "{answer}"
        );
    }
}

#[tokio::test]
async fn a_lone_surrogate_reaches_no_handler() {
    let mut endpoint = endpoint(&boundary());
    // serde_json (the layer's reader and rmcp's) refuses a lone surrogate escape in the whole body.
    let request = post(
        "tools/call",
        tool("t", json!({"s": "PLACEHOLDER"}), Some(json!("x.y.z"))),
        Some("alice"),
    );
    let (parts, body) = request.into_parts();
    let text = String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap();
    let text = text.replace("PLACEHOLDER", "\\ud800");
    let response = endpoint(Request::from_parts(parts, Full::new(Bytes::from(text)))).await;
    let answer = String::from_utf8_lossy(response.body()).into_owned();
    assert!(!answer.contains("\"result\""), "no handler ran: {answer}");
}

#[test]
fn input_required_without_a_state_records_what_it_asked() {
    let question: rmcp::model::InputRequest =
        serde_json::from_value(json!({"method": "roots/list"})).unwrap();
    let asked = mrtr_state_rmcp::input_required(
        [
            ("b".to_owned(), question.clone()),
            ("a".to_owned(), question),
        ]
        .into(),
        None,
    );
    assert_eq!(
        asked.request_state.as_deref(),
        Some(r#"{"asked":["a","b"]}"#)
    );
    let kept = mrtr_state_rmcp::input_required(Default::default(), Some(json!({"step": 2})));
    assert_eq!(kept.request_state.as_deref(), Some(r#"{"step":2}"#));
}

/// The token of `spec/vectors/tokens.json` named `id`, with a sealer that opens it (the vectors' ring,
/// issuer and clock).
fn vector_token(id: &str) -> (String, mrtr_state::StateSealer) {
    let vectors = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(vectors.join(name)).unwrap()).unwrap()
    };
    let (keys, tokens) = (read("keys.json"), read("tokens.json"));
    let vector = tokens["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|vector| vector["id"] == id)
        .unwrap();
    let now = vector["now"].as_i64().unwrap();
    let ring = mrtr_state::Keyring::from_jwks_value(&json!({"keys": [keys["hs256"]]})).unwrap();
    let sealer = mrtr_state::StateSealer::builder(ring)
        .issuer(tokens["defaults"]["issuer"].as_str().unwrap())
        .clock(move || now)
        .build()
        .unwrap();
    (vector["token"].as_str().unwrap().to_owned(), sealer)
}

#[tokio::test]
async fn tool_arguments_that_are_not_an_object_are_invalid_params_never_rmcps_method_not_found() {
    // A first round: MCP allows only an object, and the Python, npm and Java SDKs answer -32602 (with
    // HTTP 400, which `send` checks); rmcp's typed params would answer -32601 with HTTP 404. The
    // message says why and never shows the value.
    let mut first = endpoint(&boundary());
    for arguments in [json!("secret-x"), json!([1]), json!(42), json!(true)] {
        let answer = send(
            &mut first,
            post("tools/call", tool("t", arguments, None), Some("alice")),
        )
        .await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("must be a JSON object"), "{answer}");
        assert!(!message.contains("secret"), "{answer}");
    }
    // A retry whose state opens (a token bound to no arguments, accepted without the binding): the
    // same answer, never rmcp's -32601; with arguments absent the same token completes.
    let (token, sealer) = vector_token("valid-hs256-retry-without-arguments");
    let mut opens = endpoint(&StateBoundary::new(Arc::new(sealer)).require_arguments(false));
    let answer = send(
        &mut opens,
        post(
            "tools/call",
            tool("deploy", json!("x"), Some(json!(token.clone()))),
            Some("alice"),
        ),
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let params = json!({"name": "deploy", "requestState": token});
    completed_text(&send(&mut opens, post("tools/call", params, Some("alice"))).await);
}
