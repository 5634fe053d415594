"""Every TypeScript block of typescript/README.md a user is told to copy is a file the tests type-check.

Issue 25: the npm package's MCP server snippet did not compile (a missing ``return``, ``z`` and
``requestedSchema`` undefined) and left out what a TypeScript server author needs first: the boundary
installed in ``createMcpHandler``'s per-request factory, the user arriving through
``handler.fetch(req, { authInfo })``, and the client opting in to the 2026-07-28 revision with
``versionNegotiation: { mode: "auto" }``. Each fenced ``ts`` block of typescript/README.md must now be, byte
for byte, a file of typescript/examples/; those files are type-checked with ``tsc --strict --noEmit``
against the built package (they import ``mrtr-state`` by its name, resolved to ``dist/`` through the
package's own ``exports``), and the ones that need nothing outside the process are compiled and run. A
block that is not for copying says so on the line before its fence: ``<!-- not for copying: why -->``.
Without Node.js the compiling tests skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tests.docs.fenced_blocks import NOT_FOR_COPYING, fenced_blocks
from tests.typescript.test_typescript_package import PACKAGE, npm

README = PACKAGE / "README.md"
EXAMPLES = PACKAGE / "examples"
BUILT = PACKAGE / "build-examples"
# Run here: they need nothing outside the process (redis.ts needs a Redis server, so it is type-checked only).
RUNNABLE = {
    "quickstart.ts": "wrong_user\nThe request state belongs to another user.\n",
    "keys.ts": "Keyring([Key(alg=EdDSA, kid=",
    "mcp-server.ts": "deleted old",
    "manual-rounds.ts": "[ 'confirm' ]\n[ { type: 'text', text: 'deleted old' } ]\n",
}
RUN_TIMEOUT = 120


def example_files() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(EXAMPLES.glob("*.ts"))}


def test_every_ts_block_of_the_readme_is_a_file_of_the_examples() -> None:
    by_text = {text: name for name, text in example_files().items()}
    drifted = [
        f"typescript/README.md:{line}"
        for line, text, exempt in fenced_blocks(README, "ts")
        if not exempt and text not in by_text
    ]
    assert not drifted, (
        "these ts blocks are not byte for byte a file of typescript/examples/ (copy the file's text into "
        f"the block, or mark it '{NOT_FOR_COPYING} ... -->'): {drifted}"
    )
    assert len(fenced_blocks(README, "ts")) >= 4, (
        "the README lost its ts blocks; the fence pattern no longer matches them"
    )


def test_every_example_is_quoted_by_the_readme() -> None:
    quoted = {text for _, text, _ in fenced_blocks(README, "ts")}
    orphans = [name for name, text in example_files().items() if text not in quoted]
    assert not orphans, f"typescript/examples files the README does not quote (stale copies): {orphans}"


def test_the_checker_sees_a_changed_block() -> None:
    # The byte comparison is the whole check: one changed character must count as drift.
    text = example_files()["quickstart.ts"]
    assert text.replace("alice", "alicia", 1) not in set(example_files().values())


def test_the_server_snippet_shows_what_a_typescript_server_author_needs() -> None:
    server = example_files()["mcp-server.ts"]
    factory = server.index("createMcpHandler(() => {")
    assert server.index(".install(server)") > factory, (
        "the boundary must be installed in the per-request factory"
    )
    assert "handler.fetch(new Request(url, init), { authInfo })" in server
    assert 'versionNegotiation: { mode: "auto" }' in server


def test_the_readme_names_no_branch() -> None:
    # It pointed at "the revision on branch issue-13", a branch a user cannot find.
    assert not re.search(r"branch `?issue-\d+", README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def built() -> None:
    """The package installed from its lock file and built to dist/, once for this module."""
    npm("ci", "--no-audit", "--no-fund")
    npm("run", "build")


def test_the_examples_type_check_strictly_against_the_built_package(built: None) -> None:
    npm("exec", "--no", "--", "tsc", "-p", "examples/tsconfig.json", "--strict", "--noEmit")


def test_the_checker_sees_a_block_that_does_not_compile(built: None) -> None:
    # The type check must be able to fail: the old snippet's mistake (z undefined) is refused by tsc, and
    # nothing else is (the copy sits inside the package, so "mrtr-state" still resolves to dist/).
    broken = BUILT / "broken-check"
    shutil.rmtree(broken, ignore_errors=True)
    shutil.copytree(EXAMPLES, broken)
    try:
        server = broken / "mcp-server.ts"
        server.write_text(
            server.read_text(encoding="utf-8").replace('import * as z from "zod";\n', ""), encoding="utf-8"
        )
        config = broken / "tsconfig.json"
        config.write_text(
            config.read_text(encoding="utf-8").replace(
                '"../tsconfig.build.json"', '"../../tsconfig.build.json"'
            ),
            encoding="utf-8",
        )
        tsc = PACKAGE / "node_modules" / ".bin" / "tsc"
        run = subprocess.run(
            [str(tsc), "-p", str(config), "--strict", "--noEmit"],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        errors = [line for line in run.stdout.splitlines() if "error TS" in line]
        assert run.returncode != 0, run.stdout[-2000:]
        assert errors, run.stdout[-2000:]
        assert all("mcp-server.ts" in line and "'z'" in line for line in errors), run.stdout[-2000:]
    finally:
        shutil.rmtree(BUILT, ignore_errors=True)


def test_the_examples_that_need_nothing_outside_the_process_run(built: None) -> None:
    shutil.rmtree(BUILT, ignore_errors=True)
    npm("exec", "--no", "--", "tsc", "-p", "examples/tsconfig.json")
    keys = subprocess.run(
        [
            "node",
            "--input-type=module",
            "-e",
            'import { Keyring } from "mrtr-state"; '
            'console.log(JSON.stringify(Keyring.generate("EdDSA").privateJwks()));',
        ],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=True,
    ).stdout.strip()
    env = {**os.environ, "MRTR_STATE_KEYS": keys}
    try:
        for name, expected in RUNNABLE.items():
            run = subprocess.run(
                ["node", str(BUILT / name.replace(".ts", ".js"))],
                cwd=PACKAGE,
                env=env,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                check=False,
            )
            assert run.returncode == 0, f"{name}: {run.stdout[-2000:]}\n{run.stderr[-2000:]}"
            assert expected in run.stdout, f"{name}: {run.stdout[-2000:]}"
    finally:
        shutil.rmtree(BUILT, ignore_errors=True)
