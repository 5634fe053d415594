"""The Go module's Cluster store follows a failover (issue 31).

go-redis reloads its slot map every 60 s or on ``MOVED``, not on a connection error, so a
store on it alone keeps sending a killed primary's keys to the dead node until the node
returns or the minute passes. The Go store reloads the slot map when a redemption gets no
answer: with a primary killed and its replica promoted, it redeems again without the old
node's return, and refuses no valid first redemption as ``replayed`` meanwhile.

The Go side is ``go/internal/cmd/redeemlines``: one long-lived store, one key a line (a
process per redemption, as ``go/internal/cmd/redeem`` is, would load a fresh slot map each
time and show nothing). The test takes about 10 to 20 s (the cluster's start and the 1 s
``cluster-node-timeout``); without a go toolchain it skips, or fails under CI=true.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.ci import missing_tool
from tests.interop.harness import ROOT
from tests.replay.line_redeemer import LineRedeemer
from tests.replay.redis_harness import RedisClusterDeployment, require_redis_client

require_redis_client()

from redis.crc import key_slot  # noqa: E402

from mrtr_state.replay import replay_key  # noqa: E402
from mrtr_state.replay.replay_redis import RedisReplayStore  # noqa: E402

ISSUER = "https://mcp.example.com"
#: The most a Cluster store may take to serve again after the kill. Measured on two loaded
#: cores: about 2.5 to 4 s (the 1 s node timeout, the replica's election, one slot map reload).
BOUND_S = 20.0


@pytest.fixture(scope="module")
def go_redeem_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go store's long-lived redeemer, built from the module."""
    if shutil.which("go") is None:
        missing_tool("go toolchain not found on PATH")
    binary = tmp_path_factory.mktemp("go-redeemlines") / "redeemlines"
    build = subprocess.run(
        ["go", "build", "-mod=readonly", "-o", str(binary), "./internal/cmd/redeemlines"],
        cwd=ROOT / "go",
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if build.returncode != 0:
        pytest.fail(f"go build ./internal/cmd/redeemlines failed:\n{build.stderr[-4000:]}")
    return binary


def slot_owners(cluster: RedisClusterDeployment) -> dict[int, int]:
    """The port of the primary that owns each slot, as the cluster says now."""
    owners: dict[int, int] = {}
    for start, end, primary, *_replicas in cluster.nodes[0].admin().execute_command("CLUSTER SLOTS"):
        for slot in range(int(start), int(end) + 1):
            owners[slot] = int(primary[1])
    return owners


def test_the_go_cluster_store_serves_again_after_a_primary_is_killed(
    go_redeem_lines: Path, redis_cluster: RedisClusterDeployment, tmp_path: Path
) -> None:
    nodes = ",".join(f"127.0.0.1:{node.port}" for node in redis_cluster.nodes)
    with RedisReplayStore.from_cluster(redis_cluster.url) as python_store:
        owners = slot_owners(redis_cluster)

        def owner(key: str) -> int:
            return owners[key_slot(python_store.redis_key(key).encode())]

        keys = [replay_key(ISSUER, f"go-failover-{i:06d}") for i in range(1200)]
        victim_port = owner(keys[0])
        on_victim = [key for key in keys if owner(key) == victim_port]
        redeemer = LineRedeemer(
            [str(go_redeem_lines), "-cluster", nodes, "-timeout", "300ms"], tmp_path / "go.log"
        )
        try:
            assert redeemer.redeem(on_victim[0]) == {"first": True}
            victim = next(node for node in redis_cluster.nodes if node.port == victim_port)
            victim.kill()
            killed = time.monotonic()
            replayed = refused = 0
            for key in on_victim[1:]:
                answer = redeemer.redeem(key)
                if answer.get("first") is True:
                    break
                if answer.get("first") is False:
                    replayed += 1
                else:
                    refused += 1
                assert time.monotonic() - killed < BOUND_S, (
                    f"the Go Cluster store did not serve again within {BOUND_S} s of the kill "
                    f"({refused} refused store_unavailable)"
                )
                time.sleep(0.1)
            else:
                pytest.fail("every key was used before the store served again")
            served_after = time.monotonic() - killed
        finally:
            redeemer.close()
        print(f"the Go Cluster store served again {served_after:.1f} s after the kill ({refused} refused)")
        assert replayed == 0, f"{replayed} valid first redemptions were refused as replayed"
