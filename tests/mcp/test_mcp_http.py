"""The example server as a real process over Streamable HTTP, with bearer-token users and the SDK's client."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ElicitResult, InputRequiredResult
from tests.crosslang.edge_inputs import MISSING, body, post

from conftest import (
    EXAMPLES,
    TOKEN_OF,
    YES,
    RunningServer,
    example_server,
    http_client,
    one_byte_changed,
    refusal_reason,
)
from mrtr_state import Keyring, decode_unverified
from mrtr_state.mcp import REASON_META_KEY


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with example_server("--dev-key") as running:
        yield running


@pytest.fixture(scope="module")
def jsonrpc_server() -> Iterator[RunningServer]:
    with example_server("--dev-key", "--tool-refusal", "jsonrpc") as running:
        yield running


async def ask(url: str, user: str, tool: str, arguments: dict[str, Any]) -> InputRequiredResult:
    async with http_client(url, user) as client:
        result = await client.session.call_tool(tool, arguments, allow_input_required=True)
    assert isinstance(result, InputRequiredResult), result
    return result


async def answer(
    url: str, user: str, tool: str, arguments: dict[str, Any], state: str, responses: Any
) -> Any:
    """The retry's result, or the JSON-RPC error it got (caught inside the client's task group)."""
    async with http_client(url, user) as client:
        try:
            return await client.session.call_tool(
                tool, arguments, allow_input_required=True, request_state=state, input_responses=responses
            )
        except MCPError as error:
            return error


def branch(name: str) -> dict[str, str]:
    return {"repo": "acme/api", "branch": name}


def test_a_confirmed_delete_completes_over_http(server: RunningServer) -> None:
    async def scenario() -> tuple[InputRequiredResult, Any]:
        asked = await ask(server.url, "alice", "delete_branch", branch("old-feature"))
        done = await answer(
            server.url, "alice", "delete_branch", branch("old-feature"), asked.request_state or "", YES
        )
        return asked, done

    asked, done = anyio.run(scenario)
    assert decode_unverified(asked.request_state)[1]["sub"] == "alice"
    assert not done.is_error
    assert done.content[0].text == "Deleted branch 'old-feature' of acme/api (it was at 4b1d0aa)."


def test_the_sdk_driver_completes_the_two_round_form_over_http(server: RunningServer) -> None:
    async def answer_form(context: Any, params: Any) -> ElicitResult:
        if "When do you want to fly" in params.message:
            return ElicitResult(action="accept", content={"depart": "2026-12-12", "return": "2026-12-19"})
        return ElicitResult(action="accept", content={"seat": "1A"})

    async def scenario() -> CallToolResult:
        async with http_client(server.url, "bob", elicitation_callback=answer_form) as client:
            return await client.call_tool("book_trip", {"destination": "Reykjavik"})

    result = anyio.run(scenario)
    assert not result.is_error, result
    assert "Booked for bob: Reykjavik" in result.content[0].text  # type: ignore[union-attr]
    assert "seat 1A, 400 EUR" in result.content[0].text  # type: ignore[union-attr]  # weekend fare


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ("one byte changed", "bad_signature"),
        ("presented by another user", "wrong_user"),
        ("presented to another tool", "wrong_tool"),
        ("retried with other arguments", "wrong_request"),
        ("presented a second time after it was used", "replayed"),
    ],
)
def test_a_state_is_refused_as_a_tool_error_over_http(server: RunningServer, rule: str, reason: str) -> None:
    async def scenario() -> Any:
        asked = await ask(server.url, "alice", "delete_branch", branch("release-1.0"))
        state, user, tool, arguments = (
            asked.request_state or "",
            "alice",
            "delete_branch",
            branch("release-1.0"),
        )
        if rule == "one byte changed":
            state = one_byte_changed(state)
        elif rule == "presented by another user":
            user = "bob"
        elif rule == "presented to another tool":
            tool, arguments = "book_trip", {"destination": "Lisbon"}
        elif rule == "retried with other arguments":
            arguments = branch("spike/cache")
        else:  # decline, so the branch stays for the other cases, then replay the used state
            no = {"confirm": ElicitResult(action="decline")}
            kept = await answer(server.url, user, tool, arguments, state, no)
            assert "Kept branch" in kept.content[0].text
        return await answer(server.url, user, tool, arguments, state, YES)

    assert refusal_reason(anyio.run(scenario)) == reason


@pytest.mark.parametrize(
    ("rule", "reason"),
    [("one byte changed", "bad_signature"), ("presented by another user", "wrong_user")],
)
def test_in_jsonrpc_mode_a_state_is_refused_with_invalid_params_over_http(
    jsonrpc_server: RunningServer, rule: str, reason: str
) -> None:
    async def scenario() -> MCPError:
        asked = await ask(jsonrpc_server.url, "alice", "delete_branch", branch("release-1.0"))
        state, user = asked.request_state or "", "alice"
        if rule == "one byte changed":
            state = one_byte_changed(state)
        else:
            user = "bob"
        return await answer(jsonrpc_server.url, user, "delete_branch", branch("release-1.0"), state, YES)

    error = anyio.run(scenario)
    assert isinstance(error, MCPError)
    assert error.code == INVALID_PARAMS
    assert error.data == {"reason": reason}


@pytest.mark.parametrize(
    "arguments",
    [
        {"repo": "acme/api", "branch": "old-feature"},
        {"repo": "acme/api", "branch": "old-feature", "n": 2**60},
    ],
    ids=["refused state", "unbindable arguments"],
)
def test_in_jsonrpc_mode_a_32602_goes_out_with_http_400(
    jsonrpc_server: RunningServer, arguments: Any
) -> None:
    """MCP 2026-07-28 (SEP-2575): InvalidParams MUST be returned with HTTP 400 on Streamable HTTP."""
    state = 42 if "n" not in arguments else MISSING  # a non-string state is refused as malformed
    status, message = post(jsonrpc_server.url, body("delete_branch", arguments, state))
    assert message is not None
    assert message["error"]["code"] == INVALID_PARAMS
    assert status == 400


def test_a_state_is_refused_after_it_expired_over_http() -> None:
    with example_server("--dev-key", "--ttl", "1") as short:

        async def scenario() -> Any:
            asked = await ask(short.url, "alice", "delete_branch", branch("old-feature"))
            exp = decode_unverified(asked.request_state)[1]["exp"]
            await anyio.sleep(max(0.0, exp - time.time()) + 0.2)
            return await answer(
                short.url, "alice", "delete_branch", branch("old-feature"), asked.request_state or "", YES
            )

        assert refusal_reason(anyio.run(scenario)) == "expired"


def test_a_retry_without_the_answer_is_asked_again_over_http(server: RunningServer) -> None:
    async def scenario() -> Any:
        asked = await ask(server.url, "alice", "book_trip", {"destination": "Kyoto"})
        return await answer(
            server.url, "alice", "book_trip", {"destination": "Kyoto"}, asked.request_state or "", {}
        )

    again = anyio.run(scenario)
    assert isinstance(again, InputRequiredResult)
    assert list(again.input_requests or {}) == ["dates"]


def test_a_request_without_a_bearer_token_is_unauthorized(server: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx2.post(server.url, json=body, headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401


def test_the_server_log_names_reasons_and_never_holds_a_token(server: RunningServer) -> None:
    async def scenario() -> str:
        asked = await ask(server.url, "alice", "delete_branch", branch("release-1.0"))
        await answer(
            server.url, "bob", "delete_branch", branch("release-1.0"), asked.request_state or "", YES
        )
        return asked.request_state or ""

    token = anyio.run(scenario)
    time.sleep(0.2)  # the log line is written before the response; this only lets the file flush
    log = server.log()
    assert "requestState refused on tools/call: wrong_user" in log
    for segment in token.split("."):
        assert segment not in log


def test_keys_come_from_mrtr_state_keys() -> None:
    ring = Keyring.generate("HS256")
    keys = json.dumps(ring.private_jwks())
    with example_server(env={"MRTR_STATE_KEYS": keys}) as running:

        async def scenario() -> InputRequiredResult:
            return await ask(running.url, "alice", "delete_branch", branch("old-feature"))

        token = anyio.run(scenario).request_state
        assert "EPHEMERAL" not in running.log()
    assert decode_unverified(token)[0]["kid"] == ring.signing_key.kid


def test_without_keys_the_server_says_how_to_set_them_and_exits() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "server")],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "MRTR_STATE_KEYS": ""},
        check=False,
    )
    assert result.returncode == 2
    assert "MRTR_STATE_KEYS is not set" in result.stderr
    assert "--dev-key" in result.stderr


def test_a_dev_key_says_loudly_that_it_is_ephemeral(server: RunningServer) -> None:
    assert "EPHEMERAL" in server.log()
    assert "Development only" in server.log()


@pytest.mark.parametrize(
    ("request_state", "reason"),
    [(42, "malformed"), ({"forged": True}, "malformed"), ("x" * 100_000, "too_large"), ("", "malformed")],
)
def test_a_request_state_that_is_not_a_token_is_refused_not_crashed(
    server: RunningServer, request_state: Any, reason: str
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "delete_branch",
            "arguments": branch("old-feature"),
            "requestState": request_state,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            },
        },
    }
    headers = {
        "Authorization": f"Bearer {TOKEN_OF['alice']}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "delete_branch",
    }
    response = httpx2.post(server.url, json=body, headers=headers, timeout=30)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["_meta"][REASON_META_KEY] == reason
