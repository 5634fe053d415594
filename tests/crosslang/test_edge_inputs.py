"""Every edge input of profile 8.2 gets one answer from every example server, in all five languages.

The inputs (tests/crosslang/edge_inputs.py: ``requestState`` absent, null, empty, not a string;
``arguments`` absent, null, not an object, unbindable, on a first round and on a retry; a state sent to an
unknown tool; an ``inputResponses`` entry that is no result; and on ``prompts/get`` (``review_branch``) and
``resources/read`` (``trips://fares/Lisbon``) the same ``requestState`` and ``arguments`` inputs (on a
resource, which has no arguments, an ``arguments`` member on a first round), a state sent to another
prompt or URI, and a tool's or prompt's state sent there) go as raw JSON-RPC to each
example server, in one session per server, in
both refusal modes, over Streamable HTTP and over stdio (``--stdio``). Each answer, reduced to its
JSON-RPC code and ``data.reason``, or its tool error's reason code, or its result type, and the HTTP
status when it is not 200 (400 for every -32602: MCP 2026-07-28, SEP-2575), must be Python's, and
Python's must be ``EXPECTED_HTTP``: so a new language, or a new SDK version under one, cannot drift
silently. Over stdio every language must give ``EXPECTED`` too,
except where the Python SDK's stdio reader hides an input (``PYTHON_STDIO_LIMIT``, documented); the Rust
server's stdio transport (``StateBoundary::stdio``) reads lines with ``serde_json``, which hides the same
inputs and leaves them unanswered too (``PYTHON_STDIO_LIMIT`` applies to it as well). Over Streamable HTTP
the Rust server gives Python's answers except where rmcp's JSON reader hides an input (``RUST_HTTP_LIMIT``,
documented). Each server starts once per mode and transport, one at a time.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from tests.crosslang import fleet
from tests.crosslang.edge_inputs import (
    EXPECTED,
    EXPECTED_HTTP,
    SECRET_ANSWER,
    edge_answers,
    http,
    no_result_message,
    stdio,
)

LANGUAGES = ("python", "typescript", "go", "java")
#: The languages served over Streamable HTTP: every one, Rust included.
HTTP_LANGUAGES = (*LANGUAGES, "rust")
#: A documented limit of rmcp (rust/rmcp/README.md, docs/mcp.md's edge-input table): serde_json, with which
#: rmcp (and the layer in front of it) reads a request, stops at 128 levels of nesting, and rmcp answers such
#: a body with HTTP 415 before any handler runs: arguments nested 300 levels reach no boundary, so no state is
#: opened or minted for them.
RUST_HTTP_LIMIT = {
    f"{method}{edge} with arguments nested 300": ("http", 415)
    for method in ("", "prompts/get: ")
    for edge in ("retry", "first round")
}


@pytest.fixture(scope="module")
def built() -> None:
    for language in ("typescript", "go", "java", "rust"):
        fleet.build(language)


def _differences(answers: dict[str, dict[str, tuple[Any, ...]]]) -> list[str]:
    """One line per (language, input) whose answer is not Python's."""
    python = answers["python"]
    return [
        f"{language}: {edge}: {answer} (Python: {python[edge]})"
        for language, by_input in answers.items()
        for edge, answer in by_input.items()
        if answer != python[edge]
    ]


@pytest.mark.parametrize("mode", ["tool_error", "jsonrpc"])
def test_every_example_server_gives_pythons_answer_over_http(built: None, mode: str) -> None:
    answers: dict[str, dict[str, tuple[Any, ...]]] = {}
    messages: dict[str, str] = {}
    for language in HTTP_LANGUAGES:
        with fleet.replica(language, "--dev-key", "--tool-refusal", mode, env={}) as url:
            answers[language] = edge_answers(http(url))
            messages[language] = no_result_message(http(url))
    assert answers["python"] == EXPECTED_HTTP[mode]
    assert answers.pop("rust") == {**EXPECTED_HTTP[mode], **RUST_HTTP_LIMIT}
    assert _differences(answers) == []
    # The -32602 for an inputResponses entry that is no result says which entry, never what it held.
    unnamed = {
        language: message
        for language, message in messages.items()
        if "confirm" not in message or SECRET_ANSWER in message
    }
    assert unnamed == {}


#: The command that serves each example over stdio (before ``--dev-key --stdio ...``).
STDIO_COMMANDS = {
    "python": (sys.executable, str(fleet.ROOT / "examples" / "server")),
    "typescript": ("node", str(fleet.TS_SERVER / "dist" / "main.js")),
    "go": (str(fleet.GO_SERVER / "bin" / "server-go"),),
    "java": (str(fleet.JAVA_SERVER / "run.sh"),),
    "rust": (str(fleet.RUST_TARGET / "debug" / "server-rust"),),
}
#: A documented limit of the Python SDK (docs/mcp.md's edge-input table): its stdio reader parses each line
#: with a JSON parser that stops at 200 levels of nesting, and a line it cannot parse is never answered
#: (the server goes on serving the next line). Arguments nested 300 levels never reach the boundary. The
#: Rust stdio transport has the same limit at 128 levels (serde_json), with the same silence (rmcp's own
#: stdio transport answers no unparsable line either; rust/rmcp/README.md).
PYTHON_STDIO_LIMIT = {
    f"{method}{edge} with arguments nested 300": ("no answer",)
    for method in ("", "prompts/get: ")
    for edge in ("retry", "first round")
}
#: Seconds to wait for an answer over stdio: long enough for a loaded machine (a JVM's first calls); for
#: Python, whose answers take milliseconds, what each unanswered input of PYTHON_STDIO_LIMIT costs.
STDIO_WAIT = {"python": 5, "typescript": 30, "go": 30, "java": 30, "rust": 3}


@pytest.mark.parametrize("mode", ["tool_error", "jsonrpc"])
@pytest.mark.parametrize("language", [*LANGUAGES, "rust"])
def test_every_example_server_gives_the_answers_over_stdio(built: None, language: str, mode: str) -> None:
    options = ("--dev-key", "--tool-refusal", mode, "--stdio", "--stdio-user", "alice")
    command = [*STDIO_COMMANDS[language], *options]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        try:
            answers = edge_answers(stdio(process, timeout=STDIO_WAIT[language]))
        finally:
            assert process.stdin is not None
            process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
    expected = {**EXPECTED[mode], **(PYTHON_STDIO_LIMIT if language in ("python", "rust") else {})}
    assert answers == expected
