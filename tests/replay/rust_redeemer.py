"""The Rust crate's line redeemer (``mrtr-state-redeem-lines``) for the replay tests: built, and driven.

The binary is built with every feature into ``rust/target`` (or ``CARGO_TARGET_DIR``), as scripts/check-rust
builds the crate, so after that check the build is a no-op. Its line protocol is Go's ``redeemlines``:
``KEY EXPIRES_AT`` in, one JSON answer out, ``{"first": true|false}`` or ``{"error": "..."}``.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

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


class RustRedeemer:
    """One long-lived redeemer process: a key in, its answer out (each awaited at most ``timeout`` s)."""

    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        with log.open("wb") as stderr:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True
            )
        self.selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def redeem(self, key: str, *, expires_at: int | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """The store's answer for ``key`` (retained until ``expires_at``, default ten minutes from now)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        until = expires_at if expires_at is not None else int(time.time()) + 600
        self.process.stdin.write(f"{key} {until}\n")
        self.process.stdin.flush()
        if not self.selector.select(timeout=timeout):
            raise AssertionError(f"the Rust redeemer gave no answer within {timeout} s: {self.tail()}")
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the Rust redeemer ended ({self.process.poll()}): {self.tail()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def tail(self) -> str:
        """The end of its stderr."""
        return self.log.read_text(errors="replace")[-3000:]

    def close(self) -> None:
        """End it (the end of its stdin), killing it if it does not end within 10 s."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.selector.close()
        if self.process.stdout is not None:
            self.process.stdout.close()
