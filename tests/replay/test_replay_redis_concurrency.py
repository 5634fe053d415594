"""Races against a real redis-server: of many redemptions of one token exactly one wins.

Threads share one store (one connection pool); processes are replicas, each with
its own sealer, store and pool; coroutines share one async store.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.replay.redis_harness import RedisServer, require_redis_client

require_redis_client()

from mrtr_state import InvalidRequestState, Keyring, StateSealer  # noqa: E402
from mrtr_state.replay.replay_redis import AsyncRedisReplayStore, RedisReplayStore  # noqa: E402
from tests.replay.redemption import ISSUER, REQUEST, STATE, outcome  # noqa: E402
from tests.replay.replay_workers import redeem_in_threads  # noqa: E402

THREADS = 32
PROCESSES = 4
THREADS_PER_PROCESS = 8


def open_in_threads(sealer: StateSealer, tokens: list[str]) -> list[str]:
    start = threading.Barrier(len(tokens))

    def open_one(token: str) -> str:
        start.wait(timeout=30)
        return outcome(sealer, token)

    with ThreadPoolExecutor(len(tokens)) as pool:
        return list(pool.map(open_one, tokens))


def test_of_32_threads_redeeming_one_token_exactly_one_wins(redis_server: RedisServer) -> None:
    with RedisReplayStore.from_url(redis_server.url, timeout=10) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        token = sealer.seal(STATE, **REQUEST)
        outcomes = open_in_threads(sealer, [token] * THREADS)
    assert outcomes.count("opened") == 1
    assert outcomes.count("replayed") == THREADS - 1


def test_32_threads_redeeming_different_tokens_all_win(redis_server: RedisServer) -> None:
    with RedisReplayStore.from_url(redis_server.url, timeout=10) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        tokens = [sealer.seal(STATE, **REQUEST) for _ in range(THREADS)]
        assert open_in_threads(sealer, tokens) == ["opened"] * THREADS


def run_replicas(redis_server: RedisServer, ring: Keyring, tokens_per_process: list[list[str]]) -> list[str]:
    """Start one spawned process per token list, all redeeming at one barrier; all outcomes."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(sum(len(tokens) for tokens in tokens_per_process))
    results = context.Queue()
    processes = [
        context.Process(
            target=redeem_in_threads,
            args=(ring.private_jwks(), ISSUER, redis_server.url, tokens, REQUEST, start, results),
        )
        for tokens in tokens_per_process
    ]
    for process in processes:
        process.start()
    outcomes: list[str] = []
    try:
        for _ in processes:
            outcomes += results.get(timeout=120)
    except queue.Empty:
        pytest.fail("a replica process gave no result within 120 s")
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()
        results.close()
        results.join_thread()
    assert [process.exitcode for process in processes] == [0] * len(processes)
    return outcomes


def test_of_4_replica_processes_redeeming_one_token_at_once_exactly_one_wins(
    redis_server: RedisServer,
) -> None:
    ring = Keyring.generate("EdDSA")
    token = StateSealer(ring, issuer=ISSUER).seal(STATE, **REQUEST)
    outcomes = run_replicas(redis_server, ring, [[token] * THREADS_PER_PROCESS] * PROCESSES)
    assert len(outcomes) == PROCESSES * THREADS_PER_PROCESS
    assert outcomes.count("opened") == 1
    assert outcomes.count("replayed") == PROCESSES * THREADS_PER_PROCESS - 1


def test_4_replica_processes_redeeming_different_tokens_all_win(redis_server: RedisServer) -> None:
    ring = Keyring.generate("EdDSA")
    sealer = StateSealer(ring, issuer=ISSUER)
    batches = [[sealer.seal(STATE, **REQUEST) for _ in range(THREADS_PER_PROCESS)] for _ in range(PROCESSES)]
    outcomes = run_replicas(redis_server, ring, batches)
    assert outcomes == ["opened"] * (PROCESSES * THREADS_PER_PROCESS)


def test_of_32_coroutines_redeeming_one_token_exactly_one_wins(redis_server: RedisServer) -> None:
    async def race() -> list[Any]:
        async with AsyncRedisReplayStore.from_url(redis_server.url, timeout=10) as store:
            sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
            token = sealer.seal(STATE, **REQUEST)
            calls = [sealer.open_async(token, **REQUEST, consume=True) for _ in range(THREADS)]
            return await asyncio.gather(*calls, return_exceptions=True)

    outcomes = asyncio.run(race())
    assert outcomes.count(STATE) == 1
    reasons = [o.reason for o in outcomes if isinstance(o, InvalidRequestState)]
    assert reasons == ["replayed"] * (THREADS - 1)


def test_32_coroutines_redeeming_different_tokens_all_win(redis_server: RedisServer) -> None:
    async def race() -> list[Any]:
        async with AsyncRedisReplayStore.from_url(redis_server.url, timeout=10) as store:
            sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
            tokens = [sealer.seal(STATE, **REQUEST) for _ in range(THREADS)]
            calls = [sealer.open_async(token, **REQUEST, consume=True) for token in tokens]
            return await asyncio.gather(*calls, return_exceptions=True)

    assert asyncio.run(race()) == [STATE] * THREADS
