"""The npm package ``mrtr-state`` (``typescript/``): its own test suite, and a clean ``npm pack``.

``npm ci`` installs from the committed lock file and ``npm test`` builds with ``tsc --strict`` and runs
every ``node:test`` file, the profile's vectors and the Redis store against a real ``redis-server``
among them. Without Node.js this skips, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.ci import IN_CI, missing_tool

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "typescript"
TIMEOUT = 900


def npm(*args: str) -> subprocess.CompletedProcess[str]:
    """Run npm in the package directory; fail the test with its output if it fails."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        missing_tool("Node.js with npm is not installed; the TypeScript package tests need it")
    result = subprocess.run(
        ["npm", *args], cwd=PACKAGE, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    if result.returncode != 0:
        output = f"{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
        pytest.fail(f"npm {' '.join(args)} failed ({result.returncode}):\n{output}")
    return result


@pytest.fixture(scope="module")
def installed() -> None:
    """``npm ci`` from the committed lock file, once for this module."""
    npm("ci", "--no-audit", "--no-fund")


def test_the_package_passes_its_own_tests_every_vector_included(installed: None) -> None:
    result = npm("test")  # not a terminal: node:test reports in TAP
    summary = dict(re.findall(r"^# (tests|pass|fail|skipped) (\d+)$", result.stdout, re.MULTILINE))
    assert summary.get("fail") == "0", result.stdout[-6000:]
    assert int(summary.get("pass", "0")) > 200, summary
    if IN_CI:
        assert summary.get("skipped") == "0", "under CI=true no TypeScript test may skip"
    for vector_file in ("tokens.json", "arguments.json", "invalid-keys.json"):
        vectors = json.loads((ROOT / "spec" / "vectors" / vector_file).read_text(encoding="utf-8"))["vectors"]
        for vector in vectors:
            assert re.search(
                rf"^\s*ok \d+ - (invalid-keys: )?{re.escape(vector['id'])}( is refused at load)?$",
                result.stdout,
                re.MULTILINE,
            ), f"{vector_file} {vector['id']} did not pass in npm test"


def test_npm_pack_holds_only_the_built_package(installed: None) -> None:
    npm("run", "build")
    result = npm("pack", "--dry-run", "--json")
    (pack,) = json.loads(result.stdout)
    files = sorted(entry["path"] for entry in pack["files"])
    assert "package.json" in files
    assert "README.md" in files
    assert "LICENSE" in files  # the Apache-2.0 text package.json names
    assert "dist/index.js" in files
    assert "dist/index.d.ts" in files
    assert "dist/mcp/index.js" in files
    assert "dist/replay/redis.d.ts" in files
    assert "dist/replay/durable-object.js" in files
    stray = [
        path
        for path in files
        if not (
            path in ("package.json", "README.md", "LICENSE") or re.fullmatch(r"dist/.+\.(js|d\.ts)", path)
        )
    ]
    assert stray == [], stray
