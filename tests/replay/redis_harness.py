"""A throwaway redis-server for the tests: loopback only, no persistence, own port.

Imported by ``conftest.py`` (fixtures), by the tests and by the worker processes
of the concurrency tests. Without ``redis-server`` (or the ``redis`` client) the
Redis tests skip with a message; under ``CI=true`` they fail instead
(``scripts/ci-deps`` installs ``redis-server``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, NoReturn

import pytest

MISSING_SERVER = (
    "redis-server is not installed; run scripts/ci-deps (or apt-get install redis-server) "
    "to run the Redis replay store tests"
)
MISSING_CLIENT = "the redis client is not installed; run scripts/bootstrap (extra 'redis')"


def unavailable(message: str) -> NoReturn:
    """Skip locally, fail under CI: a CI run must never skip for a missing tool."""
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message, allow_module_level=True)


def require_redis_client() -> None:
    """Skip (locally) or fail (CI) the calling test module when the redis client is missing."""
    try:
        import redis  # noqa: F401
    except ImportError:
        unavailable(MISSING_CLIENT)


def redis_server_executable() -> str:
    """The path of ``redis-server``, or skip/fail with a message naming what is missing."""
    path = shutil.which("redis-server")
    if path is None:
        unavailable(MISSING_SERVER)
    return path


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1, which a test may stop and start again."""

    def __init__(self, executable: str, directory: Path, *, password: str | None = None) -> None:
        self.executable = executable
        self.directory = directory
        self.password = password
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log = directory / "redis.log"

    @property
    def url(self) -> str:
        """The URL a store connects to (with the password, if the server has one)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def url_with_password(self, password: str) -> str:
        """The server's URL carrying ``password`` (right or wrong)."""
        return f"redis://:{password}@127.0.0.1:{self.port}/0"

    def start(self, *, attempts: int = 3) -> None:
        """Start the server and return once it answers PING (a new port if the old one was taken)."""
        for attempt in range(attempts):
            command = [
                self.executable,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--dir", str(self.directory),
                "--logfile", "",
            ]  # fmt: skip
            if self.password:
                command += ["--requirepass", self.password]
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
            if self._wait_until_ready():
                return
            self.stop()
            if attempt + 1 < attempts:
                self.port = free_port()
        tail = self.log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"redis-server did not start on 127.0.0.1:{self.port}:\n{tail}")

    def _wait_until_ready(self, deadline: float = 10.0) -> bool:
        assert self.process is not None
        hello = b"PING\r\n" if not self.password else f"AUTH {self.password}\r\nPING\r\n".encode()
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if self.process.poll() is not None:
                return False
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock,
            ):
                sock.sendall(hello)
                answer = b""
                while b"+PONG" not in answer:
                    chunk = sock.recv(256)
                    if not chunk:
                        break
                    answer += chunk
                if b"+PONG" in answer:
                    return True
            time.sleep(0.02)
        return False

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 5 s); its data is gone."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGCONT)  # in case a test paused it
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open, nothing answers."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused server run again (SIGCONT)."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def admin(self, **options: Any) -> Any:
        """A ``redis.Redis`` client of the server for looking at keys; close it after use."""
        import redis

        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            password=self.password,
            decode_responses=True,
            socket_timeout=5,
            **options,
        )
