"""Every example of ``mrtr-state conformance --help`` works from where it says to run it.

Issue 25: ``go run ./examples/baseline/go`` failed from the root ("cannot find main module"),
and the Go baseline verifier offers the signed form only, so the example also needs
``--form signed``. Each example line is run here as printed, from the root of the clone (or,
for ``./my-verifier``, from a folder holding such a program), with one change named where
it is made: the long run's 200,000 mutations become 300.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.interop import harness

ROOT = harness.ROOT
CLI = Path(sys.executable).with_name("mrtr-state")
MRTR_STATE = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "mrtr_state"]
TYPESCRIPT = harness.Program.load(ROOT / "examples" / "interop" / "typescript" / "interop.json")
GO_BASELINE = harness.Program.load(ROOT / "examples" / "baseline" / "go" / "conformance.json")


def help_examples() -> list[str]:
    shown = subprocess.run(
        [*MRTR_STATE, "conformance", "--help"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    lines = shown.split("\nexamples", 1)[1].splitlines()[1:]
    return [line.split("  #", 1)[0].strip() for line in lines if line.startswith("  mrtr-state ")]


EXAMPLES = help_examples()


def example(start: str) -> list[str]:
    found = [line for line in EXAMPLES if line.startswith(start)]
    assert len(found) == 1, (start, EXAMPLES)
    words = shlex.split(found[0])
    assert words[0] == "mrtr-state"
    return [*MRTR_STATE, *words[1:]]


def run(command: list[str], cwd: Path, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=harness.RUN_TIMEOUT, check=False, **options
    )


def test_each_help_example_is_run_by_a_test_here() -> None:
    # A new example line must get its own test below: this list is the help's, in order.
    assert [" ".join(shlex.split(line)[2:4]) for line in EXAMPLES] == [
        "-- node",
        "--class baseline",
        "--mutations 200000",
        "--mutations-only --mutations",
        "--serve",
        "--seed 7",
    ]


def test_the_typescript_example_runs_from_the_root() -> None:
    harness.build(TYPESCRIPT)
    done = run(example("mrtr-state conformance -- node"), ROOT)
    # The example's point is that the command runs from the root: the program starts and answers
    # every case. Which class the package reaches is test_implementations.py's verdict, not this one's.
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    assert "stopped answering" not in done.stdout
    assert "class reached: " in done.stdout


def test_the_go_baseline_example_reaches_baseline_from_the_root() -> None:
    harness.require_tools(GO_BASELINE)
    done = run(example("mrtr-state conformance --class baseline"), ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "class reached: baseline" in done.stdout
    assert "\nFAIL" not in done.stdout  # the differences the baseline class allows are counted, not failed


@pytest.fixture
def my_verifier(tmp_path: Path) -> Path:
    """A folder holding ``./my-verifier``: the reference implementation behind a script."""
    script = tmp_path / "my-verifier"
    script.write_text(f"#!/bin/sh\nexec {shlex.join(MRTR_STATE)} conformance --serve\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return tmp_path


def test_the_long_run_example_runs_against_a_verifier_in_the_current_folder(my_verifier: Path) -> None:
    command = example("mrtr-state conformance --mutations 200000")
    command[command.index("200000")] = "300"  # the one change: a bounded run
    done = run(command, my_verifier)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "class reached: strict" in done.stdout


def test_the_mutations_only_example_sends_the_generated_cases_alone(my_verifier: Path) -> None:
    done = run(example("mrtr-state conformance --mutations-only"), my_verifier)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().endswith("2000 passed, 0 failed")


def test_the_one_case_example_reruns_that_case_alone(my_verifier: Path) -> None:
    done = run(example("mrtr-state conformance --seed 7 --case"), my_verifier)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().endswith("1 passed, 0 failed")


def test_the_serve_example_answers_the_protocol_on_standard_input(tmp_path: Path) -> None:
    done = run(
        example("mrtr-state conformance --serve"),
        tmp_path,
        input='{"id": "1", "op": "digest", "arguments": {}}\n',
        env={**os.environ},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('{"id": "1", "digest": "')
