"""A long-lived line redeemer process of the replay tests, whatever its language.

The npm (``typescript/runtimes/redeem-lines.mjs``), Go (``redeemlines``), Java (``RedeemLines``) and Rust
(``mrtr-state-redeem-lines``) redeemers speak one line protocol: ``KEY EXPIRES_AT`` in, one JSON answer
out, ``{"first": true|false}`` or ``{"error": "..."}``. :class:`LineRedeemer` drives one of them: its
stderr goes to a log file, whose end every failure quotes, and every answer is awaited at most
``timeout`` seconds, so a store that hangs fails the test instead of stalling it.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import time
from pathlib import Path
from typing import Any

#: How long an answer is awaited by default (a store's own timeouts are far shorter).
ANSWER_TIMEOUT_S = 30.0


class LineRedeemer:
    """One redeemer process: a key in, its answer out."""

    def __init__(self, command: list[str], log: Path) -> None:
        self.log = log
        with log.open("wb") as stderr:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True
            )
        self.selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def redeem(
        self, key: str, *, expires_at: int | None = None, timeout: float = ANSWER_TIMEOUT_S
    ) -> dict[str, Any]:
        """The store's answer for ``key`` (retained until ``expires_at``, default ten minutes from now)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        until = expires_at if expires_at is not None else int(time.time()) + 600
        self.process.stdin.write(f"{key} {until}\n")
        self.process.stdin.flush()
        if not self.selector.select(timeout=timeout):
            raise AssertionError(f"no answer within {timeout} s; its log:\n{self.tail()}")
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError(f"the redeemer ended ({self.process.poll()}); its log:\n{self.tail()}")
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
