"""Every edge input of profile 8.2 gets one answer from every example server: Python, TypeScript, Go, Java.

The inputs (tests/crosslang/edge_inputs.py: ``requestState`` absent, null, empty, not a string;
``arguments`` absent, null, not an object, unbindable, on a first round and on a retry; a state sent to an
unknown tool; an ``inputResponses`` entry that is no result) go as raw JSON-RPC to each example server in
both refusal modes over Streamable HTTP. Each answer, reduced to its JSON-RPC code and ``data.reason``,
or its tool error's reason code, or its result type, and the HTTP status when it is not 200, must be
Python's, and Python's must be ``EXPECTED``: so a new language, or a new SDK version under one, cannot
drift silently. Each server starts once per mode, one at a time.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.crosslang import fleet
from tests.crosslang.edge_inputs import EXPECTED, edge_answers, http

LANGUAGES = ("python", "typescript", "go", "java")


@pytest.fixture(scope="module")
def built() -> None:
    for language in ("typescript", "go", "java"):
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
    for language in LANGUAGES:
        with fleet.replica(language, "--dev-key", "--tool-refusal", mode, env={}) as url:
            answers[language] = edge_answers(http(url))
    assert answers["python"] == EXPECTED[mode]
    assert _differences(answers) == []
