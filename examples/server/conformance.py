"""The fixtures the MCP conformance suite's ``input-required-result-*`` scenarios call.

Each tool and the prompt follow the scenario that names it
(``npx @modelcontextprotocol/conformance list --server``). State goes through the
same :class:`~mrtr_state.mcp.StateBoundary` as the example's real tools. The
suite's harness sends no credentials, so the conformance server binds every
state to one fixed principal, a deliberate choice documented where it is made.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequest,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)

from mrtr_state.mcp import Retry, input_required, read_retry


def _form(message: str, field: str, kind: str = "string") -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requested_schema={
                "type": "object",
                "properties": {field: {"type": kind}},
                "required": [field],
            },
        )
    )


def _sample(text: str, max_tokens: int) -> CreateMessageRequest:
    return CreateMessageRequest(
        params=CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text=text))], max_tokens=max_tokens
        )
    )


def _sampled_text(retry: Retry, key: str) -> str | None:
    response = retry.responses.get(key)
    if isinstance(response, CreateMessageResult) and isinstance(response.content, TextContent):
        return response.content.text
    return None


def _roots(retry: Retry, key: str) -> list[str] | None:
    response = retry.responses.get(key)
    if isinstance(response, ListRootsResult):
        return [str(root.uri) for root in response.roots]
    return None


def add_conformance_fixtures(server: MCPServer) -> None:
    """Register every fixture the ``input-required-result-*`` scenarios name."""

    @server.tool()
    def test_input_required_result_elicitation(ctx: Context) -> str | InputRequiredResult:
        """Ask for a name, then greet (the requestState only records what was asked)."""
        answer = read_retry(ctx).accepted("user_name")
        if answer is None or not isinstance(answer.get("name"), str):
            return input_required({"user_name": _form("What is your name?", "name")})
        return f"Hello, {answer['name']}!"

    @server.tool()
    def test_input_required_result_sampling(ctx: Context) -> str | InputRequiredResult:
        """Ask the client's model a question, then report its answer."""
        text = _sampled_text(read_retry(ctx), "capital_question")
        if text is None:
            return input_required({"capital_question": _sample("What is the capital of France?", 100)})
        return f"The model said: {text}"

    @server.tool()
    def test_input_required_result_list_roots(ctx: Context) -> str | InputRequiredResult:
        """Ask for the client's roots, then list them."""
        roots = _roots(read_retry(ctx), "client_roots")
        if roots is None:
            return input_required({"client_roots": ListRootsRequest()})
        return "Roots: " + ", ".join(roots)

    @server.tool()
    def test_input_required_result_request_state(ctx: Context) -> str | InputRequiredResult:
        """Ask for a confirmation with a sealed state; the retry reports state-ok once it verified."""
        retry = read_retry(ctx)
        answer = retry.accepted("confirm")
        if retry.state != {"asked": "confirm"} or answer is None:
            return input_required(
                {"confirm": _form("Please confirm", "ok", "boolean")}, state={"asked": "confirm"}
            )
        return f"state-ok: the sealed requestState verified; ok={answer.get('ok')}"

    @server.tool()
    def test_input_required_result_multiple_inputs(ctx: Context) -> str | InputRequiredResult:
        """Ask for a name, a model's greeting and the roots at once."""
        retry = read_retry(ctx)
        name = retry.accepted("user_name")
        greeting = _sampled_text(retry, "greeting")
        roots = _roots(retry, "client_roots")
        if retry.state is None or name is None or greeting is None or roots is None:
            requests: dict[str, InputRequest] = {
                "user_name": _form("What is your name?", "name"),
                "greeting": _sample("Generate a greeting", 50),
                "client_roots": ListRootsRequest(),
            }
            return input_required(requests, state={"asked": sorted(requests)})
        return f"{greeting} {name.get('name')}; roots: {', '.join(roots)}"

    @server.tool()
    def test_input_required_result_multi_round(ctx: Context) -> str | InputRequiredResult:
        """Ask for a name, then (with the name in the state) for a colour."""
        retry = read_retry(ctx)
        state: dict[str, Any] = retry.state or {}
        if state.get("step") == "color":
            color = retry.accepted("step2")
            if color is None:
                return input_required(
                    {"step2": _form("Step 2: What is your favorite color?", "color")}, state=state
                )
            return f"{state['name']} likes {color.get('color')}."
        name = retry.accepted("step1") if state.get("step") == "name" else None
        if name is None:
            return input_required(
                {"step1": _form("Step 1: What is your name?", "name")}, state={"step": "name"}
            )
        return input_required(
            {"step2": _form("Step 2: What is your favorite color?", "color")},
            state={"step": "color", "name": name.get("name")},
        )

    @server.tool()
    def test_input_required_result_tampered_state(ctx: Context) -> str | InputRequiredResult:
        """Ask with a sealed state; a tampered one never reaches this code (the boundary refuses it)."""
        retry = read_retry(ctx)
        if retry.state is None or retry.accepted("confirm") is None:
            return input_required(
                {"confirm": _form("Please confirm", "ok", "boolean")}, state={"asked": "confirm"}
            )
        return "The state verified."

    @server.tool()
    def test_input_required_result_capabilities(ctx: Context) -> str | InputRequiredResult:
        """Ask only for what the client declared it can answer."""
        retry = read_retry(ctx)
        capabilities = ctx.client_capabilities
        requests: dict[str, InputRequest] = {}
        if capabilities is not None and capabilities.elicitation is not None:
            requests["user_name"] = _form("What is your name?", "name")
        if capabilities is not None and capabilities.sampling is not None:
            requests["greeting"] = _sample("Generate a greeting", 50)
        if not requests:
            return "The client declared neither elicitation nor sampling; nothing to ask."
        if retry.state is not None and all(key in retry.responses for key in requests):
            return "Every declared input arrived."
        return input_required(requests, state={"asked": sorted(requests)})

    @server.prompt()
    def test_input_required_result_prompt(ctx: Context) -> list[Message] | InputRequiredResult:
        """A prompt that asks for context first."""
        answer = read_retry(ctx).accepted("user_context")
        if answer is None:
            return input_required(
                {"user_context": _form("What context should the prompt use?", "context")},
                state={"asked": "user_context"},
            )
        return [UserMessage(f"Use this context: {answer.get('context')}")]
