"""The bounded load and fault run: processes x threads redeem one pool, each token presented four times.

Against memory (one process), a single Redis, the Redis Cluster and the Sentinel
pair: every token is accepted exactly once. Then the same load with a fault
injected while it runs: with the setting that promises it (``WAIT 1`` on a
replicated deployment, an fsynced append-only file for a restart, nothing for a
pause), no token is ever accepted twice; without it the double acceptances are
only measured (``benchmarks/bench_replay_load.py`` prints them; docs/single-use.md
has the figures). Every refusal is ``replayed`` or ``store_unavailable``, and no
redemption ever waits longer than the store's timeout (a single Redis), or twice it
through Sentinel or a cluster (rediscovery after a connection error), plus
scheduling slack on a loaded two-core runner.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.replay.load_run import (
    ACCEPTED,
    TIMEOUT_STEPS,
    Scenario,
    deployment,
    run_load,
    run_scenario,
    scenarios,
)
from tests.replay.redis_harness import redis_cli_executable, redis_server_executable, require_redis_client

require_redis_client()

TIMEOUT = 0.5
#: What a loaded two-core CI runner may add to a wait (threads, the GIL, four Redis processes).
SLACK = 0.5
PROCESSES, THREADS, TOKENS, PRESENTATIONS = 2, 4, 1000, 4
RATE, FAULT_AT = 800.0, 1.0  # a five-second paced run; the fault one second in


@pytest.mark.parametrize("kind", ["memory", "redis", "cluster", "sentinel"])
def test_under_load_every_token_is_accepted_exactly_once(tmp_path: Path, kind: str) -> None:
    executable, cli = redis_server_executable(), redis_cli_executable()
    with deployment(kind, tmp_path, executable, cli) as (_, spec):
        # The memory store is one process's: its row runs every thread in one process.
        processes, threads = (1, PROCESSES * THREADS) if kind == "memory" else (PROCESSES, THREADS)
        result = run_load(
            spec, label=kind, processes=processes, threads=threads, tokens=TOKENS, presentations=PRESENTATIONS
        )
    assert result.presented == TOKENS * PRESENTATIONS
    assert set(result.accepted_per_token.values()) == {1}
    assert result.never_accepted == 0
    assert dict(result.verdicts) == {ACCEPTED: TOKENS, "replayed": TOKENS * (PRESENTATIONS - 1)}


def test_memory_stores_in_separate_processes_accept_a_token_once_per_process(tmp_path: Path) -> None:
    # Why a fleet needs a shared store, and proof that the run's count sees double acceptances.
    with deployment("memory", tmp_path, "", "") as (_, spec):
        result = run_load(spec, label="memory", processes=2, threads=2, tokens=200, presentations=4)
    assert result.double_acceptances > 0
    assert max(result.accepted_per_token.values()) == 2


SCENARIOS = scenarios(TIMEOUT)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[f"{s.name}, {s.setting}" for s in SCENARIOS])
def test_under_a_fault_no_redemption_waits_past_the_timeout_and_durable_settings_never_accept_twice(
    tmp_path: Path, scenario: Scenario
) -> None:
    result = run_scenario(
        scenario,
        tmp_path,
        redis_server_executable(),
        redis_cli_executable(),
        timeout=TIMEOUT,
        processes=PROCESSES,
        threads=THREADS,
        tokens=TOKENS,
        presentations=PRESENTATIONS,
        rate=RATE,
        fault_at=FAULT_AT,
    )
    assert result.fault_log, "the fault never ran"
    assert "failed" not in result.fault_log[0], result.fault_log
    assert set(result.verdicts) <= {ACCEPTED, "replayed", "store_unavailable"}, result.verdicts
    assert result.presented == TOKENS * PRESENTATIONS
    assert result.verdicts["store_unavailable"] > 0, "the fault was never seen: the run did not test it"
    bound = TIMEOUT_STEPS[scenario.kind] * TIMEOUT + SLACK
    assert result.longest <= bound, f"a redemption waited {result.longest:.3f} s (bound {bound} s)"
    if scenario.durable:
        assert result.double_acceptances == 0, result.double_acceptances
    if scenario.name == "Redis restarted without persistence":
        # Redis forgot every id: tokens redeemed before the restart are redeemed again after it.
        assert result.double_acceptances > 0
