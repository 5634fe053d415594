//! A protected round trip with rmcp's own client: a server on loopback (a bearer check that puts the
//! user in the request's extensions, the boundary's layer and handler wrapper, rmcp's stateless
//! Streamable HTTP service) called with `call_tool_once`, the rounds driven by hand so the state is seen.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use mrtr_state::Target;
use mrtr_state_rmcp::{AuthenticatedUser, REASON_META_KEY, StateBoundary, verified_state};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputRequiredResult,
    ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, RoleServer,
    ServerHandler,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;

mod support;

/// `deploy`: asks to confirm, with the environment in the state; deploys on a yes with a verified state.
#[derive(Clone)]
struct Deployer;

impl ServerHandler for Deployer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let env = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("env"))
            .cloned()
            .unwrap_or(Value::Null);
        let yes = request
            .input_responses
            .as_ref()
            .and_then(|answers| answers.get("confirm"))
            .is_some_and(|answer| {
                answer["action"] == "accept" && answer["content"]["confirm"] == true
            });
        match verified_state(&context) {
            Some(state) if yes => {
                let text = format!("Deployed to {}.", state["env"].as_str().unwrap_or("?"));
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
            _ => {
                Ok(InputRequiredResult::from_request_state(json!({"env": env}).to_string()).into())
            }
        }
    }
}

#[derive(Clone, Default)]
struct NoInput;

impl ClientHandler for NoInput {}

async fn bearer(mut request: Request, next: Next) -> Response {
    let header = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let user = match header.as_deref() {
        Some("Bearer alice-token") => "alice",
        Some("Bearer bob-token") => "bob",
        _ => return StatusCode::UNAUTHORIZED.into_response(),
    };
    request
        .extensions_mut()
        .insert(AuthenticatedUser::new(user));
    next.run(request).await
}

/// The server on a free loopback port; its URL. It stops when `stop` is cancelled.
async fn serve(stop: &CancellationToken) -> String {
    let boundary =
        StateBoundary::new(Arc::new(support::sealer())).single_use([Target::Tool("deploy".into())]);
    let handler = boundary.handler(Deployer);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let router = axum::Router::new()
        .route_service("/mcp", boundary.layer().layer(service))
        .route_layer(middleware::from_fn(bearer));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let stop = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
    });
    format!("http://{address}/mcp")
}

async fn client(url: &str, token: &str) -> RunningService<RoleClient, NoInput> {
    // reqwest needs a rustls provider even for http://; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    NoInput
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("the client connects")
}

fn deploy(state: Option<&str>) -> CallToolRequestParams {
    let arguments = json!({"env": "staging"}).as_object().cloned().unwrap();
    let mut params = CallToolRequestParams::new("deploy").with_arguments(arguments);
    if let Some(state) = state {
        let yes = json!({"action": "accept", "content": {"confirm": true}});
        params = params
            .with_request_state(state)
            .with_input_responses([("confirm".to_owned(), yes)].into());
    }
    params
}

fn refusal(response: CallToolResponse) -> String {
    let CallToolResponse::Complete(result) = response else {
        panic!("expected a tool error, got {response:?}");
    };
    assert_eq!(result.is_error, Some(true), "{result:?}");
    result
        .meta
        .and_then(|meta| meta.0.get(REASON_META_KEY).cloned())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rmcp_client_completes_a_protected_round_trip() {
    let stop = CancellationToken::new();
    let url = serve(&stop).await;
    let alice = client(&url, "alice-token").await;
    let CallToolResponse::InputRequired(asked) = alice.call_tool_once(deploy(None)).await.unwrap()
    else {
        panic!("the tool asks first");
    };
    let token = asked.request_state.expect("a sealed state");
    assert_eq!(
        token.split('.').count(),
        3,
        "a compact JWS, not the handler's JSON"
    );

    let bob = client(&url, "bob-token").await;
    assert_eq!(
        refusal(bob.call_tool_once(deploy(Some(&token))).await.unwrap()),
        "wrong_user"
    );

    let CallToolResponse::Complete(done) =
        alice.call_tool_once(deploy(Some(&token))).await.unwrap()
    else {
        panic!("the retry completes");
    };
    assert_eq!(
        done.content[0].as_text().map(|t| t.text.as_str()),
        Some("Deployed to staging.")
    );
    assert_eq!(
        refusal(alice.call_tool_once(deploy(Some(&token))).await.unwrap()),
        "replayed"
    );

    let _ = alice.cancel().await;
    let _ = bob.cancel().await;
    stop.cancel();
}
