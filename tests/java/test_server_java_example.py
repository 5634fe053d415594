"""The Java example server (examples/server-java) gives the Python example's answer to every edge input.

The edge inputs of profile 8.2 on ``tools/call`` (tests/crosslang/edge_inputs.py) go as raw JSON-RPC to the
Java server behind its ``ToolBoundary``, in both refusal modes over Streamable HTTP, and to the Python
example server (the reference); each answer (JSON-RPC code and ``data.reason``, or the tool error's reason
code, or the result type, and an HTTP status other than 200: 400 for a -32602, SEP-2575) must be the one in
``EXPECTED_HTTP`` on both. Over stdio, and on ``prompts/get`` and ``resources/read``, the Java server is
checked with the other languages (tests/crosslang/test_edge_inputs.py). Also: the ``Host`` check (421),
and the sentence that says why arguments cannot be bound.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.crosslang import fleet
from tests.crosslang.edge_inputs import (
    BRANCH,
    DEEP,
    EXPECTED_HTTP,
    body,
    http,
    post,
    tool_edge_answers,
)

#: The tools/call rows of ``EXPECTED_HTTP`` (the others name their method: "prompts/get: ...").
TOOL_EDGES = {
    edge for edge in EXPECTED_HTTP["tool_error"] if not edge.startswith(("prompts/get:", "resources/read:"))
}
MANUAL_ROUNDS = fleet.ROOT / "java" / "src" / "test" / "java" / "ManualRounds.java"
CLASSPATH = fleet.JAVA_SERVER / "target" / "classpath.txt"


@pytest.fixture(scope="module")
def built() -> None:
    fleet.build("java")


@contextlib.contextmanager
def java_server(*args: str) -> Iterator[str]:
    with fleet.replica("java", "--dev-key", *args, env={}) as url:
        yield url


@pytest.mark.parametrize("mode", ["tool_error", "jsonrpc"])
def test_every_edge_input_gets_pythons_answer_over_http(built: None, mode: str, tmp_path: Path) -> None:
    with fleet.replica("python", "--dev-key", "--tool-refusal", mode, env={}) as url:
        python = tool_edge_answers(http(url))
    with java_server("--tool-refusal", mode) as url:
        java = tool_edge_answers(http(url))
        if mode == "tool_error":
            _check_host_and_wording(url)
            _check_manual_rounds(url, tmp_path)
    # The tools/call rows; those of prompts/get and resources/read are compared in test_edge_inputs.py.
    assert python == {edge: answer for edge, answer in EXPECTED_HTTP[mode].items() if edge in TOOL_EDGES}
    assert java == python


def _check_manual_rounds(url: str, tmp_path: Path) -> None:
    """java/README.md's client (java/src/test/java/ManualRounds.java), compiled and run against the server."""
    classpath = f"{fleet.JAVA_SERVER / 'target' / 'classes'}:{CLASSPATH.read_text().strip()}"
    compiled = subprocess.run(
        ["javac", "-Xlint:all", "-Werror", "-d", str(tmp_path), "-cp", classpath, str(MANUAL_ROUNDS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    ran = subprocess.run(
        ["java", "-cp", f"{tmp_path}:{classpath}", "ManualRounds", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "EXAMPLE_BEARER_TOKEN": "alice-example-token"},
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "asked: [confirm]",
        "done: Deleted branch 'old-feature' of acme/api (it was at 4b1d0aa).",
    ]


def _check_host_and_wording(url: str) -> None:
    """421 for a Host that is not loopback; the sentence that says why arguments cannot be bound."""
    answer = httpx2.post(url, json={}, headers={"Host": "attacker.example"}, timeout=30)
    assert answer.status_code == 421
    for arguments, why in (
        ({**BRANCH, "n": 2**60}, "an integer beyond +/-(2**53 - 1)"),
        ({**BRANCH, "deep": DEEP}, "the value nests deeper than 256 levels"),
    ):
        _, message = post(url, body("delete_branch", arguments))
        assert message is not None
        error = message["error"]
        assert error["code"] == -32602
        assert error["message"].startswith(
            "The request's arguments cannot be bound to a request state (they must be I-JSON): "
        )
        assert why in error["message"]
