"""``examples/worker`` in workerd (miniflare), driven by the MCP TypeScript SDK's client (issue 27).

The Worker is bundled as ``wrangler deploy`` would bundle it, and its ``node:test`` suite runs it in workerd,
with and without ``nodejs_compat``: the boundary seals and opens requestState there, and single use holds in
the Durable Object store (a replay refused, one of eight concurrent retries served). Installed from the
example's lock file; without Node.js this skips, except under ``CI=true``. The Worker passes its typed
``Env`` (a Durable Object binding beside the secret) to ``Keyring.fromEnv`` as it is, so its ``tsc --strict``
build checks that call (issue 33), and typescript/README.md's Worker fragments are lines of its files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.fenced_blocks import fenced_blocks
from tests.typescript.test_typescript_package import PACKAGE, npm

WORKER = PACKAGE.parent / "examples" / "worker"
README = PACKAGE / "README.md"


@pytest.mark.parametrize(
    ("language", "source"), [("ts", WORKER / "src" / "worker.ts"), ("toml", WORKER / "wrangler.toml")]
)
def test_the_readme_worker_fragments_are_lines_of_the_tested_worker(language: str, source: Path) -> None:
    lines = {line.strip() for line in source.read_text(encoding="utf-8").splitlines()}
    fragments = [text for _, text, _ in fenced_blocks(README, language) if "Durable" in text or "[[" in text]
    assert fragments, f"typescript/README.md has no Worker {language} fragment"
    for text in fragments:
        missing = [line for line in text.splitlines() if line.strip() and line.strip() not in lines]
        assert not missing, f"README {language} lines that {source.name} does not have: {missing}"


def test_the_worker_example_runs_in_workerd_with_the_durable_object_store() -> None:
    npm("ci", "--no-audit", "--no-fund")
    npm("run", "build")
    npm("ci", "--no-audit", "--no-fund", "--prefix", str(WORKER))
    result = npm("run", "test", "--prefix", str(WORKER))
    summary = dict(re.findall(r"^# (tests|pass|fail|skipped) (\d+)$", result.stdout, re.MULTILINE))
    assert summary.get("fail") == "0", result.stdout[-6000:]
    assert summary.get("skipped") == "0", result.stdout[-6000:]
    assert int(summary.get("pass", "0")) >= 10, summary
