"""Every Go and Java block of go/README.md and java/README.md a user is told to copy is a compiled file.

Issue 25: the Go and Java READMEs held fragments (a one-screen server that named undefined variables,
or that never opened a port) which no build saw. Each fenced ``go`` block of go/README.md must now be,
byte for byte, a ``go/examples/readme/<name>/main.go``, and each ``java`` block of java/README.md a
top-level file of ``java/src/test/java/`` (the default package, as a user would paste it) other than a
``*Test.java``; both ways, so a file no README quotes is a stale copy. A block that is not for copying
(a list of calls, a fragment of a program quoted whole elsewhere) says so on the line before its fence:
``<!-- not for copying: why -->``.

Who compiles what: the Go programs are inside the Go module, so ``scripts/check-go`` vets, staticchecks
and builds them (``go vet ./...``); the Java files are test sources, so ``scripts/check-java``
(``mvn verify``, -Xlint:all -Werror, against mcp-core 2.2.0 and an embedded Tomcat) compiles them and its
``ReadmeExamplesTest`` runs ``SealAndOpen``. This file runs the Go program that needs nothing outside the
process (``withoutmcp``) and checks what it prints; without a go toolchain that test skips, except under
CI=true, where it fails. The servers are compiled, not started: they listen on fixed ports.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ci import missing_tool
from tests.docs.fenced_blocks import NOT_FOR_COPYING, fenced_blocks

ROOT = Path(__file__).resolve().parents[2]
GO_README = ROOT / "go" / "README.md"
JAVA_README = ROOT / "java" / "README.md"
GO_EXAMPLES = ROOT / "go" / "examples" / "readme"
JAVA_EXAMPLES = ROOT / "java" / "src" / "test" / "java"


def go_files() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted(GO_EXAMPLES.glob("*/main.go"))
    }


def java_files() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted(JAVA_EXAMPLES.glob("*.java"))
        if not path.name.endswith("Test.java")
    }


CASES = [
    pytest.param(GO_README, "go", go_files, id="go"),
    pytest.param(JAVA_README, "java", java_files, id="java"),
]


@pytest.mark.parametrize(("document", "language", "files"), CASES)
def test_every_block_to_copy_is_a_compiled_file(
    document: Path, language: str, files: Callable[[], dict[str, str]]
) -> None:
    quoted = set(files().values())
    drifted = [
        f"{document.relative_to(ROOT)}:{line}"
        for line, text, exempt in fenced_blocks(document, language)
        if not exempt and text not in quoted
    ]
    assert not drifted, (
        f"these {language} blocks are not byte for byte one of the files {sorted(files())} (copy the file's "
        f"text into the block, or mark it '{NOT_FOR_COPYING} ... -->'): {drifted}"
    )


@pytest.mark.parametrize(("document", "language", "files"), CASES)
def test_every_file_is_quoted_by_its_readme(
    document: Path, language: str, files: Callable[[], dict[str, str]]
) -> None:
    found = files()
    assert found, f"no {language} example files: the glob no longer finds them"
    quoted = {text for _, text, _ in fenced_blocks(document, language)}
    orphans = [name for name, text in found.items() if text not in quoted]
    assert not orphans, f"files {document.relative_to(ROOT)} does not quote (stale copies): {orphans}"


def test_the_one_screen_servers_are_quoted_whole() -> None:
    # The point of issue 25: the servers a user copies are the compiled files, not fragments.
    go_quoted = {text for _, text, exempt in fenced_blocks(GO_README, "go") if not exempt}
    java_quoted = {text for _, text, exempt in fenced_blocks(JAVA_README, "java") if not exempt}
    assert go_files()["go/examples/readme/server/main.go"] in go_quoted
    assert java_files()["java/src/test/java/OneScreenServer.java"] in java_quoted
    assert java_files()["java/src/test/java/SealAndOpen.java"] in java_quoted


def test_the_checker_sees_a_changed_block() -> None:
    # The byte comparison is the whole check: one changed character must count as drift.
    text = go_files()["go/examples/readme/withoutmcp/main.go"]
    changed = text.replace("alice", "alicia", 1)
    assert changed != text
    assert changed not in {quoted for _, quoted, _ in fenced_blocks(GO_README, "go")}


def test_the_without_mcp_program_opens_refuses_another_user_and_a_replay() -> None:
    go = shutil.which("go")
    if go is None:
        missing_tool("go not found on PATH")
    run = subprocess.run(
        [go, "run", "./examples/readme/withoutmcp"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT / "go",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == [
        '{"step":"confirm"} <nil>',
        "wrong_user | The request state belongs to another user.",
        "<nil>",
        "true",
    ]
