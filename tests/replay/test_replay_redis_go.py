"""The Go module's Redis store writes the very keys the Python store writes.

A token redeemed by a Go replica must be refused as replayed by a Python replica, and the other
way round, on a single Redis, behind Sentinel (go-redis's failover client) and on a Redis Cluster
(its cluster client). The Go side is ``go/internal/cmd/redeem``, built once per session; without a
go toolchain these tests skip, or fail under CI=true.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.ci import missing_tool
from tests.interop.harness import ROOT
from tests.replay.redis_harness import (
    SERVICE,
    RedisClusterDeployment,
    RedisServer,
    SentinelDeployment,
    require_redis_client,
)

require_redis_client()

from mrtr_state.replay import replay_key  # noqa: E402
from mrtr_state.replay.replay_redis import RedisReplayStore  # noqa: E402

ISSUER = "https://mcp.example.com"


@pytest.fixture(scope="module")
def go_redeem(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go store's command-line redeemer, built from the module."""
    if shutil.which("go") is None:
        missing_tool("go toolchain not found on PATH")
    binary = tmp_path_factory.mktemp("go-redeem") / "redeem"
    build = subprocess.run(
        ["go", "build", "-mod=readonly", "-o", str(binary), "./internal/cmd/redeem"],
        cwd=ROOT / "go",
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if build.returncode != 0:
        pytest.fail(f"go build ./internal/cmd/redeem failed:\n{build.stderr[-4000:]}")
    return binary


def go_redeems(binary: Path, *where: str, key: str, expires_at: int) -> dict[str, Any]:
    run = subprocess.run(
        [str(binary), *where, "-key", key, "-expires-at", str(expires_at)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    answer: dict[str, Any] = json.loads(run.stdout)
    return answer


def later() -> int:
    return int(time.time()) + 60


def check_both_ways(binary: Path, where: tuple[str, ...], python: RedisReplayStore, label: str) -> None:
    go_first = replay_key(ISSUER, f"go-first-{label}-000000000000")
    assert go_redeems(binary, *where, key=go_first, expires_at=later()) == {"first": True}
    assert python.redeem(go_first, expires_at=later()) is False
    assert go_redeems(binary, *where, key=go_first, expires_at=later()) == {"first": False}

    python_first = replay_key(ISSUER, f"py-first-{label}-000000000000")
    assert python.redeem(python_first, expires_at=later()) is True
    assert go_redeems(binary, *where, key=python_first, expires_at=later()) == {"first": False}


def test_a_key_redeemed_in_go_is_refused_in_python_and_back_on_one_redis(
    go_redeem: Path, redis_server: RedisServer
) -> None:
    with RedisReplayStore.from_url(redis_server.url) as store:
        check_both_ways(go_redeem, ("-url", redis_server.url), store, "single")


def test_the_go_failover_client_shares_redemptions_behind_sentinel(
    go_redeem: Path, redis_sentinel: SentinelDeployment
) -> None:
    sentinels = ",".join(f"{host}:{port}" for host, port in redis_sentinel.sentinel_addresses)
    with RedisReplayStore.from_sentinel(redis_sentinel.sentinel_addresses, SERVICE) as store:
        check_both_ways(go_redeem, ("-sentinel", sentinels, "-master", SERVICE), store, "sentinel")


def test_the_go_cluster_client_shares_redemptions_on_a_cluster_with_wait(
    go_redeem: Path, redis_cluster: RedisClusterDeployment
) -> None:
    nodes = redis_cluster.url.removeprefix("redis://").removesuffix("/0")
    with RedisReplayStore.from_cluster(redis_cluster.url) as store:
        check_both_ways(go_redeem, ("-cluster", nodes), store, "cluster")
        waited = replay_key(ISSUER, "go-wait-cluster-0000000000")
        answer = go_redeems(go_redeem, "-cluster", nodes, "-wait", "1", key=waited, expires_at=later())
        assert answer == {"first": True}
        assert store.redeem(waited, expires_at=later()) is False
