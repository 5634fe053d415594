"""The load and fault run: processes x threads redeem a shared pool of tokens, each presented several times.

Shared by the bounded test (``test_replay_load.py``) and the benchmark
(``benchmarks/bench_replay_load.py``). A run mints ``tokens`` tokens, lays each
out ``presentations`` times at random places of one stream, and hands the stream
to ``processes`` spawned processes of ``threads`` threads each (every process is
a replica with its own sealer, store and connections). With a ``rate`` the
stream is paced (slot ``s`` is due ``s / rate`` seconds after the start), so that
a fault injected while it runs meets redemptions before, during and after it.

It counts acceptances per token (exactly one is the rule; more is a double
acceptance), refusals by reason, redemptions per second and latency (p50, p99,
the longest). Faults: a Sentinel primary killed (failover), a cluster primary
killed (cluster failover), Redis paused past the timeout (SIGSTOP/SIGCONT), Redis
restarted (killed and started again) with and without persistence.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.replay.redis_harness import (
    SERVICE,
    RedisClusterDeployment,
    RedisServer,
    SentinelDeployment,
)

ISSUER = "https://files.example.com"
REQUEST: dict[str, Any] = {"user": "alice", "tool": "pay", "arguments": {"amount": 100}}
STATE = {"step": "confirmed"}
ACCEPTED = "accepted"


@dataclass(frozen=True)
class StoreSpec:
    """How a worker process builds its store (picklable: it crosses into spawned processes)."""

    kind: str  # "memory", "redis", "cluster" or "sentinel"
    url: str = ""
    sentinels: tuple[tuple[str, int], ...] = ()
    timeout: float = 0.5
    wait_replicas: int = 0
    wait_timeout: float = 0.25

    def build(self) -> Any:
        """The store this spec describes."""
        if self.kind == "memory":
            from mrtr_state import MemoryReplayStore

            return MemoryReplayStore(max_entries=1_000_000)
        from mrtr_state.replay.replay_redis import RedisReplayStore

        options: dict[str, Any] = {"timeout": self.timeout, "wait_replicas": self.wait_replicas}
        if self.wait_replicas:
            options["wait_timeout"] = self.wait_timeout
        if self.kind == "redis":
            return RedisReplayStore.from_url(self.url, **options)
        if self.kind == "cluster":
            return RedisReplayStore.from_cluster(self.url, **options)
        if self.kind == "sentinel":
            return RedisReplayStore.from_sentinel(list(self.sentinels), SERVICE, **options)
        raise ValueError(f"unknown store kind {self.kind!r}")


def worker(
    jwks: dict[str, Any],
    spec: StoreSpec,
    slots: list[tuple[int, float, str]],
    threads: int,
    start: Any,
    results: Any,
) -> None:
    """One replica: redeem ``slots`` (token index, due time, token) in ``threads`` threads; put the outcomes.

    Each outcome is ``(token index, outcome, seconds it took, when it started)``.
    """
    from mrtr_state import InvalidRequestState, Keyring, StateSealer

    store = spec.build()
    sealer = StateSealer(Keyring.from_jwks(jwks), issuer=ISSUER, replay_store=store)
    parts = [slots[i::threads] for i in range(threads)]
    outcomes: list[list[tuple[int, str, float, float]]] = [[] for _ in parts]

    def run(part: list[tuple[int, float, str]], out: list[tuple[int, str, float, float]]) -> None:
        for index, due, token in part:
            delay = begin + due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t0 = time.monotonic()
            try:
                sealer.open(token, **REQUEST, consume=True)
                verdict = ACCEPTED
            except InvalidRequestState as refusal:
                verdict = refusal.reason
            except Exception as exc:  # a refusal never crashes: this would be a bug, counted as such
                verdict = f"crash:{type(exc).__name__}"
            out.append((index, verdict, time.monotonic() - t0, t0 - begin))

    start.wait(timeout=120)
    begin = time.monotonic()
    pool = [threading.Thread(target=run, args=(part, out)) for part, out in zip(parts, outcomes, strict=True)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    with contextlib.suppress(Exception):
        store.close()
    results.put([item for out in outcomes for item in out])


@dataclass
class LoadResult:
    """What one run measured."""

    label: str
    presented: int
    tokens: int
    seconds: float
    accepted_per_token: Counter[int] = field(default_factory=Counter)
    verdicts: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    fault_log: list[str] = field(default_factory=list)

    @property
    def double_acceptances(self) -> int:
        """Acceptances beyond the first, summed over tokens (the rule: zero)."""
        return sum(count - 1 for count in self.accepted_per_token.values() if count > 1)

    @property
    def tokens_accepted_twice(self) -> int:
        """Tokens accepted more than once."""
        return sum(1 for count in self.accepted_per_token.values() if count > 1)

    @property
    def never_accepted(self) -> int:
        """Tokens no presentation got accepted (every one refused: store_unavailable, or lost)."""
        return self.tokens - len(self.accepted_per_token)

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile latency in seconds."""
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    @property
    def longest(self) -> float:
        """The longest any redemption waited, in seconds."""
        return max(self.latencies)

    @property
    def rate(self) -> float:
        """Redemptions (accepted or refused) per second."""
        return self.presented / self.seconds

    def refusals(self) -> str:
        """Refusals by reason, most common first."""
        return ", ".join(
            f"{reason} {count}" for reason, count in self.verdicts.most_common() if reason != ACCEPTED
        )


def run_load(
    spec: StoreSpec,
    *,
    label: str,
    processes: int,
    threads: int,
    tokens: int,
    presentations: int,
    rate: float | None = None,
    fault: Callable[[], list[str]] | None = None,
    fault_at: float = 1.0,
    seed: int = 17,
) -> LoadResult:
    """Run the load (and the fault, ``fault_at`` seconds after the start) and measure it."""
    from mrtr_state import Keyring, StateSealer

    ring = Keyring.generate("HS256")
    minter = StateSealer(ring, issuer=ISSUER, ttl=600)
    minted = [minter.seal(STATE, **REQUEST) for _ in range(tokens)]
    stream = [index for index in range(tokens) for _ in range(presentations)]
    random.Random(seed).shuffle(stream)
    slots = [(index, (s / rate if rate else 0.0), minted[index]) for s, index in enumerate(stream)]

    context = multiprocessing.get_context("spawn")
    start = context.Barrier(processes + 1)
    results = context.Queue()
    workers = [
        context.Process(
            target=worker, args=(ring.private_jwks(), spec, slots[p::processes], threads, start, results)
        )
        for p in range(processes)
    ]
    for process in workers:
        process.start()
    result = LoadResult(label=label, presented=len(slots), tokens=tokens, seconds=0.0)
    injector: threading.Thread | None = None
    try:
        start.wait(timeout=120)
        begin = time.monotonic()
        if fault is not None:

            def inject() -> None:
                time.sleep(max(0.0, begin + fault_at - time.monotonic()))
                t0 = time.monotonic()
                try:
                    log = fault()
                except Exception as exc:  # reported, and the run's assertions then fail on it
                    log = [f"the fault itself failed: {type(exc).__name__}: {exc}"]
                result.fault_log = [f"at {t0 - begin:.1f} s: " + "; ".join(log)]

            injector = threading.Thread(target=inject)
            injector.start()
        outcomes: list[tuple[int, str, float, float]] = []
        for _ in workers:
            outcomes += results.get(timeout=600)
    except queue.Empty:
        raise RuntimeError("a load worker gave no result within 600 s") from None
    finally:
        if injector is not None:
            injector.join(timeout=120)
        for process in workers:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()
        results.close()
        results.join_thread()
    if [process.exitcode for process in workers] != [0] * processes:
        raise RuntimeError(f"a load worker failed: exit codes {[p.exitcode for p in workers]}")
    first = min(started for _, _, _, started in outcomes)
    last = max(started + took for _, _, took, started in outcomes)
    result.seconds = last - first
    for index, verdict, took, _ in outcomes:
        result.verdicts[verdict] += 1
        result.latencies.append(took)
        if verdict == ACCEPTED:
            result.accepted_per_token[index] += 1
    return result


# ---------------------------------------------------------------- deployments and faults


@contextlib.contextmanager
def deployment(
    kind: str, directory: Path, executable: str, cli: str, *, persistence: bool = False
) -> Iterator[tuple[Any, StoreSpec]]:
    """Start the deployment a run needs; yields (its handle, the store spec without options); stops it."""
    directory.mkdir(parents=True, exist_ok=True)
    if kind == "memory":
        yield None, StoreSpec("memory")
        return
    if kind == "redis":
        server = RedisServer(executable, directory, persistence=persistence)
        try:
            server.start()
            yield server, StoreSpec("redis", url=server.url)
        finally:
            server.stop()
        return
    if kind == "cluster":
        cluster = RedisClusterDeployment(executable, cli, directory)
        try:
            cluster.start()
            yield cluster, StoreSpec("cluster", url=cluster.url)
        finally:
            cluster.stop()
        return
    if kind == "sentinel":
        sentinel = SentinelDeployment(executable, directory)
        try:
            sentinel.start()
            yield sentinel, StoreSpec("sentinel", sentinels=tuple(sentinel.sentinel_addresses))
        finally:
            sentinel.stop()
        return
    raise ValueError(f"unknown deployment {kind!r}")


def kill_sentinel_primary(handle: SentinelDeployment) -> list[str]:
    """SIGKILL the primary, wait for the Sentinels to promote the replica, then rejoin the old node."""
    old = handle.primary()
    t0 = time.monotonic()
    old.kill()
    handle.wait_failover(old, timeout=60)
    promoted = time.monotonic() - t0
    handle.rejoin(old)
    return [f"primary killed, replica promoted after {promoted:.1f} s", "old node rejoined as replica"]


def kill_cluster_primary(handle: RedisClusterDeployment) -> list[str]:
    """SIGKILL one of the three primaries, wait for its replica to take over, then restart the node."""
    victim = handle.primaries()[0]
    t0 = time.monotonic()
    victim.kill()
    handle.wait_failover(victim, timeout=60)
    promoted = time.monotonic() - t0
    victim.start()
    handle.wait_healthy(timeout=60)
    return [f"primary killed, replica took over after {promoted:.1f} s", "node restarted as replica"]


def pause_primary(seconds: float) -> Callable[[Any], list[str]]:
    """SIGSTOP the (primary) server for ``seconds``, then SIGCONT."""

    def fault(handle: Any) -> list[str]:
        server = handle.primary() if isinstance(handle, SentinelDeployment) else handle
        server.pause()
        time.sleep(seconds)
        server.resume()
        return [f"paused {seconds:g} s"]

    return fault


def restart_redis(handle: RedisServer) -> list[str]:
    """SIGKILL the server and start it again on its port (with whatever persistence it has)."""
    handle.kill()
    handle.start()
    kept = "with its append-only file" if handle.persistence else "empty (no persistence)"
    return [f"killed and restarted {kept}"]


#: How many network steps, each bounded by the store's timeout, one redemption may take:
#: a single Redis one command; through Sentinel, asking a Sentinel for the new primary
#: after the old one failed, then the command; on a cluster, the command, then (after a
#: connection error) the client relearning the cluster's map before it gives up.
TIMEOUT_STEPS = {"memory": 1, "redis": 1, "sentinel": 2, "cluster": 2}


@dataclass(frozen=True)
class Scenario:
    """One fault run: where, with which setting, which fault."""

    name: str
    kind: str
    setting: str  # "none", "WAIT 1" or "AOF always"
    fault: Callable[[Any], list[str]]
    durable: bool  # whether the setting promises zero double acceptances under this fault

    @property
    def wait_replicas(self) -> int:
        """The durability option the store gets."""
        return 1 if self.setting == "WAIT 1" else 0

    @property
    def persistence(self) -> bool:
        """Whether Redis keeps an append-only file."""
        return self.setting == "AOF always"


def scenarios(timeout: float) -> list[Scenario]:
    """Every fault run, each without and with the setting that should make it lose nothing."""
    pause = pause_primary(timeout * 2.5)
    return [
        Scenario("Sentinel: primary killed (failover)", "sentinel", "none", kill_sentinel_primary, False),
        Scenario("Sentinel: primary killed (failover)", "sentinel", "WAIT 1", kill_sentinel_primary, True),
        Scenario("Cluster: a primary killed (failover)", "cluster", "none", kill_cluster_primary, False),
        Scenario("Cluster: a primary killed (failover)", "cluster", "WAIT 1", kill_cluster_primary, True),
        Scenario(f"Redis paused {timeout * 2.5:g} s (timeout {timeout:g} s)", "redis", "none", pause, True),
        Scenario(
            f"Sentinel primary paused {timeout * 2.5:g} s (timeout {timeout:g} s)",
            "sentinel",
            "WAIT 1",
            pause,
            True,
        ),
        Scenario("Redis restarted without persistence", "redis", "none", restart_redis, False),
        Scenario("Redis restarted with persistence", "redis", "AOF always", restart_redis, True),
    ]


def run_scenario(
    scenario: Scenario,
    directory: Path,
    executable: str,
    cli: str,
    *,
    timeout: float,
    processes: int,
    threads: int,
    tokens: int,
    presentations: int,
    rate: float,
    fault_at: float,
) -> LoadResult:
    """Start the scenario's deployment, run the paced load with its fault, stop the deployment."""
    with deployment(scenario.kind, directory, executable, cli, persistence=scenario.persistence) as (
        handle,
        spec,
    ):
        spec = StoreSpec(
            spec.kind,
            url=spec.url,
            sentinels=spec.sentinels,
            timeout=timeout,
            wait_replicas=scenario.wait_replicas,
            wait_timeout=timeout / 2,
        )
        return run_load(
            spec,
            label=f"{scenario.name}, {scenario.setting}",
            processes=processes,
            threads=threads,
            tokens=tokens,
            presentations=presentations,
            rate=rate,
            fault=lambda: scenario.fault(handle),
            fault_at=fault_at,
        )
