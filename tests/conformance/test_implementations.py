"""Every implementation in the repository reaches its conformance class through the runner.

An implementation is named by a manifest: a baseline example's ``conformance.json``
(its class, the forms it offers, how to build and run it), the Go module's
``go/conformance.json`` (the same form, for its adapter ``go/cmd/conformance``; ``java/`` and
``rust/`` likewise, the Rust crate's adapter being its ``mrtr-state-conformance`` binary), or an
interop example's ``interop.json`` with a ``conformance`` member (its class and the arguments that start
its conformance command). The reference (``mrtr-state conformance --serve``) runs too.

Each run adds the same seeded mutations to the vectors, and a strict implementation
must give the reference's verdict and reason on every one: this is the bounded
differential fuzzing run of the test command (docs/conformance.md has the long run).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.interop import harness

ROOT = harness.ROOT
VECTORS = ROOT / "spec" / "vectors"
MUTATIONS = "15000"
SEED = "20261202"


@dataclass(frozen=True)
class Implementation:
    """One implementation as the runner sees it."""

    name: str
    program: harness.Program | None  # None: the reference, nothing to build
    claimed: str
    forms: tuple[str, ...]
    command: tuple[str, ...]


def discover() -> list[Implementation]:
    found = [
        Implementation(
            "reference", None, "strict", (), (sys.executable, "-m", "mrtr_state", "conformance", "--serve")
        )
    ]
    # The baseline examples, and the libraries with a conformance adapter of their own (go/, java/, rust/).
    manifests = [
        *sorted((ROOT / "examples").glob("*/*/conformance.json")),
        *sorted(ROOT.glob("*/conformance.json")),
    ]
    for manifest in manifests:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        program = harness.Program.load(manifest)
        found.append(
            Implementation(data["name"], program, data["class"], tuple(data.get("forms", ())), program.run)
        )
    for manifest in sorted((ROOT / "examples").glob("*/*/interop.json")):
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if "conformance" in data:
            program = harness.Program.load(manifest)
            spec = data["conformance"]
            command = (*program.run, *spec["args"])
            found.append(Implementation(f"interop-{data['name']}", program, spec["class"], (), command))
    return found


IMPLEMENTATIONS = discover()


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS, ids=lambda found: found.name)
def test_each_implementation_reaches_the_class_it_claims(implementation: Implementation) -> None:
    cwd = None
    if implementation.program is not None:
        harness.build(implementation.program)
        cwd = implementation.program.directory
    forms = [option for form in implementation.forms for option in ("--form", form)]
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
            implementation.claimed,
            "--mutations",
            MUTATIONS,
            "--seed",
            SEED,
            *forms,
            "--",
            *implementation.command,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=harness.RUN_TIMEOUT,
        check=False,
    )
    lines = run.stdout.splitlines()
    marker = "FAIL" if implementation.claimed == "strict" else "breaks the baseline"
    breaking = [line for line in lines if marker in line]
    assert run.returncode == 0, "\n".join(breaking[:40] + lines[-6:]) + run.stderr[-2000:]
    reached = {"strict": ["strict"], "baseline": ["baseline", "strict"]}[implementation.claimed]
    assert any(f"class reached: {name}" in run.stdout for name in reached)


def test_every_example_language_runs_through_the_runner() -> None:
    names = {found.name for found in IMPLEMENTATIONS}
    assert {
        "baseline-typescript",
        "baseline-go",
        "baseline-python",
        "go-module",
        "baseline-java",
        "interop-go",
        "interop-java",
        "interop-rust",
        "interop-typescript",
        "java",
        "rust-crate",
    } <= names
