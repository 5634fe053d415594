"""Drive the interop examples in examples/interop/<language>/.

Each example directory holds an ``interop.json`` manifest:

    {
      "name": "typescript",
      "tools": ["node", "npm"],                       executables that must be on PATH
      "build": [["npm", "ci"], ["npm", "run", "build"]],
      "run": ["node", "dist/main.js"]                 run from the example directory
    }

and its program offers three commands (spec/profile.md, section 12, and docs/interop.md):

    <run> vectors <dir>   check every vector of tokens.json, arguments.json and invalid-keys.json;
                          one line per vector, then "N passed, M failed"
    <run> verify          stdin {"jobs": [...]}  ->  stdout {"results": [...]}
    <run> mint            stdin {"jobs": [...]}  ->  stdout {"results": [...]}

A verify job: {"keys": <JWKS>, "token": str, "issuer": str, "user": str, one of "tool" / "prompt" /
"resource": str, "arguments": object (optional; absent means {}), "now": int, and optionally
"max_lifetime", "leeway", "max_token_bytes", "require_arguments" (bool, default false)}; its result
{"valid": true, "state": <state>} or
{"valid": false, "reason": <reason code>}.
A mint job: {"key": <private JWK>, "issuer", "user", one of "tool" / "prompt" / "resource",
"arguments" (optional: no args_sha256 claim when absent), "now": int, "ttl": int, "state": <any JSON>,
"jti": str (optional; random when absent)}; its result {"token": str}. An A256GCM encryption JWK as
"key" mints the encrypted form (a compact JWE).
Jobs are batched so that one process serves hundreds of tokens.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.ci import missing_tool

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "interop"
BUILD_TIMEOUT = 900
RUN_TIMEOUT = 300


@dataclass(frozen=True)
class Program:
    """One interop example, as its manifest describes it."""

    name: str
    directory: Path
    tools: tuple[str, ...]
    build: tuple[tuple[str, ...], ...]
    run: tuple[str, ...]

    @classmethod
    def load(cls, manifest: Path) -> Program:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        return cls(
            name=data["name"],
            directory=manifest.parent,
            tools=tuple(data["tools"]),
            build=tuple(tuple(step) for step in data["build"]),
            run=tuple(data["run"]),
        )


def discover() -> list[Program]:
    """Every example that has a manifest, in a stable order."""
    return [Program.load(m) for m in sorted(EXAMPLES.glob("*/interop.json"))]


def require_tools(program: Program) -> None:
    """Skip (locally) or fail (under CI=true) when a toolchain is missing."""
    missing = [tool for tool in program.tools if shutil.which(tool) is None]
    if missing:
        missing_tool(f"{program.name}: toolchain not found on PATH: {', '.join(missing)}")


def build(program: Program) -> None:
    """Build the example from its own build file (once per test session)."""
    require_tools(program)
    for step in program.build:
        result = subprocess.run(
            list(step),
            cwd=program.directory,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
            check=False,
        )
        if result.returncode != 0:
            pytest.fail(
                f"{program.name}: build step {' '.join(step)!r} failed ({result.returncode}):\n"
                f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
            )


def run(program: Program, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the built example with ``args``."""
    return subprocess.run(
        [*program.run, *args],
        cwd=program.directory,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def jobs(program: Program, command: str, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send a batch of mint or verify jobs; return one result per job."""
    result = run(program, command, stdin=json.dumps({"jobs": batch}))
    if result.returncode != 0:
        pytest.fail(f"{program.name} {command} exited {result.returncode}:\n{result.stderr[-4000:]}")
    results: list[dict[str, Any]] = json.loads(result.stdout)["results"]
    assert len(results) == len(batch), (
        f"{program.name} {command}: {len(results)} results for {len(batch)} jobs"
    )
    return results
