"""Shared helpers for the MCP integration tests: users, clocks, the example server as a process."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
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
from mcp_types import ElicitRequestParams, ElicitResult

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))  # the example server is the package `server`

from server.accounts import EXAMPLE_TOKENS  # noqa: E402

TOKEN_OF = {user: token for token, user in EXAMPLE_TOKENS.items()}
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing_tool(message: str) -> None:
    """Skip locally, but fail under CI=true: a missing tool must never pass silently there."""
    if IN_CI:
        pytest.fail(f"{message} (CI=true: required)")
    pytest.skip(message)


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


@dataclass
class RunningServer:
    """An example server process: its URL and its log (stderr)."""

    url: str
    process: subprocess.Popen[str]
    log_path: Path

    def log(self) -> str:
        """Everything the server wrote to stderr so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


_LISTENING = re.compile(r"listening on (http://\S+/mcp)")


@contextlib.contextmanager
def example_server(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> Iterator[RunningServer]:
    """Start ``python examples/server ARGS`` on a free loopback port; stop it on exit, whatever happens."""
    with tempfile.TemporaryDirectory(prefix="mrtr-example-") as tmp:
        log_path = Path(tmp) / "stderr.log"
        with log_path.open("w", encoding="utf-8") as log:
            process = subprocess.Popen(
                [sys.executable, str(EXAMPLES / "server"), "--port", "0", *args],
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env={**os.environ, **(env or {})},
            )
        try:
            lines: queue.Queue[str] = queue.Queue()
            assert process.stdout is not None
            stdout = process.stdout

            def pump() -> None:
                for line in stdout:
                    lines.put(line)

            threading.Thread(target=pump, daemon=True).start()
            try:
                first = lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"the example server did not start: {log_path.read_text()}") from None
            found = _LISTENING.search(first)
            assert found, f"unexpected first line {first!r}; log: {log_path.read_text()}"
            yield RunningServer(found.group(1), process, log_path)
        finally:
            stop(process)


def stop(process: subprocess.Popen[str]) -> None:
    """Stop a server process: SIGTERM (uvicorn shuts down gracefully), then SIGKILL if it hangs."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
    if process.stdout is not None:
        process.stdout.close()


def which(name: str) -> str | None:
    """The path of an executable on PATH, or None."""
    return shutil.which(name)


def one_byte_changed(token: str) -> str:
    """The token with one character of its payload changed, as a meddling client would."""
    header, payload, signature = token.split(".")
    i = len(payload) // 2
    payload = payload[:i] + ("A" if payload[i] != "A" else "B") + payload[i + 1 :]
    return f"{header}.{payload}.{signature}"
