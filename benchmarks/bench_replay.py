"""Redemptions per second: plain open, open(consume=True) in memory and in a local Redis.

Run it with ``.venv/bin/python benchmarks/bench_replay.py [--tokens N]``. It starts
its own redis-server (loopback, free port, no persistence; the tests' launcher,
``tests/replay/redis_harness.py``) and stops it at the end; without redis-server
the Redis rows are left out. Every redemption uses a fresh token (a replayed one
would be refused), all minted before the clock starts.
A benchmark, not a test: it prints numbers and asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' Redis harness

from tests.replay.redis_harness import RedisServer

from mrtr_state import Keyring, MemoryReplayStore, StateSealer

ISSUER = "https://files.example.com"
REQUEST: dict[str, Any] = {"user": "alice", "tool": "pay", "arguments": {"amount": 100, "to": "bob"}}
STATE = {"step": "confirm", "amount": 100}
REPEATS = 3


@contextlib.contextmanager
def redis_server() -> Iterator[str | None]:
    """A throwaway redis-server from the tests' harness; yields its URL (None if not installed)."""
    executable = shutil.which("redis-server")
    if executable is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as directory:
        server = RedisServer(executable, Path(directory))
        try:
            server.start()
            yield server.url
        finally:
            server.stop()


def best_rate(run: Callable[[list[str]], float], mint: Callable[[int], list[str]], n: int) -> float:
    """The best of REPEATS runs over ``n`` fresh tokens each, in redemptions per second.

    ``run`` redeems the tokens and returns the seconds its timed part took.
    """
    return max(n / run(mint(n)) for _ in range(REPEATS))


def timed(sealer: StateSealer, *, consume: bool) -> Callable[[list[str]], float]:
    def run(tokens: list[str]) -> float:
        start = time.perf_counter()
        for token in tokens:
            sealer.open(token, **REQUEST, consume=consume)
        return time.perf_counter() - start

    return run


def timed_async(ring: Keyring, url: str, concurrency: int) -> Callable[[list[str]], float]:
    from mrtr_state.replay.replay_redis import AsyncRedisReplayStore

    async def redeem_all(tokens: list[str]) -> float:
        async with AsyncRedisReplayStore.from_url(url) as store:
            sealer = StateSealer(ring, issuer=ISSUER, replay_store=store)
            warm = [sealer.seal(STATE, **REQUEST) for _ in range(concurrency)]
            await asyncio.gather(*(sealer.open_async(t, **REQUEST, consume=True) for t in warm))
            start = time.perf_counter()
            for i in range(0, len(tokens), concurrency):
                batch = tokens[i : i + concurrency]
                await asyncio.gather(*(sealer.open_async(t, **REQUEST, consume=True) for t in batch))
            return time.perf_counter() - start

    return lambda tokens: asyncio.run(redeem_all(tokens))


def bench(alg: str, url: str | None, n: int) -> list[tuple[str, str, float]]:
    ring = Keyring.generate(alg)
    minter = StateSealer(ring, issuer=ISSUER)

    def mint(count: int) -> list[str]:
        return [minter.seal(STATE, **REQUEST) for _ in range(count)]

    rows = [
        (alg, "open", best_rate(timed(StateSealer(ring, issuer=ISSUER), consume=False), mint, n)),
        (
            alg,
            "open(consume=True), MemoryReplayStore",
            best_rate(
                timed(StateSealer(ring, issuer=ISSUER, replay_store=MemoryReplayStore()), consume=True),
                mint,
                n,
            ),
        ),
    ]
    if url is None:
        return rows
    from mrtr_state.replay.replay_redis import RedisReplayStore

    with RedisReplayStore.from_url(url) as store:
        sealer = StateSealer(ring, issuer=ISSUER, replay_store=store)
        sealer.open(minter.seal(STATE, **REQUEST), **REQUEST, consume=True)  # connect first
        rows.append(
            (alg, "open(consume=True), RedisReplayStore", best_rate(timed(sealer, consume=True), mint, n))
        )
    for concurrency, label in ((1, "one at a time"), (64, "64 at once")):
        rows.append(
            (
                alg,
                f"open_async(consume=True), AsyncRedisReplayStore, {label}",
                best_rate(timed_async(ring, url, concurrency), mint, n),
            )
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=5000, help="redemptions per run (default 5000)")
    n = parser.parse_args().tokens
    with redis_server() as url:
        rows = [row for alg in ("HS256", "EdDSA") for row in bench(alg, url, n)]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {sys.version.split()[0]}, {n} redemptions per run, best of {REPEATS}, load {load:.1f}")
    if url is None:
        print("(redis-server not installed: Redis rows left out; scripts/ci-deps installs it)")
    width = max(len(what) for _, what, _ in rows)
    print(f"{'alg':<6} {'operation':<{width}} {'per second':>11} {'µs each':>8}")
    for alg, what, rate in rows:
        print(f"{alg:<6} {what:<{width}} {rate:>11,.0f} {1e6 / rate:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
