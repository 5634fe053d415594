"""``examples/worker`` in workerd (miniflare), driven by the MCP TypeScript SDK's client (issue 27).

The Worker is bundled as ``wrangler deploy`` would bundle it, and its ``node:test`` suite runs it in workerd,
with and without ``nodejs_compat``: the boundary seals and opens requestState there, and single use holds in
the Durable Object store (a replay refused, one of eight concurrent retries served). Installed from the
example's lock file; without Node.js this skips, except under ``CI=true``.
"""

from __future__ import annotations

import re

from tests.typescript.test_typescript_package import PACKAGE, npm

WORKER = PACKAGE.parent / "examples" / "worker"


def test_the_worker_example_runs_in_workerd_with_the_durable_object_store() -> None:
    npm("ci", "--no-audit", "--no-fund")
    npm("run", "build")
    npm("ci", "--no-audit", "--no-fund", "--prefix", str(WORKER))
    result = npm("run", "test", "--prefix", str(WORKER))
    summary = dict(re.findall(r"^# (tests|pass|fail|skipped) (\d+)$", result.stdout, re.MULTILINE))
    assert summary.get("fail") == "0", result.stdout[-6000:]
    assert summary.get("skipped") == "0", result.stdout[-6000:]
    assert int(summary.get("pass", "0")) >= 10, summary
