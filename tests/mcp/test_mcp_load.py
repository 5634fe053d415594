"""The example server under load: two processes share one Redis, SDK clients run complete single-use rounds.

Bounded: 8 concurrent clients x 5 rounds. Every round's confirmation is sent to
both servers at once; each server has its own copy of the branch, so only the
shared Redis replay store keeps the confirmation from acting twice. The rule: one
act per round, the other retry refused as ``replayed``, no 5xx, no client error,
and the servers' memory stays bounded. Speed is measured by
``benchmarks/bench_mcp_load.py``, not here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import missing_tool

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from mcp_load import DELETED, run_mcp_load, two_servers  # noqa: E402
from tests.replay.redis_harness import RedisServer  # noqa: E402

CLIENTS, ROUNDS = 8, 5
#: Growth of a server's resident memory over the run that counts as bounded (it is
#: measured at a few MiB; a leak of a state, a session or a connection per round
#: would pass it within a few thousand rounds of the benchmark).
RSS_GROWTH_LIMIT_KIB = 64 * 1024


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    import shutil

    try:
        import redis  # noqa: F401
    except ImportError:
        missing_tool("the redis client is not installed; run scripts/bootstrap")
    executable = shutil.which("redis-server")
    if executable is None:
        missing_tool("redis-server is not installed; run scripts/ci-deps")
        return
    server = RedisServer(executable, tmp_path)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def test_two_example_servers_sharing_redis_act_once_per_confirmation_under_concurrent_sdk_clients(
    redis_url: str,
) -> None:
    with two_servers(redis_url, branches=CLIENTS * ROUNDS) as servers:
        result = run_mcp_load(servers, clients=CLIENTS, rounds=ROUNDS)
        logs = [server.log() for server in servers]
    assert not result.errors, result.errors
    assert result.rounds == CLIENTS * ROUNDS
    assert dict(result.acts_per_round) == {1: CLIENTS * ROUNDS}, result.acts_per_round
    assert dict(result.verdicts) == {DELETED: CLIENTS * ROUNDS, "replayed": CLIENTS * ROUNDS}
    assert result.server_errors == 0, result.statuses
    assert all(status < 400 for status in result.statuses), result.statuses
    for before, after in zip(result.rss_before_kib, result.rss_after_kib, strict=True):
        assert after - before < RSS_GROWTH_LIMIT_KIB, (before, after)
    assert not any("Traceback" in log for log in logs), logs
