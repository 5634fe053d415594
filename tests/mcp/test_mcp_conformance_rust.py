"""The official MCP conformance suite's input-required-result scenarios, against ``examples/server-rust``.

The Rust example server serves the suite's fixtures with ``--conformance`` (one fixed principal, JSON-RPC
refusals, through the same ``StateBoundary`` as its tools) and runs every scenario the Python, Go and Java
examples run, with the same one by-design warning (``test_mcp_conformance.py`` says why). The suite, its
pinned Node and the helpers are that module's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_mcp_conformance import SCENARIOS, _install, _node, _run_all, assert_passes
from tests.crosslang import fleet


@pytest.fixture(scope="module")
def rust_results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """Every scenario against ``examples/server-rust --conformance --dev-key``."""
    _install()
    node = _node()
    fleet.build("rust")
    out = Path(tmp_path_factory.mktemp("conformance-rust"))
    with fleet.replica("rust", "--conformance", "--dev-key", env={}) as url:
        yield _run_all(node, url, out)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_rust_example_server_passes_the_conformance_scenario(
    rust_results: dict[str, list[dict[str, Any]]], scenario: str
) -> None:
    assert_passes(rust_results, scenario)


def test_unsolicited_input_responses_are_not_answers_on_the_rust_server_either(
    rust_results: dict[str, list[dict[str, Any]]],
) -> None:
    [check] = [
        c for c in rust_results["input-required-result-ignore-extra-params"] if c["status"] != "SUCCESS"
    ]
    assert check["details"]["result"]["resultType"] == "input_required"
