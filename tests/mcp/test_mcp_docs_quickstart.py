"""The MCP quick starts of the docs, run as written: a stdio server and an HTTP server with bearer auth.

Issue 25: the documented quick start had no authentication (it failed with "no authenticated
principal") and left the token verifier out. Both forms are files under docs/examples/ that the
Markdown quotes byte for byte (tests/docs); here each runs as its own process (the HTTP one on
loopback), the SDK's client (and, for HTTP, the documented client file) drives a round trip
through it, a changed or foreign state is refused, and the process is stopped.

Issue 33: with mcp 2.3 the HTTP quick start printed MCPDeprecationWarning (validate_token_resource
unset), and setting it made every call a 401 (its AccessToken had no resource); the server now runs
with warnings as errors, so the round trips below pass only as a new user would see them: no warning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, InputRequiredResult
from server.launch import stop
from tests.ports import free_port, wait_for_port

from conftest import REPO, YES, one_byte_changed
from mrtr_state import Keyring, decode_unverified
from mrtr_state.mcp import REASON_META_KEY

DOCS = REPO / "docs" / "examples"
OLD = {"branch": "old-feature"}
USERS = {"alice-docs-token": "alice", "bob-docs-token": "bob"}


def keys(alg: str = "EdDSA") -> str:
    return json.dumps(Keyring.generate(alg).private_jwks())


def reason(result: Any) -> str:
    assert isinstance(result, CallToolResult), result
    assert result.is_error is True
    assert result.meta is not None
    return str(result.meta[REASON_META_KEY])


def text(result: Any) -> str:
    assert isinstance(result, CallToolResult), result
    assert not result.is_error, result
    return str(result.content[0].text)


async def call(client: Client, state: str | None = None, responses: Any = None) -> Any:
    return await client.session.call_tool(
        "delete_branch", OLD, allow_input_required=True, request_state=state, input_responses=responses
    )


def test_the_stdio_quick_start_binds_its_fixed_principal_and_refuses_a_changed_state() -> None:
    server = StdioServerParameters(
        command=sys.executable, args=[str(DOCS / "mcp_stdio_server.py")], env={"MRTR_STATE_KEYS": keys()}
    )

    async def scenario() -> tuple[Any, ...]:
        async with Client(server) as client:
            asked = await call(client)
            assert isinstance(asked, InputRequiredResult), asked
            state = asked.request_state or ""
            changed = await call(client, one_byte_changed(state), YES)
            done = await call(client, state, YES)
            again = await call(client, state, YES)
        return state, changed, done, again

    state, changed, done, again = anyio.run(scenario)
    assert decode_unverified(state)[1]["sub"] == "local-user"
    assert reason(changed) == "bad_signature"
    assert text(done) == "Deleted old-feature (it was at 4b1d0aa)."
    assert reason(again) == "replayed"


@pytest.fixture(params=["EdDSA", "A256GCM"])
def http_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The HTTP quick start on a free loopback port, signing (EdDSA) or encrypting (A256GCM) its states."""
    port = free_port()
    env = {
        **os.environ,
        "MRTR_STATE_KEYS": keys(request.param),
        "BEARER_TOKENS": json.dumps(USERS),
        "PORT": str(port),
    }
    # Warnings as errors: the SDK's MCPDeprecationWarning (issue 33: validate_token_resource unset) would
    # stop the server before it listens; one raised while serving shows on stderr, checked below.
    process = subprocess.Popen(
        [sys.executable, "-W", "error", str(DOCS / "mcp_http_server.py")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_port(
            port,
            process,
            bound_s=60,
            what="the HTTP quick start",
            log=lambda: process.stderr.read() if process.stderr and process.poll() is not None else "",
        )
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)
        errors = ""
        if process.stderr is not None:
            errors = process.stderr.read()
            process.stderr.close()
    assert "Warning" not in errors, errors[-3000:]


def test_the_http_quick_start_binds_the_bearer_tokens_user_and_refuses_another(http_server: str) -> None:
    async def as_user(user: str, state: str | None = None, responses: Any = None) -> Any:
        token = next(token for token, owner in USERS.items() if owner == user)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
            Client(streamable_http_client(http_server, http_client=http)) as client,
        ):
            return await call(client, state, responses)

    async def scenario() -> tuple[Any, ...]:
        asked = await as_user("alice")
        assert isinstance(asked, InputRequiredResult), asked
        state = asked.request_state or ""
        foreign = await as_user("bob", state, YES)
        done = await as_user("alice", state, YES)
        async with httpx2.AsyncClient(timeout=30) as anonymous:
            unauthenticated = await anonymous.post(http_server, json={})
        return state, foreign, done, unauthenticated.status_code

    state, foreign, done, status = anyio.run(scenario)
    if state.count(".") == 2:  # signed: the client can read the claims; encrypted: it cannot
        assert decode_unverified(state)[1]["sub"] == "alice"
    else:
        assert state.count(".") == 4
        assert "alice" not in state
    assert reason(foreign) == "wrong_user"
    assert text(done) == "Deleted old-feature (it was at 4b1d0aa)."
    assert status == 401


def test_the_http_quick_starts_client_confirms_and_sees_a_changed_state_refused(http_server: str) -> None:
    client = subprocess.run(
        [sys.executable, str(DOCS / "mcp_http_client.py")],
        env={**os.environ, "MCP_URL": http_server, "BEARER_TOKEN": "alice-docs-token"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert client.returncode == 0, client.stdout + client.stderr[-3000:]
    assert client.stdout.splitlines() == [
        "asked to confirm",
        "changed state: refused: bad_signature",
        "sealed state: Deleted old-feature (it was at 4b1d0aa).",
    ]
