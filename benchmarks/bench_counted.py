"""Instructions per seal and open, counted by callgrind: figures that do not move with the machine's load.

Run it from the repository root (``scripts/bootstrap`` installs the peers; valgrind comes
from the system's packages, ``scripts/ci-deps`` installs it):

    .venv/bin/python benchmarks/bench_counted.py              # print the table (about 2 minutes)
    .venv/bin/python benchmarks/bench_counted.py --check      # ... and fail on a rise over the baseline
    .venv/bin/python benchmarks/bench_counted.py --update     # write the baseline file anew

Method. A timed benchmark on a shared two-core machine swings by 30% from run to run; an
instruction count does not: the same interpreter, code and inputs execute the same
instructions whatever else the machine is doing. A child process (this file with
``--child``) builds the very candidates ``bench_open_seal.py`` times (same keys, same
states, same peers, each checked to give back the state before it is counted), warms
each up, and then runs each one's loop through a single ``exec`` call. The child runs
under ``valgrind --tool=callgrind --collect-atstart=no --toggle-collect=builtin_exec
--dump-after=builtin_exec``, so callgrind counts only inside those ``exec`` calls and
writes one dump per call. A candidate's figure is its loop's count less the count of the
same loop calling an empty function, divided by the number of calls: the instructions
one operation executes, call overhead excluded. Hash randomization is off
(``PYTHONHASHSEED=0``) and the garbage collector is off inside the loops, so a rerun gives
the same counts to within a fraction of a percent (randomness in a token, its ``jti``
and, for the encrypted form, its IV, changes bytes, not their number).

The baseline (``benchmarks/counted-baseline.json``) holds the counts of ``main``. With
``--check`` the run fails when any ``mrtr_state`` row rises more than ``--tolerance``
(3% by default) above its baseline: a change that costs instructions on the open or seal
path updates the baseline in the same commit (``--update``), so that the cost is seen and
reviewed. The peers' rows are printed for comparison and never fail the check (their
counts move only when a pinned dependency does).
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "counted-baseline.json"
#: Calls per counted loop: enough that the per-call figure is exact to a few instructions
#: after the empty loop is subtracted, few enough that the whole run stays near two minutes.
CALLS = 40
#: Warm-up calls before counting, so that first-call costs (imports, caches) are not counted.
WARMUP = 20
SIZES = {"200 B": 200, "2 KiB": 2048, "5.5 KiB": 5632}


def _rows() -> list[tuple[str, str]]:
    """(operation, candidate label) of every counted row, in the order the child runs them."""
    import bench_open_seal as b

    labels = [b.MRTR_HS_ARGS, b.MRTR_ED_ARGS, b.MRTR_ENC_ARGS, b.SDK, b.PYJWT_HS, b.JOSE_HS, b.FLOOR_HS]
    return [(op, label) for op in ("open", "seal") for label in labels]


def child() -> int:
    """Build the candidates, warm them up, and run each loop in one ``exec`` (counted by callgrind)."""
    sys.path.insert(0, str(HERE))
    import bench_open_seal as b
    from _harness import by_label, make_state

    setup = b.make_setup(fixed=True)
    loops: list[tuple[str, str, Callable[[], object]]] = []
    for size_name, size in SIZES.items():
        state = make_state(size)
        built = {
            "open": by_label(b.open_candidates(setup, state)),
            "seal": by_label(b.seal_candidates(setup, state)),
        }
        for op, label in _rows():
            loops.append((size_name, f"{op}: {label}", built[op][label].fn))

    def empty() -> None:
        return None

    order = []
    gc.disable()
    for size_name, row, fn in [("", "empty", empty), *loops]:
        for _ in range(WARMUP):
            fn()
        # One exec per loop: callgrind collects only inside builtin_exec and dumps after it.
        exec(f"for _ in range({CALLS}):\n    fn()\n", {"fn": fn})  # noqa: S102 - the counted loop
        order.append({"size": size_name, "row": row})
    gc.enable()
    print(json.dumps(order))
    return 0


def _dump_total(path: str) -> int:
    with open(path, encoding="utf-8") as dump:
        for line in dump:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise SystemExit(f"bench_counted: no totals line in {path}")


def count_exec_loops(python: str, script: Path) -> list[tuple[dict[str, str], int]]:
    """Run ``script --child`` under callgrind; each ``exec`` loop it reports, with its instruction count.

    The child runs its loops through one ``exec`` call each and prints, as its last line,
    the JSON list of what each loop was; callgrind writes one dump per ``exec`` call.
    """
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("bench_counted: valgrind is not installed (scripts/ci-deps installs it)")
    with tempfile.TemporaryDirectory(prefix="mrtr-callgrind-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        proc = subprocess.run(  # noqa: S603 - our own interpreter and this file, no outside input
            [
                valgrind,
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=builtin_exec",
                "--dump-after=builtin_exec",
                f"--callgrind-out-file={out}",
                python,
                str(script),
                "--child",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=1800,
        )
        if proc.returncode != 0:
            raise SystemExit(f"bench_counted: the counted child failed:\n{proc.stderr[-3000:]}")
        order = json.loads(proc.stdout.strip().splitlines()[-1])
        # Dumps are numbered in the order they were written; ours are the last len(order) of them
        # (imports may call exec before the child's loops do; the final dump, at exit, is unnumbered).
        dumps = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        totals = [_dump_total(p) for p in dumps[-len(order) :]]
    return list(zip(order, totals, strict=True))


def count(python: str) -> dict[str, dict[str, int]]:
    """Run the child under callgrind; instructions per call of every row, by state size."""
    loops = count_exec_loops(python, Path(__file__).resolve())
    empty = loops[0][1]
    counts: dict[str, dict[str, int]] = {}
    for entry, total in loops[1:]:
        counts.setdefault(entry["size"], {})[entry["row"]] = round((total - empty) / CALLS)
    return counts


def table(counts: dict[str, dict[str, int]], baseline: dict[str, dict[str, int]] | None) -> str:
    """The counts in thousands of instructions per call, one column per state size."""
    sizes = list(counts)
    rows = list(counts[sizes[0]])
    width = max(len(r) for r in rows)
    lines = [f"{'instructions per call (thousands)':<{width}}  " + "  ".join(f"{s:>16}" for s in sizes)]
    for row in rows:
        cells = []
        for size in sizes:
            now = counts[size][row]
            was = (baseline or {}).get(size, {}).get(row)
            delta = f" ({(now / was - 1) * 100:+.1f}%)" if was else ""
            cells.append(f"{now / 1000:>7.1f}{delta:>9}")
        lines.append(f"{row:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)


def regressions(
    counts: dict[str, dict[str, int]], baseline: dict[str, dict[str, int]], tolerance: float
) -> list[str]:
    """Every mrtr_state row whose count rose more than ``tolerance`` above the baseline, or that it lacks."""
    found = []
    for size, rows in counts.items():
        for row, now in rows.items():
            if "mrtr_state" not in row:
                continue
            was = baseline.get(size, {}).get(row)
            if was is None:
                found.append(f"{size} {row}: not in the baseline (run --update)")
            elif now > was * (1 + tolerance):
                found.append(
                    f"{size} {row}: {now} instructions, baseline {was} (+{(now / was - 1) * 100:.1f}%)"
                )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--check", action="store_true", help="fail when a mrtr_state row rises above the baseline"
    )
    mode.add_argument("--update", action="store_true", help="write the counts as the new baseline")
    parser.add_argument("--tolerance", type=float, default=0.03, help="allowed rise over the baseline (0.03)")
    parser.add_argument("--json", metavar="FILE", help="also write the counts to FILE")
    args = parser.parse_args(argv)
    if args.child:
        return child()

    counts = count(sys.executable)
    baseline: dict[str, Any] | None = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    print(table(counts, None if baseline is None else baseline["counts"]))
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=2) + "\n")
    if args.update:
        record = {
            "about": "Instructions per call, counted by benchmarks/bench_counted.py; --update rewrites it.",
            "python": sys.version.split()[0],
            "calls": CALLS,
            "counts": counts,
        }
        BASELINE.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {BASELINE.relative_to(HERE.parent)}")
    if args.check:
        if baseline is None:
            print(f"no baseline at {BASELINE}: run --update", file=sys.stderr)
            return 1
        found = regressions(counts, baseline["counts"], args.tolerance)
        for line in found:
            print(f"REGRESSION {line}", file=sys.stderr)
        if found:
            print(
                "a change that costs instructions updates the baseline in the same commit (--update)",
                file=sys.stderr,
            )
            return 1
        print(f"every mrtr_state row within {args.tolerance:.0%} of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
