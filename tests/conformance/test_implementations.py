"""Every implementation in the repository reaches its conformance class through the runner.

Each has a manifest naming its class and how to build and run it in the conformance
protocol (``conformance.json`` beside a baseline example). The run adds seeded mutations
to the vectors, so this is also a bounded differential run against the reference: a
strict implementation must give the reference's verdict and reason on every input.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.interop import harness

ROOT = harness.ROOT
VECTORS = ROOT / "spec" / "vectors"
MANIFESTS = sorted((ROOT / "examples").glob("*/*/conformance.json"))
MUTATIONS = "1500"
SEED = "20261202"


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda path: path.parent.relative_to(ROOT).as_posix())
def test_each_implementation_reaches_the_class_it_claims(manifest: Path) -> None:
    description = json.loads(manifest.read_text(encoding="utf-8"))
    claimed = description["class"]
    forms = [option for form in description.get("forms", ()) for option in ("--form", form)]
    program = harness.Program.load(manifest)
    harness.build(program)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mrtr_state",
            "conformance",
            "--quiet",
            "--vectors",
            str(VECTORS),
            "--class",
            claimed,
            "--mutations",
            MUTATIONS,
            "--seed",
            SEED,
            *forms,
            "--",
            *program.run,
        ],
        cwd=program.directory,
        capture_output=True,
        text=True,
        timeout=harness.RUN_TIMEOUT,
        check=False,
    )
    lines = run.stdout.splitlines()
    marker = "FAIL" if claimed == "strict" else "breaks the baseline"
    breaking = [line for line in lines if marker in line]
    assert run.returncode == 0, "\n".join(breaking[:40] + lines[-6:]) + run.stderr[-2000:]
    assert f"class reached: {claimed}" in run.stdout or "class reached: strict" in run.stdout


def test_every_baseline_example_has_a_manifest() -> None:
    assert {path.parent.name for path in MANIFESTS if path.parent.parent.name == "baseline"} == {
        "go",
        "typescript",
    }
