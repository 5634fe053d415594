"""The whole-round benchmarks measure what they say: every server's tool runs where it is counted.

``benchmarks/bench_mcp_round.py`` times and ``benchmarks/bench_counted_round.py`` counts a
whole MCP round through the official SDK. Callgrind counts only the thread that entered
the counted loop, and the SDK runs a plain-function tool in a worker thread: such a tool's
work (the SDK side's ``json.dumps`` and ``json.loads`` of the state, the ``StateBoundary``
side's state encoding) would silently drop out of the count, as it once did. These tests
hold the tools to coroutines (which the SDK runs on the event loop) and run one round of
each server, so a benchmark that no longer completes a round fails here, not on the day
someone runs it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
STATE = {"step": 2, "plan": ["build", "deploy"]}


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_mcp_round

        yield bench_mcp_round
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def _servers(bench: ModuleType) -> dict[str, Any]:
    from mrtr_state import Keyring

    secret = bytes(range(32))
    return {
        "sdk": bench.sdk_server(STATE, secret),
        "hs256": bench.mrtr_server(STATE, secret),
        "a256gcm": bench.mrtr_server(STATE, secret, Keyring.generate("A256GCM")),
    }


def test_every_benchmarked_tool_is_a_coroutine_so_its_work_is_counted(bench: ModuleType) -> None:
    for name, server in _servers(bench).items():
        tool = server._tool_manager.get_tool(bench.TOOL)
        assert tool is not None, name
        assert tool.is_async, f"the {name} server's tool would run in a worker thread, out of the count"


@pytest.mark.parametrize("name", ["sdk", "hs256", "a256gcm"])
def test_each_benchmarked_server_completes_a_whole_round(bench: ModuleType, name: str) -> None:
    from mcp.client import Client

    server = _servers(bench)[name]

    async def one_round() -> int:
        async with (
            bench.as_user(bench.USER),
            Client(server, elicitation_callback=bench.never_asked) as client,
        ):
            length: int = await bench.whole_round(client)()
            return length

    # whole_round raises SystemExit when the first call is not answered input_required
    # or the retry fails; the requestState it saw carries the state.
    assert anyio.run(one_round) > len('{"step":2}')
