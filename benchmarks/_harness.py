"""The timing harness every benchmark here shares: interleaved rounds, same-round ratios.

Every candidate of a table runs in the same rounds. In each round the candidates
run in a fresh random order, each for one batch of calls sized to take about
``batch_s`` (garbage collector off). A row's time is the median over rounds of the
per-call time; a ratio is the median over rounds of the ratio between two
candidates measured in the same round, so a slow spell of a shared machine hits
both sides of a ratio alike.

The clock is the process's CPU time by default (``time.process_time``): on a
machine shared with other work, it leaves out the time this process waits for a
CPU, which wall time would count against whichever candidate happened to be
running. ``--clock wall`` (``time.perf_counter``) measures elapsed time instead.
Both benchmarks are single-threaded (the MCP round runs client and server on one
event loop), so CPU time is the time of the work measured.

A candidate is either a plain zero-argument callable (:func:`measure`) or a
coroutine function (:func:`measure_async`, awaited in the caller's event loop).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

#: The clocks a run may use, by the name given on the command line.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


@dataclass
class Candidate:
    """One thing to time: a label, a zero-argument callable, and where its ratios point."""

    label: str
    fn: Callable[[], object]
    floor: str | None = None  # label of the floor row this row is compared with
    ref: str | None = None  # label of the mrtr_state row this row is compared with
    token: int | None = None  # token length in bytes, where it has one
    samples: list[float] = field(default_factory=list)  # per-call seconds, one per round


def _batch_size(elapsed: float, number: int, batch_s: float) -> int:
    return max(1, int(number * batch_s / elapsed)) if elapsed > 0 else number


def measure(
    candidates: Sequence[Candidate], *, rounds: int, batch_s: float, seed: int, clock: str = "cpu"
) -> None:
    """Time every candidate in the same ``rounds``, interleaved in a random order each round."""
    now = CLOCKS[clock]

    def run(fn: Callable[[], object], number: int) -> float:
        start = now()
        for _ in range(number):
            fn()
        return now() - start

    def calibrate(fn: Callable[[], object]) -> int:
        # Warm the candidate up, then size its batch from a run of >= 0.2 s.
        number = 1
        while True:
            elapsed = run(fn, number)
            if elapsed >= 0.2:
                return _batch_size(elapsed, number, batch_s)
            number *= 2

    _interleave(candidates, rounds, seed, calibrate, run)


async def measure_async(
    candidates: Sequence[Candidate], *, rounds: int, batch_s: float, seed: int, clock: str = "cpu"
) -> None:
    """:func:`measure` for candidates whose ``fn`` is a coroutine function, in the running loop."""
    now = CLOCKS[clock]

    async def run(fn: Callable[[], object], number: int) -> float:
        call: Callable[[], Awaitable[object]] = fn  # type: ignore[assignment]
        start = now()
        for _ in range(number):
            await call()
        return now() - start

    numbers: dict[str, int] = {}
    for c in candidates:
        number = 1
        while True:
            elapsed = await run(c.fn, number)
            if elapsed >= 0.2:
                break
            number *= 2
        numbers[c.label] = _batch_size(elapsed, number, batch_s)
    rng = random.Random(seed)
    order = list(candidates)
    with _gc_off():
        for _ in range(rounds):
            rng.shuffle(order)
            for c in order:
                c.samples.append(await run(c.fn, numbers[c.label]) / numbers[c.label])


def _interleave(
    candidates: Sequence[Candidate],
    rounds: int,
    seed: int,
    calibrate: Callable[[Callable[[], object]], int],
    run: Callable[[Callable[[], object], int], float],
) -> None:
    numbers = {c.label: calibrate(c.fn) for c in candidates}
    rng = random.Random(seed)
    order = list(candidates)
    with _gc_off():
        for _ in range(rounds):
            rng.shuffle(order)
            for c in order:
                c.samples.append(run(c.fn, numbers[c.label]) / numbers[c.label])


@contextlib.contextmanager
def _gc_off() -> Iterator[None]:
    """The garbage collector off for the timed batches, as timeit does, and back as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def make_state(size: int) -> Any:
    """A plausible MRTR state (a plan, answers so far, a list of items) of exactly ``size`` JSON bytes."""
    state: dict[str, Any] = {
        "step": 2,
        "plan": {"env": "prod", "branch": "release-1.2", "replicas": 3, "dry_run": False},
        "asked": ["confirm"],
        "items": [],
        "note": "",
    }
    while True:
        i = len(state["items"])
        item = {"id": i, "path": f"/srv/app/releases/file-{i:04d}.tar.gz", "bytes": 1200 + 37 * i, "ok": True}
        state["items"].append(item)
        if len(_compact(state)) > size:
            state["items"].pop()
            break
    state["note"] = "n" * (size - len(_compact(state)))
    return state


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def median(values: Sequence[float]) -> float:
    """The median."""
    return statistics.median(values)


def spread(values: Sequence[float]) -> float:
    """Half the interquartile range, relative to the median."""
    q = statistics.quantiles(values, n=4)
    return (q[2] - q[0]) / 2 / statistics.median(values)


def ratio(a: Candidate, b: Candidate) -> float:
    """The median over rounds of a's time over b's time in the same round."""
    return median([x / y for x, y in zip(a.samples, b.samples, strict=True)])


def by_label(candidates: Sequence[Candidate]) -> dict[str, Candidate]:
    """The candidates by label."""
    return {c.label: c for c in candidates}


def print_table(title: str, candidates: Sequence[Candidate]) -> None:
    """One table: median time, spread, and the ratios to the floor and to ``mrtr_state``."""
    rows = by_label(candidates)
    print(f"\n{title}")
    head = f"  {'candidate':<44} {'µs':>9} {'±':>5} {'x floor':>7} {'x mrtr':>7} {'token B':>8}"
    print(head)
    print("  " + "-" * (len(head) - 2))
    for c in candidates:
        us = median(c.samples) * 1e6
        fl = f"{ratio(c, rows[c.floor]):.2f}" if c.floor else ""
        rf = f"{ratio(c, rows[c.ref]):.2f}" if c.ref else ""
        tok = "" if c.token is None else str(c.token)
        print(f"  {c.label:<44} {us:>9.1f} {spread(c.samples) * 100:>4.0f}% {fl:>7} {rf:>7} {tok:>8}")


def table_json(candidates: Sequence[Candidate]) -> list[dict[str, object]]:
    """A table as JSON rows: every median and ratio, for ``--json``."""
    rows = by_label(candidates)
    return [
        {
            "candidate": c.label,
            "us": round(median(c.samples) * 1e6, 2),
            "spread": round(spread(c.samples), 3),
            "x_floor": round(ratio(c, rows[c.floor]), 3) if c.floor else None,
            "x_mrtr": round(ratio(c, rows[c.ref]), 3) if c.ref else None,
            "token_bytes": c.token,
        }
        for c in candidates
    ]


def describe_machine(libraries: Sequence[str]) -> list[str]:
    """The lines that say where a run ran: CPUs, OS, Python, the versions of ``libraries``, the load."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in libraries)
    load = os.getloadavg()
    return [
        f"machine: {os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}",
        f"python: {platform.python_implementation()} {platform.python_version()}",
        f"libraries: {versions}",
        f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
    ]


def method_line(rounds: int, batch_ms: float, clock: str) -> str:
    """The sentence that says how the figures of a run were taken."""
    what = "CPU time of the process" if clock == "cpu" else "wall time"
    return (
        f"method: {rounds} rounds per table; each round runs every candidate of the table once, in a "
        f"fresh random order, for a batch of ~{batch_ms:g} ms ({what}, gc off). "
        "us = median per-call time over rounds; ratios = median of same-round ratios; "
        "+- = half the interquartile range of the per-round times"
    )


def add_run_options(
    parser: argparse.ArgumentParser, *, rounds: int, rounds_help: str, batch_ms: float, quick_rounds: int
) -> None:
    """The options of a benchmark in rounds: --rounds, --batch-ms, --quick, --seed, --clock, --json."""
    parser.add_argument("--rounds", type=int, default=rounds, help=f"{rounds_help} (default {rounds})")
    parser.add_argument(
        "--batch-ms", type=float, default=batch_ms, help=f"time per batch, ms (default {batch_ms:g})"
    )
    parser.add_argument("--quick", action="store_true", help=f"{quick_rounds} rounds: a rough look")
    parser.add_argument("--seed", type=int, default=1, help="seed of the interleaving order")
    parser.add_argument(
        "--clock", choices=("cpu", "wall"), default="cpu", help="CPU time (default) or wall time"
    )
    parser.add_argument("--json", metavar="PATH", help="also write every median and ratio to PATH")


def finish(report: dict[str, Any], *, started: float, met_all: bool, json_path: str | None) -> None:
    """Print the closing line (the load, how long the run took, whether every target was met), and
    write ``report`` to ``json_path`` when one was given (``--json``)."""
    load = os.getloadavg()
    print(
        f"\nload average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"run took {time.time() - started:.0f} s; every target met: {'yes' if met_all else 'no'}"
    )
    if json_path:
        with open(json_path, "w") as f:
            json.dump(report, f, indent=1)
