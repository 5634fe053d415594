"""The load and fault run at full size: redemptions per second, latency, double acceptances, by deployment.

Run it with ``.venv/bin/python benchmarks/bench_replay_load.py [--processes 4 --threads 8]``.
It starts every deployment itself with the tests' launcher
(``tests/replay/redis_harness.py``: Debian's redis-server and redis-cli on
loopback) and stops it at the end. Several processes, each with several
threads, redeem one pool of tokens in which every token is presented four times.

Table 1, load: memory (one process; and, to show why fleets need a shared
store, one store per process), a single Redis (also with an fsynced append-only
file), the Redis Cluster and the Sentinel pair (also with ``WAIT 1``), as fast as
they go. Table 2, faults: the same load paced, with a fault injected while it
runs (``tests/replay/load_run.py`` describes each). A benchmark, not a test: it
prints numbers and asserts nothing; the bounded run in ``tests/replay/test_replay_load.py``
asserts the guarantees.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' harness and load run

from tests.replay.load_run import LoadResult, StoreSpec, deployment, run_load, run_scenario, scenarios


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def load_rows(args: argparse.Namespace, root: Path, executable: str, cli: str) -> list[LoadResult]:
    plan = [
        ("memory, one process", "memory", 0, False, 1),
        ("memory, one store per process", "memory", 0, False, args.processes),
        ("single Redis", "redis", 0, False, args.processes),
        ("single Redis, AOF always", "redis", 0, True, args.processes),
        ("Redis Cluster (3+3)", "cluster", 0, False, args.processes),
        ("Redis Cluster (3+3), WAIT 1", "cluster", 1, False, args.processes),
        ("Sentinel (primary + replica)", "sentinel", 0, False, args.processes),
        ("Sentinel (primary + replica), WAIT 1", "sentinel", 1, False, args.processes),
    ]
    # One redemption at a time: what each setting costs a single request, without contention.
    plan += [
        (f"{label}, one at a time", kind, wait, persistence, 0)
        for label, kind, wait, persistence, _ in plan
        if kind != "memory"
    ]
    rows = []
    for i, (label, kind, wait, persistence, processes) in enumerate(plan):
        with deployment(kind, root / f"load-{i}", executable, cli, persistence=persistence) as (_, spec):
            spec = StoreSpec(
                spec.kind,
                url=spec.url,
                sentinels=spec.sentinels,
                timeout=args.timeout,
                wait_replicas=wait,
                wait_timeout=args.timeout / 2,
            )
            threads = args.threads * args.processes if processes == 1 else args.threads
            serial = processes == 0
            if serial:
                processes = threads = 1
            result = run_load(
                spec,
                label=label if serial else f"{label} ({processes} x {threads})",
                processes=processes,
                threads=threads,
                tokens=args.tokens // 5 if serial else args.tokens,
                presentations=args.presentations,
            )
        rows.append(result)
        print(f"  done: {result.label}", file=sys.stderr, flush=True)
    return rows


def fault_rows(args: argparse.Namespace, root: Path, executable: str, cli: str) -> list[LoadResult]:
    rows = []
    for i, scenario in enumerate(scenarios(args.timeout)):
        result = run_scenario(
            scenario,
            root / f"fault-{i}",
            executable,
            cli,
            timeout=args.timeout,
            processes=args.processes,
            threads=args.threads,
            tokens=args.fault_tokens,
            presentations=args.presentations,
            rate=args.rate,
            fault_at=args.fault_at,
        )
        rows.append(result)
        print(f"  done: {result.label}: {result.fault_log}", file=sys.stderr, flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4, help="replica processes (4)")
    parser.add_argument("--threads", type=int, default=8, help="threads per process (8)")
    parser.add_argument("--tokens", type=int, default=5000, help="tokens in the load runs (5000)")
    parser.add_argument("--presentations", type=int, default=4, help="times each token is presented (4)")
    parser.add_argument("--fault-tokens", type=int, default=2500, help="tokens in the fault runs (2500)")
    parser.add_argument("--rate", type=float, default=1000, help="paced redemptions/s in fault runs (1000)")
    parser.add_argument("--fault-at", type=float, default=2.0, help="seconds into a fault run (2)")
    parser.add_argument("--timeout", type=float, default=0.5, help="the stores' timeout, seconds (0.5)")
    parser.add_argument("--skip-load", action="store_true", help="only the fault runs")
    parser.add_argument("--skip-faults", action="store_true", help="only the load runs")
    args = parser.parse_args()
    executable, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if executable is None or cli is None:
        print("redis-server and redis-cli are needed: run scripts/ci-deps", file=sys.stderr)
        return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mrtr-bench-") as tmp:
        root = Path(tmp)
        loads = [] if args.skip_load else load_rows(args, root, executable, cli)
        faults = [] if args.skip_faults else fault_rows(args, root, executable, cli)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load:.1f}; HS256 tokens, "
        f"each presented {args.presentations} times; store timeout {args.timeout} s "
        f"(WAIT timeout {args.timeout / 2} s); "
        f"{time.monotonic() - started:.0f} s in all"
    )
    if loads:
        print(f"\nLoad: {args.tokens} tokens x {args.presentations} presentations, as fast as it goes\n")
        print(
            "| deployment (processes x threads) | redemptions/s | p50 ms | p99 ms | longest ms "
            "| tokens accepted twice | accepted | refused |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for r in loads:
            print(
                f"| {r.label} | {r.rate:,.0f} | {ms(r.percentile(50))} | {ms(r.percentile(99))} | "
                f"{ms(r.longest)} | {r.tokens_accepted_twice} | {r.verdicts['accepted']} | {r.refusals()} |"
            )
    if faults:
        print(
            f"\nFaults: {args.fault_tokens} tokens x {args.presentations} presentations "
            f"paced at {args.rate:.0f}/s ({args.processes} x {args.threads}), "
            f"the fault {args.fault_at} s in\n"
        )
        print(
            "| fault | setting | double acceptances | store_unavailable | never accepted | longest ms "
            "| p99 ms | what happened |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---|")
        for r in faults:
            name, setting = r.label.rsplit(", ", 1)
            print(
                f"| {name} | {setting} | {r.double_acceptances} | {r.verdicts['store_unavailable']} | "
                f"{r.never_accepted} | {ms(r.longest)} | {ms(r.percentile(99))} | {'; '.join(r.fault_log)} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
