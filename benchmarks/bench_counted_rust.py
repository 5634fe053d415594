"""Instructions per seal and open of the Rust crate, counted by callgrind: figures that do not move with load.

Run it from the repository root (cargo and valgrind on the PATH; ``scripts/ci-deps`` installs
valgrind):

    .venv/bin/python benchmarks/bench_counted_rust.py              # print the table (about 10 s warm)
    .venv/bin/python benchmarks/bench_counted_rust.py --check      # ... and fail on a rise over the baseline
    .venv/bin/python benchmarks/bench_counted_rust.py --update     # write the baseline file anew
    .venv/bin/python benchmarks/bench_counted_rust.py --peers      # with jsonwebtoken's rows (a release
                                                                   # build of the dev-dependencies: minutes)

Method, as ``bench_counted.py``'s for Python. ``cargo build --release --locked`` builds the
crate's ``mrtr-state-counted`` binary (``rust/src/bin/counted.rs``; a binary, not a bench, so
that it needs none of the dev-dependencies) into ``rust/target`` (or ``$CARGO_TARGET_DIR``).
That binary builds the sealers of ``rust/benches/seal_open.rs`` (HS256, EdDSA and A256GCM, each
bound to the user, the tool and the arguments' digest) and the three states, checks that every
token opens to its state, warms each operation up, and runs each one's loop through one call of
its function ``counted_loop``, first with an empty operation. It runs under ``valgrind
--tool=callgrind --collect-atstart=no --toggle-collect='*::counted_loop'
--dump-after='*::counted_loop'``, so callgrind counts only inside those calls and writes one dump
per call. A row's figure is its loop's count less the empty loop's, divided by the number of
calls. A token's random ``jti`` (and, encrypted, its IV) changes bytes, not their number, so a
rerun gives the same counts to within a few instructions.

The baseline (``benchmarks/counted-rust-baseline.json``) holds the counts of ``main`` with the
toolchain it names; a count depends on the compiler and the locked dependencies as well as on the
crate. With ``--check`` the run fails when a row rises more than ``--tolerance`` (3% by default)
above its baseline: a change that costs instructions on the seal or open path updates the
baseline in the same commit (``--update``).

``--peers`` adds jsonwebtoken's ``decode`` and ``encode`` (``rust/benches/counted_peers.rs``, a
bench target since jsonwebtoken is a dev-dependency, built with ``cargo bench --no-run``), counted
the same way; their rows are printed for comparison, never checked and never written to the
baseline.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_counted import regressions, table

HERE = Path(__file__).resolve().parent
RUST = HERE.parent / "rust"
BASELINE = HERE / "counted-rust-baseline.json"
BINARY = "mrtr-state-counted"
PEERS_BENCH = "counted_peers"
#: Calls per counted loop: the per-call figure is exact to the instruction after the empty loop is
#: subtracted; the whole run under callgrind stays near five seconds.
CALLS = 50
#: The function callgrind counts in (a pattern: the symbol carries its crate's path).
LOOP = "*::counted_loop"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SystemExit(f"bench_counted_rust: {name} is not installed")
    return path


def build() -> Path:
    """Build the counted binary in release mode; its path."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", RUST / "target"))
    proc = subprocess.run(  # noqa: S603 - cargo on our own manifest, no outside input
        [_tool("cargo"), "build", "--release", "--locked", "--quiet", "--bin", BINARY],
        cwd=RUST,
        capture_output=True,
        text=True,
        env={**os.environ, "CARGO_TARGET_DIR": str(target)},
        check=False,
        timeout=1800,
    )
    if proc.returncode != 0:
        raise SystemExit(f"bench_counted_rust: cargo build failed:\n{proc.stderr[-3000:]}")
    return target / "release" / BINARY


def build_peers() -> Path:
    """Build the peers' counted bench in the bench profile (release); its executable."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", RUST / "target"))
    proc = subprocess.run(  # noqa: S603 - cargo on our own manifest, no outside input
        [_tool("cargo"), "bench", "--no-run", "--locked", "--bench", PEERS_BENCH, "--message-format=json"],
        cwd=RUST,
        capture_output=True,
        text=True,
        env={**os.environ, "CARGO_TARGET_DIR": str(target)},
        check=False,
        timeout=3600,
    )
    if proc.returncode != 0:
        raise SystemExit(f"bench_counted_rust: cargo bench --no-run failed:\n{proc.stderr[-3000:]}")
    for line in proc.stdout.splitlines():
        message = json.loads(line)
        artifact = message.get("reason") == "compiler-artifact" and message["target"]["name"] == PEERS_BENCH
        if artifact and message.get("executable"):
            return Path(message["executable"])
    raise SystemExit(f"bench_counted_rust: cargo built no executable for {PEERS_BENCH}")


def _dump_total(path: str) -> int:
    with open(path, encoding="utf-8") as dump:
        for line in dump:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise SystemExit(f"bench_counted_rust: no totals line in {path}")


def count(binary: Path) -> dict[str, dict[str, int]]:
    """Run the binary under callgrind; instructions per call of every row, by state size."""
    valgrind = _tool("valgrind")
    with tempfile.TemporaryDirectory(prefix="mrtr-callgrind-rust-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        proc = subprocess.run(  # noqa: S603 - valgrind on our own binary, no outside input
            [
                valgrind,
                "--tool=callgrind",
                "--collect-atstart=no",
                f"--toggle-collect={LOOP}",
                f"--dump-after={LOOP}",
                f"--callgrind-out-file={out}",
                str(binary),
                str(CALLS),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=1800,
        )
        if proc.returncode != 0:
            raise SystemExit(f"bench_counted_rust: the counted binary failed:\n{proc.stderr[-3000:]}")
        order = json.loads(proc.stdout.strip().splitlines()[-1])
        # One numbered dump per loop, in order; the final dump, at exit, is unnumbered.
        dumps = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        if len(dumps) != len(order):
            raise SystemExit(
                f"bench_counted_rust: {len(dumps)} callgrind dumps for {len(order)} loops "
                f"(is {LOOP} still a function of its own?)"
            )
        totals = [_dump_total(p) for p in dumps]
    empty = totals[0]
    counts: dict[str, dict[str, int]] = {}
    for entry, total in zip(order[1:], totals[1:], strict=True):
        counts.setdefault(entry["size"], {})[entry["row"]] = round((total - empty) / CALLS)
    return counts


def _rustc() -> str:
    proc = subprocess.run(  # noqa: S603 - the toolchain's version, no outside input
        [_tool("rustc"), "--version"], cwd=RUST, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail when a row rises above the baseline")
    mode.add_argument("--update", action="store_true", help="write the counts as the new baseline")
    parser.add_argument("--tolerance", type=float, default=0.03, help="allowed rise over the baseline (0.03)")
    parser.add_argument("--json", metavar="FILE", help="also write the counts to FILE")
    parser.add_argument("--peers", action="store_true", help="also count jsonwebtoken (never checked)")
    args = parser.parse_args(argv)

    counts = count(build())
    crate_counts = {size: dict(rows) for size, rows in counts.items()}
    if args.peers:
        for size, rows in count(build_peers()).items():
            counts[size].update(rows)
    baseline: dict[str, Any] | None = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    print(table(counts, None if baseline is None else baseline["counts"]))
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=2) + "\n")
    if args.update:
        record = {
            "about": "Instructions per call of the Rust crate, counted by benchmarks/bench_counted_rust.py; "
            "--update rewrites it.",
            "rustc": _rustc(),
            "calls": CALLS,
            "counts": crate_counts,
        }
        BASELINE.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {BASELINE.relative_to(HERE.parent)}")
    if args.check:
        if baseline is None:
            print(f"no baseline at {BASELINE}: run --update", file=sys.stderr)
            return 1
        if baseline.get("rustc") != _rustc():
            print(f"note: the baseline was counted with {baseline.get('rustc')}, this run with {_rustc()}")
        found = regressions(crate_counts, baseline["counts"], args.tolerance)
        for line in found:
            print(f"REGRESSION {line}", file=sys.stderr)
        if found:
            print(
                "a change that costs instructions updates the baseline in the same commit (--update)",
                file=sys.stderr,
            )
            return 1
        print(f"every row within {args.tolerance:.0%} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
