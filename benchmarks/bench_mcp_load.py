"""The MCP example under load: two example server processes sharing one Redis, many SDK clients.

Run it with ``.venv/bin/python benchmarks/bench_mcp_load.py [--clients 32 --rounds 20]``.
It starts a redis-server (the tests' launcher) and two example servers
(``examples/server --load-branches N`` with one key ring and ``MRTR_STATE_REDIS_URL``),
then runs ``--clients`` concurrent official MCP Python SDK clients, each doing
``--rounds`` complete single-use ``delete_branch`` rounds whose confirmation goes
to both servers at once (``tests/mcp/mcp_load.py`` describes a round). It prints
rounds per second, round latency, acts per round (one is the rule), refusals,
HTTP statuses and the servers' memory. A benchmark, not a test: the bounded run
in ``tests/mcp/test_mcp_load.py`` asserts the rules.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' Redis harness
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mcp"))  # the MCP load run

from mcp_load import run_mcp_load, two_servers
from tests.replay.redis_harness import RedisServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32, help="concurrent SDK clients (32)")
    parser.add_argument("--rounds", type=int, default=20, help="rounds per client (20)")
    args = parser.parse_args()
    executable = shutil.which("redis-server")
    if executable is None:
        print("redis-server is needed: run scripts/ci-deps", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mrtr-bench-") as tmp:
        redis_server = RedisServer(executable, Path(tmp))
        redis_server.start()
        try:
            with two_servers(redis_server.url, branches=args.clients * args.rounds) as servers:
                result = run_mcp_load(servers, clients=args.clients, rounds=args.rounds)
        finally:
            redis_server.stop()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {load:.1f}")
    print(f"{args.clients} SDK clients x {args.rounds} rounds, two example servers, one Redis\n")
    print(
        "| rounds | rounds/s | p50 ms | p99 ms | rounds that acted twice | rounds that never acted "
        "| refusals | HTTP 5xx | errors | server RSS before -> after (MiB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
    refusals = ", ".join(f"{k} {v}" for k, v in result.verdicts.items() if k != "deleted") or "none"
    memory = ", ".join(
        f"{b / 1024:.0f} -> {a / 1024:.0f}"
        for b, a in zip(result.rss_before_kib, result.rss_after_kib, strict=True)
    )
    print(
        f"| {result.rounds} | {result.rate:.1f} | {result.percentile(50) * 1000:.0f} | "
        f"{result.percentile(99) * 1000:.0f} | {result.double_acts} | {result.acts_per_round[0]} | "
        f"{refusals} | {result.server_errors} | {sum(result.errors.values())} | {memory} |"
    )
    print(f"\nHTTP statuses: {dict(sorted(result.statuses.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
