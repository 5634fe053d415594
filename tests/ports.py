"""Loopback ports for the tests that start a server: a free one, and waiting until a server listens on it."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(
    port: int,
    process: subprocess.Popen[Any],
    *,
    bound_s: float,
    what: str = "the server",
    log: Callable[[], str] = lambda: "",
) -> None:
    """Return once something accepts connections on loopback ``port``.

    Fails the test, quoting ``log()`` (the end of the server's output), as soon as ``process`` exits, and
    after ``bound_s`` seconds without a listener: a bound on waiting for a cold start on busy cores, not a
    claim about speed.
    """
    deadline = time.monotonic() + bound_s
    while True:
        assert process.poll() is None, f"{what} exited ({process.returncode}): {log()}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"{what} did not listen within {bound_s:g} s: {log()}"
            time.sleep(0.1)
