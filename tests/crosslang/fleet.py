"""A mixed fleet for the cross-language test: the Python, TypeScript, Go and Java example servers as replicas.

The servers get one key ring (``MRTR_STATE_KEYS``), one issuer and one Redis (``--redis-url``), as a
round-robin load balancer's backends would. The TypeScript side (the ``mrtr-state`` package and
``examples/server-ts``) is built here from its own lock files (``npm ci``), the Go side
(``examples/server-go`` on the Go module) with ``go build``, the Java side (the library in ``java/`` and
``examples/server-java``) from its pinned Maven builds; without Node.js, Go, or Java and Maven the tests
skip, except under ``CI=true``, where they fail. Calls go through three official SDK clients: the Python
client in process, the TypeScript client as ``examples/server-ts/dist/client.js``, the Go client as
``examples/server-go/bin/client``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequestParams, ElicitResult, InputRequiredResult

from mrtr_state.mcp import REASON_META_KEY

ROOT = Path(__file__).resolve().parents[2]
TS_PACKAGE = ROOT / "typescript"
TS_SERVER = ROOT / "examples" / "server-ts"
GO_SERVER = ROOT / "examples" / "server-go"
JAVA_EXAMPLES = ROOT / "examples"  # its pom.xml builds the Java examples with java/ as a module
JAVA_SERVER = ROOT / "examples" / "server-java"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
BUILD_TIMEOUT = 900
CALL_TIMEOUT = 60

if str(ROOT / "examples") not in sys.path:
    sys.path.insert(0, str(ROOT / "examples"))  # the Python example server is the package `server`

from server.accounts import EXAMPLE_TOKENS  # noqa: E402
from server.launch import running_server  # noqa: E402

TOKEN_OF = {user: token for token, user in EXAMPLE_TOKENS.items()}


def unavailable(message: str) -> NoReturn:
    """Skip locally, fail under CI=true: a CI run never skips for a missing tool."""
    if IN_CI:
        pytest.fail(message + " (CI=true: a missing tool is a failure)")
    pytest.skip(message)


def build_typescript() -> None:
    """``npm ci`` and build the package, then the TypeScript example server, from their lock files."""
    missing = [tool for tool in ("node", "npm", "npx") if shutil.which(tool) is None]
    if missing:
        unavailable(
            f"Node.js is not installed (missing {', '.join(missing)}); the cross-language test needs it"
        )
    steps = [
        (TS_PACKAGE, ["npm", "ci", "--no-audit", "--no-fund"]),
        (TS_PACKAGE, ["npm", "run", "build"]),
        (TS_SERVER, ["npm", "ci", "--no-audit", "--no-fund"]),
        (TS_SERVER, ["npx", "tsc", "-p", "."]),
    ]
    for directory, command in steps:
        result = subprocess.run(
            command, cwd=directory, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
        )
        if result.returncode != 0:
            pytest.fail(
                f"{' '.join(command)} in {directory.relative_to(ROOT)} failed ({result.returncode}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )


def build_go() -> None:
    """``go build`` the Go example server and its client (the module comes from ``go/`` by ``replace``)."""
    if shutil.which("go") is None:
        unavailable("Go is not installed (missing go); the cross-language test needs it")
    for output, package in (("bin/server-go", "."), ("bin/client", "./cmd/client")):
        result = subprocess.run(
            ["go", "build", "-mod=readonly", "-trimpath", "-o", output, package],
            cwd=GO_SERVER,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
        if result.returncode != 0:
            pytest.fail(f"go build {package} in examples/server-go failed:\n{result.stderr[-3000:]}")


@contextlib.contextmanager
def go_server(*args: str, env: Mapping[str, str], timeout: float = 60) -> Iterator[str]:
    """Start ``examples/server-go/bin/server-go --port 0 ARGS``; yield its URL; always stop it."""
    with running_server(
        *args, env=dict(env), timeout=timeout, command=(str(GO_SERVER / "bin" / "server-go"),)
    ) as server:
        yield server.url


def build_java() -> None:
    """Build the Java example server and its classpath on this checkout's Java library, in one Maven run.

    ``examples/pom.xml`` lists ``java/`` and the example as modules, so the example's classpath holds
    ``java/target/classes``: nothing is installed into ``~/.m2``, shared by every checkout on the machine.
    """
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        unavailable(f"Java is not installed (missing {', '.join(missing)}); the cross-language test needs it")
    classpath = ["-Dmdep.outputFile=target/classpath.txt", "-DincludeScope=runtime"]
    server = ["-pl", ":server-java", "-am"]  # the example and what it needs from the reactor: java/
    command = ["mvn", "-q", "-B", *server, "compile", "dependency:build-classpath", *classpath]
    result = subprocess.run(
        command, cwd=JAVA_EXAMPLES, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(command)} in {JAVA_EXAMPLES.relative_to(ROOT)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )


@contextlib.contextmanager
def java_server(*args: str, env: Mapping[str, str], timeout: float = 60) -> Iterator[str]:
    """Start ``examples/server-java/run.sh --port 0 ARGS``; yield its URL; always stop it."""
    command = (str(JAVA_SERVER / "run.sh"),)
    with running_server(*args, env=dict(env), timeout=timeout, command=command) as server:
        yield server.url


@contextlib.contextmanager
def typescript_server(*args: str, env: Mapping[str, str], timeout: float = 60) -> Iterator[str]:
    """Start ``node examples/server-ts/dist/main.js --port 0 ARGS``; yield its URL; always stop it."""
    command = ("node", str(TS_SERVER / "dist" / "main.js"))
    with running_server(*args, env=dict(env), timeout=timeout, command=command) as server:
        yield server.url


@contextlib.contextmanager
def python_server(*args: str, env: Mapping[str, str]) -> Iterator[str]:
    """Start the Python example server (``examples/server``); yield its URL; always stop it."""
    with running_server(*args, env=dict(env)) as server:
        yield server.url


@dataclass(frozen=True)
class Answer:
    """What a call got back, the same shape whichever client made it."""

    result_type: str | None  # "input_required" or "complete"; None for a JSON-RPC error
    request_state: str | None = None
    is_error: bool = False
    text: str = ""
    reason: str | None = None
    error_code: int | None = None

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Answer:
        """From the TypeScript client's JSON line."""
        if "error" in data:
            error = data["error"]
            reason = (error.get("data") or {}).get("reason") if isinstance(error.get("data"), dict) else None
            return cls(None, error_code=error["code"], text=error.get("message", ""), reason=reason)
        if data["resultType"] == "input_required":
            return cls("input_required", request_state=data["requestState"])
        return cls("complete", is_error=data["isError"], text=data["text"], reason=data["reason"])


async def _never_asked(context: Any, params: ElicitRequestParams) -> ElicitResult:
    raise AssertionError(f"unexpected elicitation: {params}")


def python_call(
    url: str,
    user: str,
    tool: str,
    arguments: dict[str, Any],
    request_state: str | None = None,
    input_responses: dict[str, dict[str, Any]] | None = None,
) -> Answer:
    """One ``tools/call`` through the official Python SDK client (manual rounds)."""

    async def call() -> Answer:
        headers = {"Authorization": f"Bearer {TOKEN_OF[user]}"}
        responses = (
            None
            if input_responses is None
            else {key: ElicitResult.model_validate(value) for key, value in input_responses.items()}
        )
        async with (
            httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT) as http,
            Client(
                streamable_http_client(url, http_client=http), elicitation_callback=_never_asked
            ) as client,
        ):
            try:
                result = await client.session.call_tool(
                    tool,
                    arguments,
                    allow_input_required=True,
                    request_state=request_state,
                    input_responses=responses,
                )
            except MCPError as error:
                data = error.data if isinstance(error.data, dict) else {}
                return Answer(None, error_code=error.code, text=error.message, reason=data.get("reason"))
        if isinstance(result, InputRequiredResult):
            return Answer("input_required", request_state=result.request_state)
        text = "".join(getattr(item, "text", "") for item in result.content)
        reason = (result.meta or {}).get(REASON_META_KEY)
        return Answer("complete", is_error=bool(result.is_error), text=text, reason=reason)

    return anyio.run(call)


def go_call(
    url: str,
    user: str,
    tool: str,
    arguments: dict[str, Any],
    request_state: str | None = None,
    input_responses: dict[str, dict[str, Any]] | None = None,
) -> Answer:
    """One ``tools/call`` through the official Go SDK client (``examples/server-go``'s client)."""
    call: dict[str, Any] = {"url": url, "user": user, "tool": tool, "arguments": arguments}
    if request_state is not None:
        call["requestState"] = request_state
    if input_responses is not None:
        call["inputResponses"] = input_responses
    result = subprocess.run(
        [str(GO_SERVER / "bin" / "client")],
        input=json.dumps(call),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"the Go client failed ({result.returncode}): {result.stderr[-3000:]}")
    return Answer.from_wire(json.loads(result.stdout))


def typescript_call(
    url: str,
    user: str,
    tool: str,
    arguments: dict[str, Any],
    request_state: str | None = None,
    input_responses: dict[str, dict[str, Any]] | None = None,
) -> Answer:
    """One ``tools/call`` through the official TypeScript SDK client (``examples/server-ts``'s client)."""
    call: dict[str, Any] = {"url": url, "user": user, "tool": tool, "arguments": arguments}
    if request_state is not None:
        call["requestState"] = request_state
    if input_responses is not None:
        call["inputResponses"] = input_responses
    result = subprocess.run(
        ["node", str(TS_SERVER / "dist" / "client.js")],
        input=json.dumps(call),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"the TypeScript client failed ({result.returncode}): {result.stderr[-3000:]}")
    return Answer.from_wire(json.loads(result.stdout))


CLIENTS = {"python": python_call, "typescript": typescript_call, "go": go_call}
