"""The npm package under every runtime TypeScript MCP servers are deployed on (issue 27).

``typescript/runtimes/run.mjs`` bundles the package's portable suite (every vector of ``spec/vectors`` and a
check of every module, the MCP adapter on the SDK's web-standard handler included) once, and runs that one
bundle under Node, Deno, Bun, Cloudflare's workerd through miniflare (with and without ``nodejs_compat``)
and Vercel's edge-runtime, each from the npm package that ships it (``typescript/runtimes/package.json``,
installed from its lock file). Every runtime must pass every check, give each the verdict Node gives, and
mint the same bytes for the deterministic tokens. Then the Redis store (``mrtr-state/redis``) runs under Node,
Deno and Bun against a ``redis-server`` the runner starts and stops. Without Node.js this skips, except
under ``CI=true``.
"""

from __future__ import annotations

import json
import re
import shutil

from tests.typescript.test_typescript_package import PACKAGE, npm

RUNTIMES = ("node", "deno", "bun", "workerd", "workerd+nodejs_compat", "edge-runtime")


def test_every_runtime_runs_every_vector_with_nodes_verdicts() -> None:
    npm("ci", "--no-audit", "--no-fund")
    npm("run", "build")
    npm("ci", "--no-audit", "--no-fund", "--prefix", str(PACKAGE / "runtimes"))
    result = npm("run", "test", "--prefix", str(PACKAGE / "runtimes"))
    match = re.search(r"^RESULT (\{.*\})$", result.stdout, re.MULTILINE)
    assert match is not None, result.stdout[-4000:]
    summary = json.loads(match.group(1))
    assert sorted(summary) == sorted(RUNTIMES), summary
    for runtime in RUNTIMES:
        counts = summary[runtime]
        assert counts["ran"], f"{runtime} did not run:\n{result.stdout[-4000:]}"
        shown = f"{runtime}: {counts}\n{result.stdout[-4000:]}"
        assert counts["failures"] == 0, shown
        assert counts["differing"] == 0, shown
        assert counts["checks"] == summary["node"]["checks"] > 300, counts
    redis = re.search(r"^REDIS (\{.*\})$", result.stdout, re.MULTILINE)
    assert redis is not None, result.stdout[-4000:]
    if shutil.which("redis-server") is not None:
        stores = json.loads(redis.group(1))
        assert sorted(stores) == ["bun", "deno", "node"], stores
        for runtime, counts in stores.items():
            assert counts["failures"] == 0, f"the Redis store under {runtime}: {result.stdout[-3000:]}"
            assert counts["checks"] > 0, counts
