//! The prompt and the resource that ask before they answer (the twins of `examples/server/asking.py`):
//! the first round answers `input_required` with an elicitation and a state the boundary seals (bound to
//! the user, the target and, for the prompt, its arguments); the retry with the answer completes.
//!
//! - `review_branch` (arguments `repo`, default `acme/api`, and `branch`, default `main`, both optional):
//!   asks what the review should focus on, then gives one user message naming the branch and the focus.
//! - `trips://fares/{destination}` (a template: `trips://fares/Lisbon`): asks whether the person leaves on
//!   a weekend, then gives the return fare (15% more on a weekend); a destination the airline does not fly
//!   to is said at once, without asking.
//!
//! [`WithAsking`] adds both to a handler that serves tools.

use std::collections::BTreeMap;

use mrtr_state_rmcp::{input_required, verified_state};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, InputRequest, InputResponses, ListPromptsResult, ListResourceTemplatesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage,
    PromptsCapability, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ResourceTemplate, ResourcesCapability, Role, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::tools::DESTINATIONS;

/// The prompt that asks.
const PROMPT: &str = "review_branch";
/// The URI template of the resource that asks, and the prefix of every URI it serves.
const FARES_TEMPLATE: &str = "trips://fares/{destination}";
const FARES_PREFIX: &str = "trips://fares/";

/// A handler with the tools of `H` and the prompt and resource that ask.
#[derive(Clone)]
pub struct WithAsking<H>(pub H);

fn ask(key: &str, message: String, kind: &str) -> rmcp::model::InputRequiredResult {
    let request: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": {key: {"type": kind}}, "required": [key]},
        },
    }))
    .expect("the example's questions are elicitation requests");
    input_required(
        BTreeMap::from([(key.to_owned(), request)]),
        Some(json!({"asked": key})),
    )
}

/// The accepted answer under `key` of a retry whose verified state says `key` was asked.
fn answer(
    context: &RequestContext<RoleServer>,
    responses: Option<&InputResponses>,
    key: &str,
) -> Option<Map<String, Value>> {
    let state = verified_state(context)?;
    if state.get("asked").and_then(Value::as_str) != Some(key) {
        return None;
    }
    let response = responses?.get(key)?;
    if response.get("action")?.as_str()? != "accept" {
        return None;
    }
    response.get("content")?.as_object().cloned()
}

/// The text of `trips://fares/<destination>`: the return fare, 15% more for a weekend departure.
fn fare_text(destination: &str, base: u32, weekend: bool) -> String {
    if weekend {
        let fare = (f64::from(base) * 1.15).round();
        format!("Return fare to {destination}, leaving on a weekend: {fare} EUR.")
    } else {
        format!("Return fare to {destination}: {base} EUR.")
    }
}

fn argument(arguments: Option<&Map<String, Value>>, name: &str, default: &str) -> String {
    arguments
        .and_then(|arguments| arguments.get(name))
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_owned()
}

impl<H: ServerHandler + Clone> ServerHandler for WithAsking<H> {
    fn get_info(&self) -> ServerConfig {
        let mut info = self.0.get_info();
        info.capabilities.prompts = Some(PromptsCapability::default());
        info.capabilities.resources = Some(ResourcesCapability::default());
        info
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.0.list_tools(request, context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.get_tool(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.0.call_tool(request, context).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arguments = vec![
            PromptArgument::new("repo").with_description("the repository (default acme/api)"),
            PromptArgument::new("branch").with_description("the branch (default main)"),
        ];
        let prompt = Prompt::new(
            PROMPT,
            Some("Review a branch, after the person says what to focus on."),
            Some(arguments),
        );
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != PROMPT {
            return Err(ErrorData::invalid_params(
                format!("Unknown prompt: {}", request.name),
                None,
            ));
        }
        let repo = argument(request.arguments.as_ref(), "repo", "acme/api");
        let branch = argument(request.arguments.as_ref(), "branch", "main");
        let answer = answer(&context, request.input_responses.as_ref(), "focus");
        let Some(focus) = answer
            .as_ref()
            .and_then(|a| a.get("focus"))
            .and_then(Value::as_str)
        else {
            let question = format!("What should the review of {branch} in {repo} focus on?");
            return Ok(ask("focus", question, "string").into());
        };
        let text = format!("Review branch {branch} of {repo}, focusing on: {focus}.");
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new(FARES_TEMPLATE, "fares")
            .with_description(
                "The return fare to a destination, after the person says whether they leave on a weekend.",
            )
            .with_mime_type("text/plain");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let Some(destination) = uri.strip_prefix(FARES_PREFIX).filter(|d| !d.is_empty()) else {
            return Err(ErrorData::resource_not_found(
                format!("Unknown resource: {uri}"),
                None,
            ));
        };
        let contents = |text: String| -> ReadResourceResponse {
            let content = ResourceContents::text(text, uri).with_mime_type("text/plain");
            ReadResourceResult::new(vec![content]).into()
        };
        let Some(&(_, base)) = DESTINATIONS.iter().find(|(name, _)| *name == destination) else {
            return Ok(contents(format!(
                "The example airline does not fly to {destination}."
            )));
        };
        let answer = answer(&context, request.input_responses.as_ref(), "weekend");
        let Some(weekend) = answer
            .as_ref()
            .and_then(|a| a.get("weekend"))
            .and_then(Value::as_bool)
        else {
            let question = format!("Do you leave for {destination} on a weekend?");
            return Ok(ask("weekend", question, "boolean").into());
        };
        Ok(contents(fare_text(destination, base, weekend)))
    }
}
