//! [`StateHandler`]: a [`ServerHandler`] wrapper that answers the refusals [`crate::StateLayer`]
//! recorded and seals the state of every `InputRequiredResult` its handler returns.

#![allow(deprecated)] // subscribe and unsubscribe are deprecated in rmcp, and still delegated.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use rmcp::model::*;
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::boundary::{Config, REASON_META_KEY, ToolRefusal};
use crate::layer::{NO_PRINCIPAL_LOG, NO_PRINCIPAL_WIRE};
use crate::request::{Outcome, Round, claim_of};

const NOT_INSTALLED: &str = "a requestState reached the handler without StateLayer in front of the \
    service: put StateBoundary::layer() around the StreamableHttpService, or states would be trusted unverified";

/// The server's handler behind the boundary. Made by [`crate::StateBoundary::handler`].
///
/// On `tools/call`, `prompts/get` and `resources/read` it checks what [`crate::StateLayer`] found for
/// this very request (its JSON-RPC id and method): a refused state is answered (a tool error, or
/// `-32602` with `data.reason`) and the handler does not run; a state that arrived without the layer
/// is an internal error. When the handler answers `InputRequiredResult` with a `request_state`, that
/// text becomes the `state` claim (the JSON text of an object or array as that value, any other text
/// as a string) of a token bound to the request's user, target and arguments. Every other method is
/// the inner handler's.
#[derive(Clone)]
pub struct StateHandler<H> {
    pub(crate) inner: H,
    pub(crate) config: Arc<Config>,
}

impl<H> std::fmt::Debug for StateHandler<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateHandler")
    }
}

/// The verified `state` claim of the request being served, or `None` on a first round (or without the
/// boundary). The handler's `request_state` holds the same state as text.
pub fn verified_state(context: &RequestContext<RoleServer>) -> Option<Value> {
    let round = round_of(context, None)?;
    match &round.0.outcome {
        Outcome::Verified { state, .. } => Some(state.clone()),
        _ => None,
    }
}

/// An `InputRequiredResult` that asks `requests` and carries `state` to the next round, where the boundary
/// seals it. Without a state it carries `{"asked": [<keys>]}`, as Python's `input_required` does: a round
/// that asks always seals a state, because answers that arrive without a verified state answer nothing
/// (profile 8.2) and never reach the handler.
pub fn input_required(requests: InputRequests, state: Option<Value>) -> InputRequiredResult {
    let state = state.unwrap_or_else(|| json!({"asked": requests.keys().collect::<Vec<_>>()}));
    InputRequiredResult::new(Some(requests), Some(state.to_string()))
}

/// What the layer recorded for this request, if it is the request being served.
fn round_of(context: &RequestContext<RoleServer>, method: Option<&str>) -> Option<Round> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    let round = parts.extensions.get::<Round>()?;
    let same_id = round.0.id == context.id.clone().into_json_value();
    let same_method = method.is_none_or(|method| round.0.method == method);
    (same_id && same_method).then(|| round.clone())
}

fn internal_error() -> ErrorData {
    ErrorData::internal_error("Internal error", None)
}

/// Whether the handler may run, and with what the layer found.
enum Gate {
    Run(Option<Round>),
    Refuse(Round),
}

fn gate(
    method: &'static str,
    request_state: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> Result<Gate, ErrorData> {
    let round = round_of(context, Some(method));
    let Some(found) = &round else {
        if request_state.is_some() {
            tracing::error!(method, "{NOT_INSTALLED}");
            return Err(internal_error());
        }
        return Ok(Gate::Run(None));
    };
    match (&found.0.outcome, request_state) {
        (Outcome::Refused(_), None) => Ok(Gate::Refuse(found.clone())),
        (Outcome::First, None) => Ok(Gate::Run(round)),
        (Outcome::Verified { text, .. }, Some(state)) if state == text => Ok(Gate::Run(round)),
        _ => {
            tracing::error!(
                method,
                "the requestState the handler got is not the one StateLayer verified"
            );
            Err(internal_error())
        }
    }
}

impl<H> StateHandler<H> {
    /// The refusal the layer recorded, as the wire form for `method`.
    fn refusal(&self, method: &str, round: &Round) -> Result<CallToolResult, ErrorData> {
        let Outcome::Refused(refusal) = &round.0.outcome else {
            return Err(internal_error());
        };
        let sentence = refusal.reason.message(); // the fixed sentence every language sends
        let reason = refusal.reason.as_str();
        if method != "tools/call" || self.config.tool_refusal == ToolRefusal::JsonRpc {
            return Err(ErrorData::invalid_params(
                sentence,
                Some(json!({"reason": reason})),
            ));
        }
        let mut result = CallToolResult::error(vec![ContentBlock::text(sentence)]);
        let mut meta = MetaObject::new();
        meta.0
            .insert(REASON_META_KEY.into(), Value::String(reason.into()));
        result.meta = Some(meta);
        Ok(result)
    }

    /// Seal the `request_state` of an `InputRequiredResult` for the request `round` describes.
    fn seal(
        &self,
        method: &'static str,
        round: Option<&Round>,
        result: &mut InputRequiredResult,
    ) -> Result<(), ErrorData> {
        let Some(text) = result.request_state.as_deref() else {
            return Ok(()); // nothing to carry: nothing to seal
        };
        let Some(round) = round else {
            tracing::error!(
                method,
                "cannot seal requestState: no StateLayer in front of the service"
            );
            return Err(internal_error());
        };
        let binding = &round.0.binding;
        let Some(user) = binding.user.as_deref() else {
            tracing::error!(method, "{NO_PRINCIPAL_LOG}");
            return Err(ErrorData::internal_error(NO_PRINCIPAL_WIRE, None));
        };
        let state = claim_of(text);
        match self
            .config
            .sealer
            .seal(&state, user, &binding.target, binding.arguments.as_ref())
        {
            Ok(token) => {
                result.request_state = Some(token);
                Ok(())
            }
            Err(refusal) => {
                if let Some(problem) = unbindable(binding.arguments.as_ref()) {
                    tracing::warn!(method, problem, "arguments cannot be bound to requestState");
                    return Err(ErrorData::invalid_params(
                        format!(
                            "The request's arguments cannot be bound to a request state (they must be I-JSON): {problem}."
                        ),
                        None,
                    ));
                }
                tracing::error!(
                    method,
                    reason = refusal.reason.as_str(),
                    "cannot seal requestState"
                );
                Err(internal_error())
            }
        }
    }
}

/// Why `arguments` cannot be bound, when that is why sealing failed (`None` for a resource, which has
/// none, and for bindable arguments).
fn unbindable(arguments: Option<&Value>) -> Option<String> {
    let arguments = arguments?;
    mrtr_state::binding::arguments_digest(Some(arguments))
        .err()
        .map(|problem| problem.to_string())
}

macro_rules! delegate {
    ($(fn $name:ident(&self $(, $arg:ident : $ty:ty)*) -> $out:ty;)*) => {
        $(
            fn $name(&self $(, $arg: $ty)*) -> impl Future<Output = $out> + MaybeSendFuture + '_ {
                self.inner.$name($($arg),*)
            }
        )*
    };
}

impl<H: ServerHandler> ServerHandler for StateHandler<H> {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        const METHOD: &str = "tools/call";
        let round = match gate(METHOD, request.request_state.as_deref(), &context)? {
            Gate::Refuse(round) => {
                return self.refusal(METHOD, &round).map(CallToolResponse::Complete);
            }
            Gate::Run(round) => round,
        };
        let mut response = self.inner.call_tool(request, context).await?;
        if let CallToolResponse::InputRequired(result) = &mut response {
            self.seal(METHOD, round.as_ref(), result)?;
        }
        Ok(response)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        const METHOD: &str = "prompts/get";
        let round = match gate(METHOD, request.request_state.as_deref(), &context)? {
            Gate::Refuse(round) => {
                return Err(self
                    .refusal(METHOD, &round)
                    .err()
                    .unwrap_or_else(internal_error));
            }
            Gate::Run(round) => round,
        };
        let mut response = self.inner.get_prompt(request, context).await?;
        if let GetPromptResponse::InputRequired(result) = &mut response {
            self.seal(METHOD, round.as_ref(), result)?;
        }
        Ok(response)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        const METHOD: &str = "resources/read";
        let round = match gate(METHOD, request.request_state.as_deref(), &context)? {
            Gate::Refuse(round) => {
                return Err(self
                    .refusal(METHOD, &round)
                    .err()
                    .unwrap_or_else(internal_error));
            }
            Gate::Run(round) => round,
        };
        let mut response = self.inner.read_resource(request, context).await?;
        if let ReadResourceResponse::InputRequired(result) = &mut response {
            self.seal(METHOD, round.as_ref(), result)?;
        }
        Ok(response)
    }

    delegate! {
        fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        fn initialize(&self, request: InitializeRequestParams, context: RequestContext<RoleServer>) -> Result<InitializeResult, ErrorData>;
        fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData>;
        fn complete(&self, request: CompleteRequestParams, context: RequestContext<RoleServer>) -> Result<CompleteResult, ErrorData>;
        fn set_level(&self, request: SetLevelRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        fn list_prompts(&self, request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListPromptsResult, ErrorData>;
        fn list_resources(&self, request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData>;
        fn list_resource_templates(&self, request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListResourceTemplatesResult, ErrorData>;
        fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData>;
        fn subscribe(&self, request: SubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        fn unsubscribe(&self, request: UnsubscribeRequestParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        fn list_tools(&self, request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData>;
        fn on_custom_request(&self, request: CustomRequest, context: RequestContext<RoleServer>) -> Result<CustomResult, ErrorData>;
        fn on_cancelled(&self, notification: CancelledNotificationParam, context: NotificationContext<RoleServer>) -> ();
        fn on_progress(&self, notification: ProgressNotificationParam, context: NotificationContext<RoleServer>) -> ();
        fn on_initialized(&self, context: NotificationContext<RoleServer>) -> ();
        fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) -> ();
        fn on_custom_notification(&self, notification: CustomNotification, context: NotificationContext<RoleServer>) -> ();
        fn get_task(&self, request: GetTaskParams, context: RequestContext<RoleServer>) -> Result<GetTaskResult, ErrorData>;
        fn update_task(&self, request: UpdateTaskParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        fn cancel_task(&self, request: CancelTaskParams, context: RequestContext<RoleServer>) -> Result<(), ErrorData>;
        fn list_skills(&self, request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListSkillsResult, ErrorData>;
        fn get_skill(&self, request: GetSkillRequestParams, context: RequestContext<RoleServer>) -> Result<GetSkillResult, ErrorData>;
        fn read_resource_directory(&self, request: ReadResourceDirectoryRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceDirectoryResult, ErrorData>;
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.inner.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }
}
