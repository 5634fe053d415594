"""The counted benchmark: instructions per seal and open held to the committed baseline.

``benchmarks/bench_counted.py`` counts with callgrind, so its figures do not move with the
machine's load; this test runs it with ``--check`` (about two minutes of CPU) and so fails a
change that makes an open or a seal execute more than 3% more instructions than the baseline
in ``benchmarks/counted-baseline.json`` says, unless the same change updates the baseline.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from tests.ci import missing_tool

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_counted.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_counted", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_rise_over_the_tolerance_is_a_regression_and_a_peer_never_fails_the_check() -> None:
    bench = _bench()
    baseline = {"200 B": {"open: mrtr_state HS256": 1000, "open: pyjwt HS256": 1000}}
    within = {"200 B": {"open: mrtr_state HS256": 1030, "open: pyjwt HS256": 5000}}
    above = {"200 B": {"open: mrtr_state HS256": 1031, "open: pyjwt HS256": 1000}}
    new_row = {"200 B": {"open: mrtr_state EdDSA": 10}}
    assert bench.regressions(within, baseline, 0.03) == []
    assert bench.regressions(above, baseline, 0.03) == [
        "200 B open: mrtr_state HS256: 1031 instructions, baseline 1000 (+3.1%)"
    ]
    assert bench.regressions(new_row, baseline, 0.03) == [
        "200 B open: mrtr_state EdDSA: not in the baseline (run --update)"
    ]


def test_the_baseline_counts_every_row_the_benchmark_counts() -> None:
    import json

    bench = _bench()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        rows = {f"{op}: {label}" for op, label in bench._rows()}
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    counts = json.loads((ROOT / "benchmarks" / "counted-baseline.json").read_text())["counts"]
    assert set(counts) == set(bench.SIZES)
    for size_rows in counts.values():
        assert set(size_rows) == rows


def test_open_and_seal_count_no_more_instructions_than_the_baseline() -> None:
    if shutil.which("valgrind") is None:
        missing_tool("valgrind is not installed (scripts/ci-deps installs it)")
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1800,
        check=False,
    )
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
