"""StateBoundary on every shape of server: prompts, resources, the lowlevel Server, the SDK's resolvers."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
import pytest
from mcp.client import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    SERVER_INFO_META_KEY,
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from pydantic import BaseModel

from conftest import Clock, as_user, never_asked, one_byte_changed
from mrtr_state import Keyring, MemoryReplayStore, StateSealer, decode_unverified
from mrtr_state.mcp import REASON_META_KEY, StateBoundary, input_required, read_retry

ISSUER = "https://notes.example.com"
OK = {"confirm": ElicitResult(action="accept", content={"ok": True})}


def sealer(clock: Clock | None = None) -> StateSealer:
    clock = clock or Clock()
    return StateSealer(
        Keyring.generate("HS256"), issuer=ISSUER, clock=clock, replay_store=MemoryReplayStore()
    )


def ask(message: str = "Go on?") -> ElicitRequest:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def notes_server(boundary_sealer: StateSealer, **options: Any) -> MCPServer:
    """A server with a prompt and a resource template that ask before answering."""
    server = MCPServer("notes")
    StateBoundary(boundary_sealer, **options).install(server)

    @server.prompt()
    def summary(topic: str, ctx: Context) -> str | InputRequiredResult:
        retry = read_retry(ctx)
        if retry.state is None or retry.accepted("confirm") is None:
            return input_required({"confirm": ask()}, state={"topic": topic})
        return f"Summarise {retry.state['topic']}."

    @server.resource("notes://{name}")
    def note(name: str, ctx: Context) -> str | InputRequiredResult:
        retry = read_retry(ctx)
        if retry.state is None or retry.accepted("confirm") is None:
            return input_required({"confirm": ask()}, state={"note": name})
        return f"The note {retry.state['note']}."

    return server


@pytest.mark.parametrize("tool_refusal", ["tool_error", "jsonrpc"])
def test_on_prompts_get_a_refusal_is_always_invalid_params(tool_refusal: str) -> None:
    server = notes_server(sealer(), tool_refusal=tool_refusal)

    async def scenario() -> MCPError:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await client.session.get_prompt("summary", {"topic": "q3"}, allow_input_required=True)
                assert isinstance(asked, InputRequiredResult)
                done = await client.session.get_prompt(
                    "summary",
                    {"topic": "q3"},
                    allow_input_required=True,
                    input_responses=OK,
                    request_state=asked.request_state,
                )
                assert done.messages[0].content.text == "Summarise q3."  # type: ignore[union-attr]
            with as_user("bob"), pytest.raises(MCPError) as refused:
                await client.session.get_prompt(
                    "summary", {"topic": "q3"}, input_responses=OK, request_state=asked.request_state
                )
            return refused.value

    error = anyio.run(scenario)
    assert (error.code, error.data) == (INVALID_PARAMS, {"reason": "wrong_user"})
    assert error.message == "The request state belongs to another user."


@pytest.mark.parametrize("tool_refusal", ["tool_error", "jsonrpc"])
def test_on_resources_read_a_refusal_is_always_invalid_params(tool_refusal: str) -> None:
    server = notes_server(sealer(), tool_refusal=tool_refusal)

    async def scenario() -> MCPError:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await client.session.read_resource("notes://plans", allow_input_required=True)
                assert isinstance(asked, InputRequiredResult)
                assert decode_unverified(asked.request_state)[1]["aud"] == "resources/read:notes://plans"
                done = await client.session.read_resource(
                    "notes://plans", input_responses=OK, request_state=asked.request_state
                )
                assert done.contents[0].text == "The note plans."  # type: ignore[union-attr]
                with pytest.raises(MCPError) as refused:
                    await client.session.read_resource(
                        "notes://other", input_responses=OK, request_state=asked.request_state
                    )
            return refused.value

    error = anyio.run(scenario)
    assert (error.code, error.data) == (INVALID_PARAMS, {"reason": "wrong_tool"})


def test_a_state_for_a_prompt_never_opens_on_a_tool_of_the_same_name() -> None:
    server = notes_server(sealer())

    @server.tool()
    def summary(topic: str, ctx: Context) -> str | InputRequiredResult:
        read_retry(ctx)
        return "ran"

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await client.session.get_prompt("summary", {"topic": "q3"}, allow_input_required=True)
                return await client.session.call_tool(
                    "summary", {"topic": "q3"}, input_responses=OK, request_state=asked.request_state
                )

    result = anyio.run(scenario)
    assert result.is_error
    assert result.meta[REASON_META_KEY] == "wrong_tool"


class Confirmation(BaseModel):
    ok: bool


def ask_confirmation() -> Elicit[Confirmation]:
    return Elicit("Archive it?", Confirmation)


def test_the_sdk_resolver_state_travels_as_a_profile_jwt() -> None:
    server = MCPServer("archive")
    StateBoundary(sealer()).install(server)
    answers: list[str] = []

    @server.tool()
    def archive(item: str, confirmation: Annotated[Confirmation, Resolve(ask_confirmation)]) -> str:
        return f"{item} archived: {confirmation.ok}"

    async def answer(context: Any, params: Any) -> ElicitResult:
        answers.append(params.message)
        return ElicitResult(action="accept", content={"ok": True})

    async def scenario() -> tuple[InputRequiredResult, Any, Any]:
        async with Client(server, elicitation_callback=answer) as client:
            with as_user("alice"):
                asked = await client.session.call_tool("archive", {"item": "x"}, allow_input_required=True)
                assert isinstance(asked, InputRequiredResult)
                key = next(iter(asked.input_requests or {}))
                yes = {key: ElicitResult(action="accept", content={"ok": True})}
                tampered = await client.session.call_tool(
                    "archive",
                    {"item": "x"},
                    input_responses=yes,
                    request_state=one_byte_changed(asked.request_state),
                )
                driven = await client.call_tool("archive", {"item": "y"})
        return asked, tampered, driven

    asked, tampered, driven = anyio.run(scenario)
    header, claims = decode_unverified(asked.request_state)
    assert header["typ"] == "mrtr-state+jwt"
    assert claims["aud"] == "tools/call:archive"
    assert isinstance(claims["state"], dict)
    assert "outcomes" in claims["state"]
    assert tampered.is_error
    assert tampered.meta[REASON_META_KEY] == "bad_signature"
    assert driven.content[0].text == "y archived: True"
    assert answers == ["Archive it?"]


def lowlevel_server(boundary: StateBoundary) -> Server[Any]:
    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[Tool(name="deploy", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult | InputRequiredResult:
        retry = read_retry(params)
        if retry.state is None or retry.accepted("confirm") is None:
            return input_required(
                {"confirm": ask("Deploy?")}, state={"env": (params.arguments or {}).get("env")}
            )
        return CallToolResult(content=[TextContent(text=f"deployed to {retry.state['env']}")])

    server: Server[Any] = Server("deployer", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    boundary.install(server)
    return server


def test_the_lowlevel_server_carries_state_through_the_boundary() -> None:
    server = lowlevel_server(StateBoundary(sealer(), principal="operator"))

    async def scenario() -> tuple[Any, Any]:
        async with Client(server, elicitation_callback=never_asked) as client:
            asked = await client.session.call_tool("deploy", {"env": "prod"}, allow_input_required=True)
            done = await client.session.call_tool(
                "deploy", {"env": "prod"}, input_responses=OK, request_state=asked.request_state
            )
            other = await client.session.call_tool(
                "deploy", {"env": "staging"}, input_responses=OK, request_state=asked.request_state
            )
        return done, other

    done, other = anyio.run(scenario)
    assert done.content[0].text == "deployed to prod"
    assert other.is_error
    assert other.meta[REASON_META_KEY] == "wrong_request"
    assert other.meta[SERVER_INFO_META_KEY] == {"name": "deployer", "version": "1.0"}


def test_install_takes_the_place_of_the_sdk_boundary() -> None:
    server = MCPServer("x")
    position = next(i for i, m in enumerate(server.middleware) if isinstance(m, RequestStateBoundary))
    boundary = StateBoundary(sealer()).install(server)
    assert server.middleware[position] is boundary
    assert not any(isinstance(m, RequestStateBoundary) for m in server.middleware)


def test_install_appends_to_a_lowlevel_server_without_one() -> None:
    server: Server[Any] = Server("x")
    boundary = StateBoundary(sealer()).install(server)
    assert server.middleware[-1] is boundary


def test_one_boundary_serves_one_server_and_a_server_has_one() -> None:
    boundary = StateBoundary(sealer()).install(MCPServer("a"))
    with pytest.raises(RuntimeError, match="already installed"):
        boundary.install(MCPServer("b"))
    server = MCPServer("c")
    StateBoundary(sealer()).install(server)
    with pytest.raises(ValueError, match="already has a StateBoundary"):
        StateBoundary(sealer()).install(server)


def test_single_use_needs_a_sealer_with_a_replay_store() -> None:
    plain = StateSealer(Keyring.generate("HS256"), issuer=ISSUER)
    with pytest.raises(ValueError, match="replay_store"):
        StateBoundary(plain, single_use=True)
    StateBoundary(plain, single_use=False)
    StateBoundary(sealer(), single_use={"tools/call:delete"})


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"single_use": "tools/call:delete"}, TypeError),
        ({"single_use": {"delete"}}, ValueError),
        ({"single_use": {"tasks/get:x"}}, ValueError),
        ({"tool_refusal": "silent"}, ValueError),
        ({"principal": ""}, ValueError),
        ({"principal": 42}, TypeError),
    ],
)
def test_a_bad_option_is_refused_at_construction(options: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        StateBoundary(sealer(), **options)


def test_a_failing_principal_function_fails_closed() -> None:
    def broken(ctx: Any) -> str:
        raise LookupError("directory down")

    server = lowlevel_server(StateBoundary(sealer(), principal=broken))

    async def scenario() -> MCPError:
        async with Client(server, elicitation_callback=never_asked) as client:
            with pytest.raises(MCPError) as failed:
                await client.session.call_tool("deploy", {"env": "prod"}, allow_input_required=True)
            return failed.value

    error = anyio.run(scenario)
    assert error.code == -32603
    assert "directory down" not in error.message


def test_a_token_without_a_subject_binds_nobody_and_is_refused() -> None:
    from mcp.server.auth.middleware.auth_context import auth_context_var
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    server = notes_server(sealer())

    async def scenario() -> MCPError:
        async with Client(server, elicitation_callback=never_asked) as client:
            reset = auth_context_var.set(
                AuthenticatedUser(AccessToken(token="t", client_id="shared", scopes=[]))
            )
            try:
                with pytest.raises(MCPError) as failed:
                    await client.session.get_prompt("summary", {"topic": "q3"}, allow_input_required=True)
            finally:
                auth_context_var.reset(reset)
            return failed.value

    assert anyio.run(scenario).code == -32603


def test_arguments_that_cannot_be_bound_are_invalid_params() -> None:
    server = lowlevel_server(StateBoundary(sealer(), principal="operator"))

    async def scenario() -> MCPError:
        async with Client(server, elicitation_callback=never_asked) as client:
            with pytest.raises(MCPError) as failed:
                await client.session.call_tool(
                    "deploy", {"env": "prod", "note": "\ud800"}, allow_input_required=True
                )
            return failed.value

    error = anyio.run(scenario)
    assert error.code == INVALID_PARAMS
    assert "I-JSON" in error.message


def test_read_retry_refuses_to_run_without_the_boundary() -> None:
    with pytest.raises(RuntimeError, match="StateBoundary"):
        read_retry(CallToolRequestParams(name="x", request_state="forged"))


def test_arguments_with_an_integer_beyond_2_53_get_an_error_that_says_to_send_strings() -> None:
    server = lowlevel_server(StateBoundary(sealer(), principal="operator"))

    async def scenario() -> list[MCPError]:
        errors = []
        async with Client(server, elicitation_callback=never_asked) as client:
            for arguments in ({"env": "prod", "id": 2**60 + 1}, {"env": "prod", "ids": [1, 1e23]}):
                with pytest.raises(MCPError) as failed:
                    await client.session.call_tool("deploy", arguments, allow_input_required=True)
                errors.append(failed.value)
        return errors

    for error in anyio.run(scenario):
        assert error.code == INVALID_PARAMS
        assert "2**53 - 1" in error.message
        assert "as strings" in error.message
        assert "1152921504606846977" not in error.message


def deploy_state(boundary_sealer: StateSealer, **binding: Any) -> str:
    """A state for the lowlevel server's deploy tool, as a minter that does not bind arguments seals it."""
    return boundary_sealer.seal({"env": "prod"}, user="operator", tool="deploy", **binding)


def test_the_boundary_requires_the_argument_binding_on_tools_by_default() -> None:
    shared = sealer()
    unbound = deploy_state(shared)
    bound = deploy_state(shared, arguments={"env": "prod"})

    async def scenario(boundary: StateBoundary) -> list[Any]:
        async with Client(lowlevel_server(boundary), elicitation_callback=never_asked) as client:
            return [
                await client.session.call_tool(
                    "deploy", {"env": "prod"}, input_responses=OK, request_state=state
                )
                for state in (unbound, bound)
            ]

    refused, opened = anyio.run(scenario, StateBoundary(shared, principal="operator"))
    assert refused.is_error
    assert refused.meta[REASON_META_KEY] == "wrong_request"
    assert opened.content[0].text == "deployed to prod"
    relaxed = anyio.run(scenario, StateBoundary(shared, principal="operator", require_arguments=False))
    assert [result.content[0].text for result in relaxed] == ["deployed to prod"] * 2


def test_the_boundary_requires_the_argument_binding_on_prompts_but_not_on_resources() -> None:
    shared = sealer()
    server = notes_server(shared)
    prompt_state = shared.seal({"topic": "q3"}, user="alice", prompt="summary")
    resource_state = shared.seal({"note": "plan"}, user="alice", resource="notes://plan")

    async def scenario() -> tuple[MCPError, Any]:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                with pytest.raises(MCPError) as refused:
                    await client.session.get_prompt(
                        "summary", {"topic": "q3"}, input_responses=OK, request_state=prompt_state
                    )
                read = await client.session.read_resource(
                    "notes://plan", input_responses=OK, request_state=resource_state
                )
        return refused.value, read

    refused, read = anyio.run(scenario)
    assert refused.code == INVALID_PARAMS
    assert refused.data == {"reason": "wrong_request"}
    assert read.contents[0].text == "The note plan."


def test_input_responses_without_a_verified_state_never_reach_the_handler() -> None:
    server = MCPServer("echo")
    StateBoundary(sealer(), principal="operator").install(server)
    seen: list[Any] = []

    @server.tool()
    def act(ctx: Context) -> str:
        seen.append((ctx.input_responses, read_retry(ctx).responses))
        return "done"

    async def scenario() -> None:
        async with Client(server, elicitation_callback=never_asked) as client:
            await client.session.call_tool("act", {}, input_responses=OK, allow_input_required=True)

    anyio.run(scenario)
    assert seen == [(None, {})]


def test_a_round_finds_the_state_input_required_wrote_by_its_text() -> None:
    # The boundary seals the state input_required checked and wrote, found by the text
    # the handler returned: the very string (compared without reading it) or an equal one.
    from mrtr_state.mcp.rounds import CURRENT_ROUND, VerifiedRound

    verified = VerifiedRound(None)
    token = CURRENT_ROUND.set(verified)
    try:
        result = input_required(state={"step": 1, "note": "x y"})
    finally:
        CURRENT_ROUND.reset(token)
    text = result.request_state
    assert text is not None
    encoded = verified.encoded_as(text)
    assert encoded is not None
    assert encoded.json == text.encode("utf-8")
    assert verified.encoded_as("".join(list(text))) is encoded
    assert verified.encoded_as('{"step":2,"note":"x y"}') is None
    assert VerifiedRound(None).encoded_as(text) is None
