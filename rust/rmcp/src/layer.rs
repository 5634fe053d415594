//! [`StateLayer`]: opens every presented `requestState` from the raw JSON-RPC request, before rmcp
//! decodes it into typed params and before any handler runs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body::Body;
use http_body_util::{BodyExt, Either, Full, LengthLimitError, Limited};
use serde_json::{Map, Value, json};
use tower_layer::Layer;
use tower_service::Service;

use mrtr_state::OpenOptions;

use crate::boundary::{AuthenticatedUser, Config, Principal};
use crate::request::{Binding, METHODS, Outcome, Round, RoundData, target_of, text_of};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The message of the `-32603` error when a state would be bound to nobody (as in every language).
pub(crate) const NO_PRINCIPAL_WIRE: &str =
    "The server cannot bind request state to a user: no authenticated principal.";
/// The log line that says how to fix a missing principal.
pub(crate) const NO_PRINCIPAL_LOG: &str = "no authenticated principal to bind requestState to: put an \
    AuthenticatedUser in the request's extensions in the authentication middleware, or use Principal::Fixed";

/// A tower [`Layer`] for rmcp's `StreamableHttpService`: see [`StateService`]. Made by
/// [`crate::StateBoundary::layer`].
#[derive(Clone)]
pub struct StateLayer {
    pub(crate) config: Arc<Config>,
}

impl std::fmt::Debug for StateLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateLayer")
    }
}

impl<S> Layer<S> for StateLayer {
    type Service = StateService<S>;

    fn layer(&self, inner: S) -> StateService<S> {
        StateService {
            inner,
            config: Arc::clone(&self.config),
        }
    }
}

/// The HTTP service in front of rmcp's `StreamableHttpService`.
///
/// For each `POST` it reads the body (up to the boundary's limit, else `413`) and, when it is a
/// `tools/call`, `prompts/get` or `resources/read` request:
///
/// - without a `requestState` (absent or `null`): a first round; `inputResponses` answer nothing this
///   server asked (profile 8.2), so they are dropped before the handler sees them;
/// - with one (any other value, an empty or non-string one included): opens it with the request's
///   user, target and arguments as sent. A verified state replaces the token in the body, so the
///   handler's `request_state` is the state's text; a refused one is removed, and [`crate::StateHandler`]
///   answers the refusal without running the handler;
/// - with one but no usable target (`name`/`uri` not a non-empty string): answers `-32602` itself;
///   with one but no user: answers `-32603` ("no authenticated principal").
///
/// What it found travels to [`crate::StateHandler`] in the HTTP request's extensions, which rmcp hands
/// the handler's `RequestContext`. Anything else passes through unchanged.
#[derive(Clone)]
pub struct StateService<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> std::fmt::Debug for StateService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateService")
    }
}

/// What to do with a request after reading it.
pub(crate) enum Prepared {
    /// Send this body on to rmcp.
    Forward(Bytes),
    /// Answer this, without rmcp.
    Answer(Response<Full<Bytes>>),
}

impl<S, B, ResBody> Service<Request<B>> for StateService<S>
where
    S: Service<Request<Full<Bytes>>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    ResBody: Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Send,
{
    type Response = Response<Either<Full<Bytes>, ResBody>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service that was polled ready serves this request; the clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            let limit = config.max_body_bytes;
            let announced = parts
                .headers
                .get(header::CONTENT_LENGTH)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.parse::<u64>().ok());
            if announced.is_some_and(|length| length > limit as u64) {
                return Ok(
                    plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").map(Either::Left)
                );
            }
            let bytes = match Limited::new(body, limit).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(error) if error.is::<LengthLimitError>() => {
                    return Ok(
                        plain(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").map(Either::Left)
                    );
                }
                Err(_) => {
                    return Ok(plain(
                        StatusCode::BAD_REQUEST,
                        "Bad Request: the body could not be read",
                    )
                    .map(Either::Left));
                }
            };
            let body = if parts.method == Method::POST && rmcp_reads(&parts.headers) {
                match prepare(&config, &mut parts, bytes).await {
                    Prepared::Forward(body) => body,
                    Prepared::Answer(answer) => return Ok(answer.map(Either::Left)),
                }
            } else {
                bytes
            };
            let response = inner
                .call(Request::from_parts(parts, Full::new(body)))
                .await?;
            let json = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .is_some_and(|value| value.starts_with("application/json"));
            if response.status() != StatusCode::OK || !json {
                return Ok(response.map(Either::Right));
            }
            // rmcp sends every JSON answer with 200; a JSON-RPC error goes out with the status MCP
            // 2026-07-28 gives its code, as the other languages' servers send it. The answer is read
            // whole (a JSON answer is one message; an event stream is never read here).
            let (mut head, body) = response.into_parts();
            let Ok(collected) = body.collect().await else {
                return Ok(
                    plain(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error")
                        .map(Either::Left),
                );
            };
            let bytes = collected.to_bytes();
            if let Some(status) = answered_error_code(&bytes).and_then(error_status) {
                head.status = status;
            }
            head.headers.remove(header::CONTENT_LENGTH);
            Ok(Response::from_parts(head, Either::Left(Full::new(bytes))))
        })
    }
}

/// Whether rmcp will read this POST's body as a JSON-RPC message: a JSON body from a client that accepts
/// both JSON and an event stream (rmcp answers anything else 406 or 415 unread). Only such a request is
/// opened here, so a state is never redeemed for a request rmcp then turns away for those headers.
fn rmcp_reads(headers: &http::HeaderMap) -> bool {
    let essence = |value: &str| {
        value
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| essence(value) == "application/json");
    let accepted: Vec<String> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(',').map(essence).collect::<Vec<_>>())
        .collect();
    json && accepted.iter().any(|a| a == "application/json")
        && accepted.iter().any(|a| a == "text/event-stream")
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// A JSON-RPC error response to the request `id`, as rmcp's JSON responses are sent (JSON), with the
/// HTTP status MCP 2026-07-28 gives its code ([`error_status`]).
fn jsonrpc_error(id: Value, code: i64, message: &str) -> Response<Full<Bytes>> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    if let Some(status) = error_status(code) {
        *response.status_mut() = status;
    }
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The HTTP status of a JSON-RPC error answer on Streamable HTTP under MCP 2026-07-28 (SEP-2575), as the
/// Python, Go, Java and npm boundaries send it: `-32602` (invalid params) 400, `-32601` 404.
fn error_status(code: i64) -> Option<StatusCode> {
    match code {
        -32602 => Some(StatusCode::BAD_REQUEST),
        -32601 => Some(StatusCode::NOT_FOUND),
        _ => None,
    }
}

/// The code of a JSON body that is one JSON-RPC error answering a request (an id that is not null).
fn answered_error_code(body: &[u8]) -> Option<i64> {
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(body) else {
        return None;
    };
    if message.get("id").is_none_or(Value::is_null) {
        return None;
    }
    message.get("error")?.get("code")?.as_i64()
}

/// The request's user, as the principal rule says; `None` binds nobody.
fn user_of(config: &Config, parts: &http::request::Parts) -> Option<String> {
    match &config.principal {
        Principal::Fixed(user) => Some(user.clone()).filter(|user| !user.is_empty()),
        Principal::Authenticated => parts
            .extensions
            .get::<AuthenticatedUser>()
            .map(|user| user.as_str().to_owned())
            .filter(|user| !user.is_empty()),
    }
}

pub(crate) async fn prepare(
    config: &Config,
    parts: &mut http::request::Parts,
    bytes: Bytes,
) -> Prepared {
    // Anything this cannot read as one JSON-RPC request of the three methods goes to rmcp unchanged;
    // StateHandler refuses any requestState that arrives there without a Round.
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(&bytes) else {
        return Prepared::Forward(bytes);
    };
    let Some(method) = message
        .get("method")
        .and_then(Value::as_str)
        .and_then(|method| METHODS.into_iter().find(|known| *known == method))
    else {
        return Prepared::Forward(bytes);
    };
    let Some(id) = message.get("id").cloned() else {
        return Prepared::Forward(bytes); // a notification has no result to seal
    };
    let Some(Value::Object(params)) = message.get_mut("params") else {
        return Prepared::Forward(bytes);
    };
    let wire = params
        .get("requestState")
        .filter(|state| !state.is_null())
        .cloned();
    let (target, arguments) = match target_of(method, params) {
        Ok(found) => found,
        Err(problem) if wire.is_some() => {
            return Prepared::Answer(jsonrpc_error(id, -32602, &problem));
        }
        Err(_) => return Prepared::Forward(bytes), // rmcp answers; there is no state to open or seal
    };
    // What the other SDKs refuse as invalid params before any boundary sees a state, refused here
    // before a state is opened (and perhaps redeemed), with their answer.
    if let Some(problem) = invalid_params(method, params, wire.is_some()) {
        return Prepared::Answer(jsonrpc_error(id, -32602, problem));
    }
    let user = user_of(config, parts);
    let outcome = match wire {
        None => {
            if params
                .get("inputResponses")
                .is_some_and(|responses| !responses.is_null())
            {
                // Answers with no verified state answer nothing this server asked (profile 8.2).
                tracing::info!(
                    method,
                    "inputResponses without a requestState were dropped: they answer no round a verified state records"
                );
                params.remove("inputResponses");
            }
            Outcome::First
        }
        Some(wire) => {
            let Some(user) = user.as_deref() else {
                tracing::error!(method, "{NO_PRINCIPAL_LOG}");
                return Prepared::Answer(jsonrpc_error(id, -32603, NO_PRINCIPAL_WIRE));
            };
            // A requestState that is not a string cannot be a token: it is opened as the empty
            // token, which the sealer refuses (and counts) as malformed, as every language does.
            let token = wire.as_str().unwrap_or("");
            let options = OpenOptions {
                consume: config.is_single_use(&target),
                require_arguments: Some(config.require_arguments),
            };
            match config
                .sealer
                .open_with(token, user, &target, arguments.as_ref(), &options)
                .await
            {
                Ok(state) => {
                    if let Some(name) = first_bad_response(params) {
                        // Answers to a verified round that are no results ("yes" where an
                        // ElicitResult belongs): -32602 naming the entry, never its value, as the
                        // Python, npm, Go and Java boundaries answer it.
                        tracing::warn!(method, "an inputResponses entry is not a result");
                        let message = format!(
                            "Invalid params: inputResponses[{name}] is not a result of the input request it answers (an object such as an ElicitResult)."
                        );
                        return Prepared::Answer(jsonrpc_error(id, -32602, &message));
                    }
                    if let Some(problem) = arguments_problem(method, params) {
                        // A state that opened for such arguments (one bound to none, accepted without
                        // the argument binding): answered as on a first round, never handed to rmcp.
                        tracing::warn!(method, "the arguments are not what MCP allows");
                        return Prepared::Answer(jsonrpc_error(id, -32602, problem));
                    }
                    let text = text_of(&state);
                    params.insert("requestState".into(), Value::String(text.clone()));
                    Outcome::Verified { state, text }
                }
                Err(refusal) => {
                    tracing::warn!(
                        method,
                        reason = refusal.reason.as_str(),
                        "requestState refused"
                    );
                    refused_params(params);
                    Outcome::Refused(refusal)
                }
            }
        }
    };
    parts.extensions.insert(Round(Arc::new(RoundData {
        id,
        method,
        binding: Binding {
            user,
            target,
            arguments,
        },
        outcome,
    })));
    match serde_json::to_vec(&message) {
        Ok(body) => Prepared::Forward(Bytes::from(body)),
        Err(_) => Prepared::Answer(plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal Server Error",
        )),
    }
}

/// Params the Python SDK refuses (`-32602`) before its boundary runs: `inputResponses` that is not an
/// object of result objects (on any round), and on a first round the arguments of
/// [`arguments_problem`] (on a retry the state is opened first: refused `wrong_request` for them, as in
/// Python, or, if it opens, answered as a first round's are).
fn invalid_params(method: &str, params: &Map<String, Value>, retry: bool) -> Option<&'static str> {
    match params.get("inputResponses") {
        None | Some(Value::Null) => {}
        Some(Value::Object(_)) => {}
        Some(_) => {
            return Some("Invalid params: inputResponses must be an object of result objects");
        }
    }
    if retry {
        return None;
    }
    arguments_problem(method, params)
}

/// Arguments MCP does not allow, which the Python, npm and Java SDKs answer `-32602` before any handler
/// runs and rmcp's typed params would answer `-32601` (HTTP 404: the request is read as no method it
/// knows): on `prompts/get`, arguments that are not an object of strings; on `tools/call`, arguments
/// that are neither an object nor null. Null is read as absent by rmcp, as by those SDKs: the handler
/// runs, and a state is never sealed for it (unbindable).
fn arguments_problem(method: &str, params: &Map<String, Value>) -> Option<&'static str> {
    match (method, params.get("arguments")) {
        (_, None | Some(Value::Null)) => None,
        ("prompts/get", Some(Value::Object(arguments)))
            if arguments.values().all(Value::is_string) =>
        {
            None
        }
        ("prompts/get", Some(_)) => {
            Some("Invalid params: prompts/get arguments must be an object of strings")
        }
        ("tools/call", Some(arguments)) if !arguments.is_object() => {
            Some("Invalid params: tools/call arguments must be a JSON object")
        }
        _ => None,
    }
}

/// The first `inputResponses` entry that is not an object, its key as a JSON string cut to 64
/// characters; the value is never shown. Keys are read in the order `serde_json` keeps them (sorted,
/// as Go's are; Python and npm name the first sent).
fn first_bad_response(params: &Map<String, Value>) -> Option<String> {
    let Some(Value::Object(entries)) = params.get("inputResponses") else {
        return None;
    };
    let (key, _) = entries.iter().find(|(_, value)| !value.is_object())?;
    let name: String = if key.chars().count() <= 64 {
        key.clone()
    } else {
        key.chars().take(64).chain("...".chars()).collect()
    };
    Some(Value::String(name).to_string())
}

/// The params of a refused request, made decodable by rmcp's typed params: the handler never runs,
/// so nothing it would read is lost. The refused token and the answers go; arguments that are not an
/// object go too.
fn refused_params(params: &mut Map<String, Value>) {
    params.remove("requestState");
    params.remove("inputResponses");
    if params
        .get("arguments")
        .is_some_and(|arguments| !arguments.is_object())
    {
        params.remove("arguments");
    }
}
