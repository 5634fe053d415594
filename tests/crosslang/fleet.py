"""A mixed fleet for the cross-language tests: the Python, TypeScript, Go, Java and Rust example servers.

The servers get one key ring (``MRTR_STATE_KEYS``), one issuer and one Redis (``--redis-url``), as a
round-robin load balancer's backends would. The TypeScript side (the ``mrtr-state`` package and
``examples/server-ts``) is built here from its own lock files (``npm ci``), the Go side
(``examples/server-go`` on the Go module) with ``go build``, the Java side (the library in ``java/`` and
``examples/server-java``) from its pinned Maven builds, the Rust side (``examples/server-rust`` on the crates
in ``rust/``) with ``cargo build --locked``; without Node.js, Go, Java and Maven, or cargo the tests skip,
except under ``CI=true``, where they fail. Calls go through three official SDK clients: the Python
client in process, the TypeScript client as ``examples/server-ts/dist/client.js``, the Go client as
``examples/server-go/bin/client``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequestParams, ElicitResult, InputRequiredResult

from mrtr_state import REASONS
from mrtr_state.mcp import REASON_META_KEY

ROOT = Path(__file__).resolve().parents[2]
TS_PACKAGE = ROOT / "typescript"
TS_SERVER = ROOT / "examples" / "server-ts"
GO_SERVER = ROOT / "examples" / "server-go"
JAVA_EXAMPLES = ROOT / "examples"  # its pom.xml builds the Java examples with java/ as a module
JAVA_SERVER = ROOT / "examples" / "server-java"
RUST_SERVER = ROOT / "examples" / "server-rust"
#: The Rust example builds into the core crate's target directory, so the crates it shares with
#: ``rust/`` and ``rust/rmcp`` compile once.
RUST_TARGET = ROOT / "rust" / "target"
BUILD_TIMEOUT = 900
CALL_TIMEOUT = 60

if str(ROOT / "examples") not in sys.path:
    sys.path.insert(0, str(ROOT / "examples"))  # the Python example server is the package `server`

from server.accounts import EXAMPLE_TOKENS  # noqa: E402
from server.launch import running_server  # noqa: E402

from tests.ci import missing_tool  # noqa: E402

TOKEN_OF = {user: token for token, user in EXAMPLE_TOKENS.items()}


@dataclass(frozen=True)
class Toolchain:
    """How one language's replica is built: the tools it needs, then the commands, each run in its folder."""

    name: str
    tools: tuple[str, ...]
    steps: tuple[tuple[Path, tuple[str, ...]], ...]


_NPM_CI = ("npm", "ci", "--no-audit", "--no-fund")
_GO_BUILD = ("go", "build", "-mod=readonly", "-trimpath", "-o")
_MAVEN_CLASSPATH = (
    "dependency:build-classpath",
    "-Dmdep.outputFile=target/classpath.txt",
    "-DincludeScope=runtime",
)

#: TypeScript: ``npm ci`` and build the package, then the example server, from their lock files. Go: the
#: example server and its client (the module comes from ``go/`` by ``replace``). Java: the example server
#: and its classpath in one Maven run over ``examples/pom.xml``, which lists ``java/`` as a module, so the
#: classpath holds ``java/target/classes`` and nothing is installed into ``~/.m2`` (shared by every checkout).
#: Rust: the example server from its lock file, a debug build (the tests need no optimized code).
TOOLCHAINS = {
    "typescript": Toolchain(
        "Node.js",
        ("node", "npm", "npx"),
        (
            (TS_PACKAGE, _NPM_CI),
            (TS_PACKAGE, ("npm", "run", "build")),
            (TS_SERVER, _NPM_CI),
            (TS_SERVER, ("npx", "tsc", "-p", ".")),
        ),
    ),
    "go": Toolchain(
        "Go",
        ("go",),
        (
            (GO_SERVER, (*_GO_BUILD, "bin/server-go", ".")),
            (GO_SERVER, (*_GO_BUILD, "bin/client", "./cmd/client")),
        ),
    ),
    "java": Toolchain(
        "Java",
        ("java", "mvn"),
        (
            (
                JAVA_EXAMPLES,
                # The example and what it needs from the reactor (java/), then its classpath.
                ("mvn", "-q", "-B", "-pl", ":server-java", "-am", "compile", *_MAVEN_CLASSPATH),
            ),
        ),
    ),
    "rust": Toolchain(
        "Rust",
        ("cargo",),
        ((RUST_SERVER, ("cargo", "build", "--locked", "--quiet", "--target-dir", str(RUST_TARGET))),),
    ),
}


def build(language: str) -> None:
    """Build the ``typescript``, ``go``, ``java`` or ``rust`` replica (and client) as ``TOOLCHAINS`` says."""
    toolchain = TOOLCHAINS[language]
    missing = [tool for tool in toolchain.tools if shutil.which(tool) is None]
    if missing:
        missing_tool(
            f"{toolchain.name} is not installed (missing {', '.join(missing)}); "
            "the cross-language test needs it"
        )
    for directory, command in toolchain.steps:
        result = subprocess.run(
            command, cwd=directory, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False
        )
        if result.returncode != 0:
            pytest.fail(
                f"{' '.join(command)} in {directory.relative_to(ROOT)} failed ({result.returncode}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )


#: The command that starts each replica, before ``--port 0 ARGS`` (None: the Python example server).
SERVER_COMMANDS: dict[str, tuple[str, ...] | None] = {
    "python": None,
    "typescript": ("node", str(TS_SERVER / "dist" / "main.js")),
    "go": (str(GO_SERVER / "bin" / "server-go"),),
    "java": (str(JAVA_SERVER / "run.sh"),),
    "rust": (str(RUST_TARGET / "debug" / "server-rust"),),
}


@contextlib.contextmanager
def replica(language: str, *args: str, env: Mapping[str, str], timeout: float = 60) -> Iterator[str]:
    """Start one language's example server with ``--port 0 ARGS``; yield its URL; always stop it."""
    command = SERVER_COMMANDS[language]
    with running_server(*args, env=dict(env), timeout=timeout, command=command) as server:
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


#: The SDK clients that run as a process of their own: each reads one call as a JSON object on standard
#: input and writes what came back as one JSON line (``Answer.from_wire``).
CLIENT_COMMANDS = {
    "typescript": ("node", str(TS_SERVER / "dist" / "client.js")),
    "go": (str(GO_SERVER / "bin" / "client"),),
}
CLIENT_NAMES = {"typescript": "TypeScript", "go": "Go"}


def process_call(
    client: str,
    url: str,
    user: str,
    tool: str,
    arguments: dict[str, Any],
    request_state: str | None = None,
    input_responses: dict[str, dict[str, Any]] | None = None,
) -> Answer:
    """One ``tools/call`` through the official TypeScript or Go SDK client (the example servers' clients)."""
    call: dict[str, Any] = {"url": url, "user": user, "tool": tool, "arguments": arguments}
    if request_state is not None:
        call["requestState"] = request_state
    if input_responses is not None:
        call["inputResponses"] = input_responses
    result = subprocess.run(
        CLIENT_COMMANDS[client],
        input=json.dumps(call),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"the {CLIENT_NAMES[client]} client failed ({result.returncode}): {result.stderr[-3000:]}"
        )
    return Answer.from_wire(json.loads(result.stdout))


def call(
    client: str,
    url: str,
    user: str,
    tool: str,
    arguments: dict[str, Any],
    request_state: str | None = None,
    input_responses: dict[str, dict[str, Any]] | None = None,
) -> Answer:
    """One ``tools/call`` to the server at ``url`` through the ``python``, ``typescript`` or ``go`` client."""
    if client == "python":
        return python_call(url, user, tool, arguments, request_state, input_responses)
    return process_call(client, url, user, tool, arguments, request_state, input_responses)


def one_byte_changed(token: str) -> str:
    """``token`` with one character of its payload segment changed."""
    header, payload, signature = token.split(".")
    i = len(payload) // 2
    return f"{header}.{payload[:i]}{'A' if payload[i] != 'A' else 'B'}{payload[i + 1 :]}.{signature}"


def assert_refused(answer: Answer, reason: str) -> None:
    """A tool error with the profile's reason in _meta and its sentence as the text."""
    assert answer.result_type == "complete", answer
    assert answer.is_error, answer
    assert answer.reason == reason, answer
    assert answer.text == REASONS[reason], answer
