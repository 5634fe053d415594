"""Every Python block a user is told to copy is a file the tests run or type-check.

Issue 25: snippets in README.md and docs/ had drifted (an MCP quick start without
authentication, names never defined). Each fenced ``python`` block of those documents
must now be, byte for byte, a file of docs/examples/; those files are type-checked with
``mypy --strict`` here, the ones that need nothing outside the process are run here,
the MCP servers by tests/mcp/test_mcp_docs_quickstart.py and the quick start from the
installed wheel by tests/release. A block that is not for copying (an output transcript)
says so on the line before its fence: ``<!-- not for copying: why -->``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mrtr_state import Keyring
from tests.docs.fenced_blocks import NOT_FOR_COPYING, fenced_blocks

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def example_files() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(EXAMPLES.glob("*.py"))}


def test_every_python_block_of_the_docs_is_a_file_of_docs_examples() -> None:
    files = example_files()
    by_text = {text: name for name, text in files.items()}
    drifted = []
    for document in DOCUMENTS:
        for line, text, exempt in fenced_blocks(document, "python"):
            if not exempt and text not in by_text:
                drifted.append(f"{document.relative_to(ROOT)}:{line}")
    assert not drifted, (
        "these python blocks are not byte for byte a file of docs/examples/ (copy the file's text into "
        f"the block, or mark it '{NOT_FOR_COPYING} ... -->'): {drifted}"
    )


def test_every_file_of_docs_examples_is_quoted_by_a_document() -> None:
    quoted = {text for document in DOCUMENTS for _, text, _ in fenced_blocks(document, "python")}
    orphans = [name for name, text in example_files().items() if text not in quoted]
    assert not orphans, f"docs/examples files no document quotes (stale copies): {orphans}"


def test_the_checker_sees_a_changed_block() -> None:
    # The byte comparison is the whole check: one changed character must count as drift.
    text = example_files()["quickstart.py"]
    assert text.replace("alice", "alicia", 1) not in set(example_files().values())


def test_the_examples_type_check_strictly() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(EXAMPLES)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def run_example(name: str) -> str:
    keys = json.dumps(Keyring.generate("EdDSA").private_jwks())
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "MRTR_STATE_KEYS": keys},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_the_quick_start_opens_its_state_and_refuses_another_user() -> None:
    assert run_example("quickstart.py").splitlines() == [
        "{'step': 'confirm'}",
        "wrong_user",
        "The request state belongs to another user.",
    ]


def test_the_single_use_example_refuses_the_second_presentation() -> None:
    assert run_example("single_use.py").splitlines() == ["replayed"]


@pytest.mark.parametrize("name", ["keys.py", "metrics.py", "pay_memory.py", "mcp_lowlevel_server.py"])
def test_an_example_that_needs_nothing_outside_the_process_runs(name: str) -> None:
    assert run_example(name) == ""
