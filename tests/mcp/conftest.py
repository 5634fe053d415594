"""Shared helpers for the MCP integration tests: users, clocks, the example server as a process."""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the extra: pip install 'mrtr-state[mcp]'")

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))  # the example server is the package `server`

from server.accounts import EXAMPLE_TOKENS  # noqa: E402
from server.launch import RunningServer, ServerStartError, running_server  # noqa: E402
from tests.ci import missing_tool  # noqa: E402, F401  (the MCP tests take it from this conftest)

from mrtr_state.mcp import REASON_META_KEY  # noqa: E402

TOKEN_OF = {user: token for token, user in EXAMPLE_TOKENS.items()}
#: The example's confirmation: the answer ``delete_branch`` asks for.
YES = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
#: The arguments of the example's ``delete_branch`` that the in-process tests delete.
OLD_FEATURE = {"repo": "acme/api", "branch": "old-feature"}


class Clock:
    """A clock the tests move by hand, for sealers and replay stores."""

    def __init__(self, now: float = 1_796_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@contextlib.contextmanager
def as_user(user: str | None) -> Iterator[None]:
    """Make in-process requests as ``user``, as the SDK's bearer middleware would (None: anonymous)."""
    value = None
    if user is not None:
        value = AuthenticatedUser(
            AccessToken(token=f"{user}-token", client_id="tests", scopes=[], subject=user)
        )
    reset = auth_context_var.set(value)
    try:
        yield
    finally:
        auth_context_var.reset(reset)


async def never_asked(context: Any, params: ElicitRequestParams) -> ElicitResult:
    """An elicitation callback that declares the capability; manual rounds never call it."""
    raise AssertionError(f"unexpected elicitation: {params}")


@contextlib.asynccontextmanager
async def http_client(url: str, user: str | None, **options: Any) -> AsyncIterator[Client]:
    """An SDK client over Streamable HTTP, as ``user`` (a bearer token of the example), or anonymous."""
    headers = {} if user is None else {"Authorization": f"Bearer {TOKEN_OF[user]}"}
    options.setdefault("elicitation_callback", never_asked)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), **options) as client,
    ):
        yield client


@contextlib.contextmanager
def example_server(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> Iterator[RunningServer]:
    """Start ``python examples/server ARGS`` on a free loopback port; stop it on exit, whatever happens."""
    try:
        with running_server(*args, env=env, timeout=timeout) as server:
            yield server
    except ServerStartError as exc:
        raise AssertionError(f"the example server did not start: {exc}") from None


def which(name: str) -> str | None:
    """The path of an executable on PATH, or None."""
    return shutil.which(name)


def one_byte_changed(token: str) -> str:
    """The token with one character of its payload changed, as a meddling client would."""
    header, payload, signature = token.split(".")
    i = len(payload) // 2
    payload = payload[:i] + ("A" if payload[i] != "A" else "B") + payload[i + 1 :]
    return f"{header}.{payload}.{signature}"


def refusal_reason(result: Any) -> str:
    """The reason code of a refusal answered as a tool error."""
    assert isinstance(result, CallToolResult), result
    assert result.is_error is True
    assert result.meta is not None
    return str(result.meta[REASON_META_KEY])


#: Each way a retry of the in-process tests breaks a rule of the boundary, and the reason it is refused with.
BROKEN_RETRIES = [
    ("one byte changed", "bad_signature"),
    ("presented by another user", "wrong_user"),
    ("presented to another tool", "wrong_tool"),
    ("retried with other arguments", "wrong_request"),
    ("presented after ten minutes", "expired"),
    ("presented a second time after it was used", "replayed"),
]


async def retry_broken(
    client: Client, clock: Clock, rule: str, state: str, change: Callable[[str], str] = one_byte_changed
) -> Any:
    """Retry alice's ``delete_branch`` of old-feature with ``state``, broken as ``rule`` (of BROKEN_RETRIES)
    says, in process; what came back. ``change`` changes one byte of the state (of a JWS by default)."""
    tool, arguments, user = "delete_branch", OLD_FEATURE, "alice"
    if rule == "one byte changed":
        state = change(state)
    elif rule == "presented by another user":
        user = "bob"
    elif rule == "presented to another tool":
        tool, arguments = "book_trip", {"destination": "Lisbon"}
    elif rule == "retried with other arguments":
        arguments = {"repo": "acme/api", "branch": "release-1.0"}
    elif rule == "presented after ten minutes":
        clock.now += 600
    elif rule == "presented a second time after it was used":
        with as_user("alice"):
            first = await client.session.call_tool(
                tool, arguments, allow_input_required=True, request_state=state, input_responses=YES
            )
        assert not first.is_error, first
    else:
        raise AssertionError(f"no such rule: {rule}")
    with as_user(user):
        return await client.session.call_tool(
            tool, arguments, allow_input_required=True, request_state=state, input_responses=YES
        )
