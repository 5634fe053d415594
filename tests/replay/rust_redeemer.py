"""The Rust crate's line redeemer (``mrtr-state-redeem-lines``) for the replay tests, built.

The binary is built with every feature into ``rust/target`` (or ``CARGO_TARGET_DIR``), as scripts/check-rust
builds the crate, so after that check the build is a no-op. Its line protocol is Go's ``redeemlines``:
``KEY EXPIRES_AT`` in, one JSON answer out, ``{"first": true|false}`` or ``{"error": "..."}``; the tests
drive it with :class:`tests.replay.line_redeemer.LineRedeemer`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.ci import missing_tool
from tests.interop.harness import ROOT

#: How long a build may take (a cold build of the crate and the redis client on two shared cores).
BUILD_TIMEOUT_S = 900


def rust_redeemer_command() -> list[str]:
    """The command of the built redeemer; skips (or fails under CI=true) without cargo."""
    if shutil.which("cargo") is None:
        missing_tool("cargo not found on PATH; the Rust redeemer cannot be built")
    build = subprocess.run(
        ["cargo", "build", "--locked", "--all-features", "--bin", "mrtr-state-redeem-lines"],
        cwd=ROOT / "rust",
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    if build.returncode != 0:
        pytest.fail(f"cargo build --bin mrtr-state-redeem-lines failed:\n{build.stderr[-4000:]}")
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "rust" / "target"))
    return [str(target / "debug" / "mrtr-state-redeem-lines")]
