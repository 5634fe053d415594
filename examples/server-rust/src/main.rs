//! The mrtr-state example MCP server in Rust: `delete_branch` and `book_trip` over Streamable HTTP on
//! loopback, with bearer-token users, on the official Rust MCP SDK (rmcp) and the mrtr-state crates. The
//! twin of `examples/server` (Python), `server-ts`, `server-go` and `server-java`: the same tools, users,
//! issuer and key ring (`MRTR_STATE_KEYS`), so they serve one fleet.
//!
//! ```text
//! server-rust [--host 127.0.0.1] [--port 0] [--issuer URL] [--ttl 600]
//!             [--tool-refusal tool_error|jsonrpc] [--redis-url redis://...]
//!             [--dev-key [--dev-key-alg EdDSA|HS256|A256GCM]] [--conformance]
//!             [--stdio [--stdio-user USER]]
//! ```
//!
//! Prints `example server: listening on http://HOST:PORT/mcp (...)` once it accepts connections. Its
//! Ed25519 public keys are at `/.well-known/mrtr-state-jwks.json`. With `--stdio` it serves the same tools
//! over standard input and output instead, for one user (`--stdio-user`, by default the login name).

mod asking;
mod conformance;
mod keys;
mod stdio;
mod tools;

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mrtr_state::{StateSealer, Target};
use mrtr_state_rmcp::{AuthenticatedUser, Principal, StateBoundary, StateHandler, ToolRefusal};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;

use crate::tools::{Airline, Example, GitHost};

const DEFAULT_ISSUER: &str = "https://tools.example.com";
const DEFAULT_TTL: u64 = 600;
const JWKS_PATH: &str = "/.well-known/mrtr-state-jwks.json";
/// The one user of the conformance server: the suite's harness sends no credentials.
const CONFORMANCE_PRINCIPAL: &str = "conformance-harness";
/// The example's users, as the Python example has them: bearer token, user.
const EXAMPLE_TOKENS: [(&str, &str); 2] = [
    ("alice-example-token", "alice"),
    ("bob-example-token", "bob"),
];

/// The command line.
struct Options {
    host: String,
    port: u16,
    issuer: String,
    ttl: u64,
    tool_refusal: ToolRefusal,
    dev_key: Option<String>,
    redis_url: Option<String>,
    conformance: bool,
    stdio: bool,
    stdio_user: Option<String>,
}

const USAGE: &str = "usage: server-rust [--host 127.0.0.1] [--port 0] [--issuer URL] [--ttl 600] \
    [--tool-refusal tool_error|jsonrpc] [--redis-url redis://... (default $MRTR_STATE_REDIS_URL)] \
    [--dev-key [--dev-key-alg EdDSA|HS256|A256GCM]] [--conformance] [--stdio [--stdio-user USER]]";

fn parse(argv: &[String]) -> Result<Options, String> {
    let mut options = Options {
        host: "127.0.0.1".into(),
        port: 0,
        issuer: DEFAULT_ISSUER.into(),
        ttl: DEFAULT_TTL,
        tool_refusal: ToolRefusal::ToolError,
        dev_key: None,
        // Keep a URL with a password in the environment rather than on the command line.
        redis_url: std::env::var("MRTR_STATE_REDIS_URL")
            .ok()
            .filter(|url| !url.is_empty()),
        conformance: false,
        stdio: false,
        stdio_user: None,
    };
    let mut dev_key = false;
    let mut dev_key_alg = "EdDSA".to_owned();
    let mut args = argv.iter();
    while let Some(arg) = args.next() {
        // Go's flag syntax, which the fleet uses: -name or --name, then the value, or --name=value.
        let name = arg.trim_start_matches('-');
        if name.len() == arg.len() {
            return Err(format!("unexpected argument '{arg}'"));
        }
        let (name, inline) = match name.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (name, None),
        };
        if name == "dev-key" || name == "conformance" || name == "stdio" {
            let on = inline.is_none_or(|value| value == "true");
            match name {
                "dev-key" => dev_key = on,
                "stdio" => options.stdio = on,
                _ => options.conformance = on,
            }
            continue;
        }
        let value = match inline {
            Some(value) => value,
            None => args
                .next()
                .cloned()
                .ok_or_else(|| format!("--{name} needs a value"))?,
        };
        match name {
            "host" => options.host = value,
            "port" => {
                options.port = value
                    .parse()
                    .map_err(|_| "--port must be a port number".to_owned())?
            }
            "issuer" => options.issuer = value,
            "ttl" => {
                options.ttl = value
                    .parse()
                    .ok()
                    .filter(|ttl| *ttl >= 1)
                    .ok_or("--ttl must be at least 1")?;
            }
            "tool-refusal" => {
                options.tool_refusal = match value.as_str() {
                    "tool_error" => ToolRefusal::ToolError,
                    "jsonrpc" => ToolRefusal::JsonRpc,
                    _ => return Err("--tool-refusal must be tool_error or jsonrpc".into()),
                }
            }
            "dev-key-alg" => dev_key_alg = value,
            "redis-url" => options.redis_url = Some(value).filter(|url| !url.is_empty()),
            "stdio-user" => options.stdio_user = Some(value),
            _ => return Err(format!("unknown option --{name}")),
        }
    }
    options.dev_key = dev_key.then_some(dev_key_alg);
    Ok(options)
}

/// The server's handler: the tools, before the boundary wraps it.
#[derive(Clone)]
struct ExampleServer(Example);

impl ServerHandler for ExampleServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mrtr-state-example-rust", "1.0.0"))
            .with_instructions("Delete branches (after the person confirms) and book trips.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::tools().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.call(&request, &context)
    }
}

/// Constant-time equality of two byte strings of the same length (the lengths are not secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The bearer check: the user of a known token goes into the request's extensions, where the boundary
/// reads the principal; anything else is answered 401 before the body is read.
async fn bearer(mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::as_bytes);
    let user = presented.and_then(|token| {
        EXAMPLE_TOKENS
            .iter()
            .find(|(known, _)| same(known.as_bytes(), token))
            .map(|(_, user)| *user)
    });
    let Some(user) = user else {
        let mut response = (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "application/json")],
            r#"{"error":"invalid_token","error_description":"Authentication required"}"#,
        )
            .into_response();
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer error=\"invalid_token\""),
        );
        return response;
    };
    request
        .extensions_mut()
        .insert(AuthenticatedUser::new(user));
    next.run(request).await
}

/// The host name of a Host header value (`name`, `name:port`, `[v6]:port`), lower case.
fn host_name(value: &str) -> Option<String> {
    let name = if let Some(rest) = value.strip_prefix('[') {
        rest.split_once(']')?.0
    } else {
        value.rsplit_once(':').map_or(value, |(name, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                name
            } else {
                value
            }
        })
    };
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

/// DNS rebinding protection, as the Python example has it: a foreign Host is answered 421, before the
/// bearer check and before the body is read.
async fn host_check(allowed: Arc<Vec<String>>, request: Request, next: Next) -> Response {
    let name = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .and_then(host_name);
    if !name.is_some_and(|name| allowed.contains(&name)) {
        return (StatusCode::MISDIRECTED_REQUEST, "Invalid Host header").into_response();
    }
    next.run(request).await
}

fn allowed_hosts(host: &str) -> Vec<String> {
    let mut allowed: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(str::to_owned).into();
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if !allowed.contains(&host) {
        allowed.push(host);
    }
    allowed
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&argv) {
        Ok(options) => options,
        Err(problem) => {
            eprintln!("example server: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("example server: cannot start the runtime: {error}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(serve(options))
}

async fn serve(options: Options) -> ExitCode {
    let source = match keys::load(options.dev_key.as_deref()) {
        Ok(source) => source,
        Err(problem) => {
            eprintln!(
                "example server: {problem}\nexample server: or start it with --dev-key for an ephemeral key"
            );
            return ExitCode::from(2);
        }
    };
    let ttl = Duration::from_secs(options.ttl);
    let sealer = match keys::sealer(&source, &options.issuer, ttl, options.redis_url.as_deref()) {
        Ok(sealer) => Arc::new(sealer),
        Err(problem) => {
            eprintln!("example server: {problem}");
            return ExitCode::from(2);
        }
    };
    if options.stdio {
        let Some(user) = stdio::user(options.stdio_user.clone()) else {
            eprintln!("example server: --stdio needs --stdio-user (the login name is unknown)");
            return ExitCode::from(2);
        };
        let (boundary, handler) = example(sealer, options.tool_refusal);
        return stdio::serve(&boundary, handler, &user, options.ttl).await;
    }
    let app = app(sealer, source, &options);
    let ip: IpAddr = match options
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
    {
        Ok(ip) => ip,
        Err(_) => {
            eprintln!("example server: --host must be an IP address, such as 127.0.0.1");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(SocketAddr::new(ip, options.port)).await {
        Ok(listener) => listener,
        Err(_) => {
            eprintln!(
                "example server: cannot listen on {}:{}",
                options.host, options.port
            );
            return ExitCode::from(2);
        }
    };
    let address = listener.local_addr().map_or_else(
        |_| format!("{}:{}", options.host, options.port),
        |a| a.to_string(),
    );
    println!(
        "example server: listening on http://{address}/mcp (delete_branch, book_trip, ttl {} s)",
        options.ttl
    );
    let (router, cancel) = app;
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            cancel.cancel(); // ends rmcp's open streams, so the graceful shutdown does not wait on them
        })
        .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("example server: {error}");
            ExitCode::from(1)
        }
    }
}

async fn shutdown_signal() {
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => return std::future::pending().await,
        };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// The HTTP application: `/mcp` (Host check, bearer check, the boundary's layer, rmcp's stateless
/// Streamable HTTP service) and the published JWKS; and the token that ends rmcp's streams. With
/// `--conformance`, the conformance suite's fixtures without authentication instead.
fn app(
    sealer: Arc<StateSealer>,
    source: keys::Source,
    options: &Options,
) -> (Router, CancellationToken) {
    let cancel = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(allowed_hosts(&options.host))
        .with_cancellation_token(cancel.clone());
    let router = if options.conformance {
        // The suite's harness sends no credentials: every state is bound to one principal, chosen here,
        // and refusals are JSON-RPC errors, as the suite's tampered-state scenario expects.
        let boundary = StateBoundary::new(sealer)
            .principal(Principal::Fixed(CONFORMANCE_PRINCIPAL.into()))
            .tool_refusal(ToolRefusal::JsonRpc);
        mcp_route(&boundary, boundary.handler(conformance::Fixtures), config)
    } else {
        let (boundary, handler) = example(sealer, options.tool_refusal);
        mcp_route(&boundary, handler, config).route_layer(middleware::from_fn(bearer))
    };
    let allowed = Arc::new(allowed_hosts(&options.host));
    let router = router
        .route(
            JWKS_PATH,
            get(move || {
                let source = source.clone();
                async move { jwks(&source) }
            }),
        )
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            host_check(Arc::clone(&allowed), request, next)
        }));
    (router, cancel)
}

/// The example's boundary and its wrapped handler, as both transports serve them.
fn example(
    sealer: Arc<StateSealer>,
    tool_refusal: ToolRefusal,
) -> (
    StateBoundary,
    StateHandler<asking::WithAsking<ExampleServer>>,
) {
    let boundary = StateBoundary::new(sealer)
        .tool_refusal(tool_refusal)
        // The acting rounds: a confirmed delete, and book_trip's seat round, which books. Single use
        // is per target, so book_trip's dates round is redeemed too.
        .single_use([
            Target::Tool("delete_branch".into()),
            Target::Tool("book_trip".into()),
        ]);
    let handler = boundary.handler(asking::WithAsking(ExampleServer(Example {
        git: Arc::new(GitHost::example()),
        airline: Arc::new(Airline::default()),
    })));
    (boundary, handler)
}

/// `/mcp`: the boundary's layer in front of rmcp's stateless Streamable HTTP service for `handler`.
fn mcp_route<H: ServerHandler + Clone>(
    boundary: &StateBoundary,
    handler: H,
    config: StreamableHttpServerConfig,
) -> Router {
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new().route_service("/mcp", boundary.layer().layer(service))
}

/// The public keys of the ring (never a private key); 404 for a ring of secrets, which are never published.
fn jwks(source: &keys::Source) -> Response {
    match source.public_jwks() {
        Some(document) => Response::builder()
            .header(header::CONTENT_TYPE, "application/jwk-set+json")
            .header(header::CACHE_CONTROL, "public, max-age=60")
            .body(Body::from(document))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "application/json")],
            r#"{"error":"this server signs with secrets, which are never published"}"#,
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_read_with_and_without_ports() {
        assert_eq!(host_name("127.0.0.1:8000").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_name("LOCALHOST").as_deref(), Some("localhost"));
        assert_eq!(host_name("[::1]:80").as_deref(), Some("::1"));
        assert_eq!(
            host_name("127.0.0.1.nip.io").as_deref(),
            Some("127.0.0.1.nip.io")
        );
        assert_eq!(host_name(""), None);
        let allowed = allowed_hosts("127.0.0.1");
        assert!(!allowed.contains(&"evil.example.com".to_owned()));
    }

    #[test]
    fn options_read_go_flag_syntax() {
        let argv: Vec<String> = [
            "--port",
            "0",
            "-ttl=20",
            "--dev-key",
            "--tool-refusal",
            "jsonrpc",
        ]
        .map(String::from)
        .into();
        let options = parse(&argv).unwrap();
        assert_eq!((options.port, options.ttl), (0, 20));
        assert_eq!(options.dev_key.as_deref(), Some("EdDSA"));
        assert_eq!(options.tool_refusal, ToolRefusal::JsonRpc);
        assert!(parse(&["--ttl".to_owned(), "0".to_owned()]).is_err());
        assert!(parse(&["--nope".to_owned(), "1".to_owned()]).is_err());
    }
}
