"""Start the example server as a process on a free loopback port, and always stop it.

Used by the demo (`examples/demo.py`) and by the tests (`tests/mcp/conftest.py`), so that
both start and stop the server the same way and leave nothing running.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SERVER = Path(__file__).resolve().parent
_LISTENING = re.compile(r"listening on (http://\S+/mcp)")


class ServerStartError(RuntimeError):
    """The example server printed no URL; the message is its log."""


@dataclass
class RunningServer:
    """An example server process: its URL and its log (stderr)."""

    url: str
    process: subprocess.Popen[str]
    log_path: Path

    def log(self) -> str:
        """Everything the server wrote to stderr so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@contextlib.contextmanager
def running_server(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    command: Sequence[str] | None = None,
) -> Iterator[RunningServer]:
    """Start ``python examples/server --port 0 ARGS``; stop it on exit, whatever happens.

    ``command`` starts another server that prints the same ``listening on <url>``
    line (the TypeScript example: ``("node", "examples/server-ts/dist/main.js")``);
    ``--port 0 ARGS`` follow it. Raises ServerStartError when the server prints no
    URL within ``timeout`` seconds.
    """
    program = [sys.executable, str(SERVER)] if command is None else list(command)
    with tempfile.TemporaryDirectory(prefix="mrtr-example-") as tmp:
        log_path = Path(tmp) / "stderr.log"
        with log_path.open("w", encoding="utf-8") as log:
            process = subprocess.Popen(  # noqa: S603  (our own interpreter and example, or a command the caller gives)
                [*program, "--port", "0", *args],
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            )
        try:
            stdout = process.stdout
            if stdout is None:
                raise ServerStartError("no standard output to read the URL from")
            lines: queue.Queue[str] = queue.Queue()

            def pump() -> None:
                for line in stdout:
                    lines.put(line)

            threading.Thread(target=pump, daemon=True).start()
            try:
                first = lines.get(timeout=timeout)
            except queue.Empty:
                first = ""
            found = _LISTENING.search(first)
            if not found:
                raise ServerStartError(log_path.read_text(encoding="utf-8", errors="replace"))
            yield RunningServer(found.group(1), process, log_path)
        finally:
            stop(process)


def stop(process: subprocess.Popen[str]) -> None:
    """Stop a server process: SIGTERM (uvicorn shuts down gracefully), then SIGKILL if it hangs."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
    if process.stdout is not None:
        process.stdout.close()
