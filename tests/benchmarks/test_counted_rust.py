"""The Rust crate's counted benchmark: instructions per seal and open held to the committed baseline.

``benchmarks/bench_counted_rust.py`` builds ``rust/src/bin/counted.rs`` in release mode and counts
its loops with callgrind, so its figures do not move with the machine's load; this test runs it
with ``--check`` (about 7 s once the release build is there) and so fails a change that makes a
seal or an open of the crate execute more than 3% more instructions than
``benchmarks/counted-rust-baseline.json`` says, unless the same change updates the baseline.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.ci import missing_tool

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "bench_counted_rust.py"
BASELINE = ROOT / "benchmarks" / "counted-rust-baseline.json"


def test_the_baseline_counts_every_form_and_operation_at_every_size() -> None:
    record = json.loads(BASELINE.read_text())
    rows = {
        f"{op}: mrtr_state {alg} + argument digest"
        for op in ("open", "seal")
        for alg in ("HS256", "EdDSA", "A256GCM")
    }
    assert set(record["counts"]) == {"200 B", "2 KiB", "5.5 KiB"}
    for size_rows in record["counts"].values():
        assert set(size_rows) == rows
        assert all(count > 0 for count in size_rows.values())
    assert record["rustc"].startswith("rustc ")


def test_seal_and_open_count_no_more_instructions_than_the_baseline() -> None:
    for tool in ("cargo", "valgrind"):
        if shutil.which(tool) is None:
            missing_tool(f"{tool} is not installed (the Rust crate's counted benchmark needs it)")
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
