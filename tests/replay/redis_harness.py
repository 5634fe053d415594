"""Throwaway Redis deployments for the tests and benchmarks: loopback only, own ports.

One ``redis-server`` (:class:`RedisServer`, optionally with persistence), a Redis
Cluster of three primaries and three replicas made with ``redis-cli --cluster
create`` (:class:`RedisClusterDeployment`), and a primary with a replica and three
Sentinels (:class:`SentinelDeployment`). Every process is started and stopped here.

Imported by ``conftest.py`` (fixtures), by the tests, by the worker processes of
the concurrency and load tests, and by the benchmarks. Without ``redis-server``,
``redis-cli`` (or the ``redis`` client) the Redis tests skip with a message; under
``CI=true`` they fail instead (``scripts/ci-deps`` installs them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.ci import missing_tool
from tests.ports import free_port

MISSING_SERVER = (
    "redis-server is not installed; run scripts/ci-deps (or apt-get install redis-server) "
    "to run the Redis replay store tests"
)
MISSING_CLI = (
    "redis-cli is not installed; run scripts/ci-deps (or apt-get install redis-tools) "
    "to run the Redis Cluster tests"
)
MISSING_CLIENT = "the redis client is not installed; run scripts/bootstrap (extra 'redis')"


def require_redis_client() -> None:
    """Skip (locally) or fail (CI) the calling test module when the redis client is missing."""
    try:
        import redis  # noqa: F401
    except ImportError:
        missing_tool(MISSING_CLIENT)


def redis_server_executable() -> str:
    """The path of ``redis-server``, or skip/fail with a message naming what is missing."""
    path = shutil.which("redis-server")
    if path is None:
        missing_tool(MISSING_SERVER)
    return path


def redis_cli_executable() -> str:
    """The path of ``redis-cli`` (it creates clusters), or skip/fail naming what is missing."""
    path = shutil.which("redis-cli")
    if path is None:
        missing_tool(MISSING_CLI)
    return path


def free_cluster_port() -> int:
    """A free loopback port below 55536 whose cluster bus port (10000 higher) is free too."""
    import random

    for _ in range(200):
        port = random.randint(20000, 45000)
        try:
            for candidate in (port, port + 10000):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                    sock.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise RuntimeError("no free pair of loopback ports for a cluster node")


def stop_all(servers: Sequence[RedisServer]) -> None:
    """Stop several servers at once: SIGTERM to all, then wait for each."""
    for server in servers:
        if server.process is not None and server.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.process.pid, signal.SIGCONT)
            server.process.terminate()
    for server in servers:
        server.stop()


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1, which a test may stop and start again."""

    def __init__(
        self,
        executable: str,
        directory: Path,
        *,
        password: str | None = None,
        persistence: bool = False,
        options: Sequence[str] = (),
        port: int | None = None,
        cluster_port: bool = False,
    ) -> None:
        """``persistence``: an append-only file fsynced on every write (``appendfsync always``),
        so a restart keeps every acknowledged redemption. ``options``: more ``--name value``
        arguments (cluster mode, ``--replicaof``...). ``cluster_port``: a port a cluster node can use."""
        self.executable = executable
        self.directory = directory
        self.password = password
        self.persistence = persistence
        self.options = list(options)
        self._pick_port = free_cluster_port if cluster_port else free_port
        self.port = port if port is not None else self._pick_port()
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
                "--daemonize", "no",
                "--repl-diskless-sync-delay", "0",
                "--dir", str(self.directory),
                "--logfile", "",
            ]  # fmt: skip
            if self.persistence:
                command += ["--appendonly", "yes", "--appendfsync", "always"]
            else:
                command += ["--appendonly", "no"]
            command += self.options
            if self.password:
                command += ["--requirepass", self.password]
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
            if self._wait_until_ready():
                return
            self.stop()
            if attempt + 1 < attempts:
                self.port = self._pick_port()
        tail = self.log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"redis-server did not start on 127.0.0.1:{self.port}:\n{tail}")

    def start_sentinel(self, config: Path) -> None:
        """Start ``redis-server CONFIG --sentinel`` on this port; return once it answers PING."""
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [self.executable, str(config), "--sentinel"], stdout=log, stderr=subprocess.STDOUT
            )
        if not self._wait_until_ready():
            self.stop()
            tail = self.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"redis-sentinel did not start on 127.0.0.1:{self.port}:\n{tail}")

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

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would; nothing is flushed or handed over."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.kill()
        process.wait(timeout=5)

    @property
    def running(self) -> bool:
        """Whether the process is alive (paused counts as alive)."""
        return self.process is not None and self.process.poll() is None

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


def wait_until(condition: Callable[[], bool], *, timeout: float, what: str, step: float = 0.05) -> None:
    """Poll ``condition`` until it holds; ``RuntimeError`` naming ``what`` after ``timeout`` s."""
    end = time.monotonic() + timeout
    while True:
        with contextlib.suppress(Exception):
            if condition():
                return
        if time.monotonic() > end:
            raise RuntimeError(f"gave up after {timeout} s waiting for {what}")
        time.sleep(step)


def _info(port: int, section: str) -> dict[str, Any]:
    import redis

    with redis.Redis(host="127.0.0.1", port=port, socket_timeout=1, decode_responses=True) as client:
        info: dict[str, Any] = client.info(section)
    return info


def role(port: int) -> str:
    """``master`` or ``slave``, as the server at ``port`` sees itself."""
    return str(_info(port, "replication")["role"])


def replicas_in_sync(port: int, count: int) -> bool:
    """Whether the primary at ``port`` has ``count`` replicas online and caught up."""
    info = _info(port, "replication")
    if info.get("role") != "master":
        return False
    offset = int(info.get("master_repl_offset", 0))
    online = [
        value
        for key, value in info.items()
        if key.startswith("slave")
        and key[5:].isdigit()
        and isinstance(value, dict)
        and value.get("state") == "online"
        and int(value.get("offset", -1)) == offset
    ]
    return len(online) >= count


class RedisClusterDeployment:
    """A Redis Cluster on loopback: ``primaries`` primaries, one replica each, made by ``redis-cli``.

    ``node_timeout_ms`` is ``cluster-node-timeout``: how long a silent primary has
    before its replica takes over (a cluster failover takes about twice that).
    """

    def __init__(
        self, executable: str, cli: str, directory: Path, *, primaries: int = 3, node_timeout_ms: int = 1000
    ) -> None:
        self.cli = cli
        self.node_timeout_ms = node_timeout_ms
        options = [
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(node_timeout_ms),
            # A killed primary's replica takes over however far it lagged.
            "--cluster-replica-validity-factor", "0",
        ]  # fmt: skip
        self.nodes: list[RedisServer] = []
        for i in range(primaries * 2):
            node_dir = directory / f"node-{i}"
            node_dir.mkdir(parents=True)
            self.nodes.append(RedisServer(executable, node_dir, options=options, cluster_port=True))

    @property
    def url(self) -> str:
        """A node's URL: the cluster client learns the others from it."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def start(self, *, attempts: int = 2) -> None:
        """Start every node, join them with ``redis-cli --cluster create`` and wait until all is in sync.

        On a loaded machine a fresh cluster can fail to settle (a node marked failing
        while it is being created); then it is torn down and made again, on new ports,
        and the error of the last attempt names each node's view.
        """
        for attempt in range(attempts):
            try:
                self._create()
                return
            except RuntimeError as exc:
                report = f"{exc}\n{self._views()}"
                stop_all(self.nodes)
                if attempt + 1 == attempts:
                    raise RuntimeError(report) from None
                for node in self.nodes:
                    for leftover in node.directory.iterdir():
                        leftover.unlink()
                    node.port = free_cluster_port()

    def _views(self) -> str:
        lines = []
        for node in self.nodes:
            try:
                lines.append(f"{node.port}: {role(node.port)}, cluster_state {_info_cluster(node.port)}")
            except Exception as exc:
                lines.append(f"{node.port}: {type(exc).__name__}")
        return "\n".join(lines)

    def _create(self) -> None:
        for node in self.nodes:
            node.start()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        created = subprocess.run(
            [self.cli, "--cluster", "create", *addresses, "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{created.stdout}\n{created.stderr}")
        self.wait_healthy(timeout=30)

    def wait_healthy(self, *, timeout: float) -> None:
        """Until every running node says ``cluster_state:ok`` and each primary's replica is in sync."""

        def healthy() -> bool:
            running = [node for node in self.nodes if node.running]
            if not all(_info_cluster(node.port) == "ok" for node in running):
                return False
            primaries = self.primaries()
            return len(primaries) * 2 == len(running) and all(replicas_in_sync(p.port, 1) for p in primaries)

        wait_until(healthy, timeout=timeout, what="the Redis Cluster to be healthy")

    def primaries(self) -> list[RedisServer]:
        """The running nodes that are primaries now."""
        return [node for node in self.nodes if node.running and role(node.port) == "master"]

    def wait_failover(self, killed: RedisServer, *, timeout: float) -> None:
        """Until another node has taken over the slots of ``killed`` (the cluster answers again)."""
        survivors = [node for node in self.nodes if node.running]
        wait_until(
            lambda: (
                len(self.primaries()) == len(self.nodes) // 2
                and all(_info_cluster(node.port) == "ok" for node in survivors)
            ),
            timeout=timeout,
            what="the cluster failover",
        )
        del killed

    def stop(self) -> None:
        """Stop every node."""
        stop_all(self.nodes)


def _info_cluster(port: int) -> str:
    import redis

    with redis.Redis(host="127.0.0.1", port=port, socket_timeout=1, decode_responses=True) as client:
        text = str(client.execute_command("CLUSTER", "INFO"))
    for line in text.splitlines():
        if line.startswith("cluster_state:"):
            return line.split(":", 1)[1].strip()
    return ""


SERVICE = "mrtr-replay"


class SentinelDeployment:
    """A primary and a replica on loopback, watched by three Sentinels (quorum 2).

    ``down_after_ms`` is Sentinel's ``down-after-milliseconds``: how long the
    primary may be silent before the Sentinels fail over (a failover takes about
    that plus a second).
    """

    def __init__(
        self, executable: str, directory: Path, *, down_after_ms: int = 1500, persistence: bool = False
    ) -> None:
        self.executable = executable
        self.directory = directory
        self.down_after_ms = down_after_ms
        self.data = [
            RedisServer(executable, self._dir(f"data-{i}"), persistence=persistence) for i in range(2)
        ]
        self.data[1].options = ["--replicaof", "127.0.0.1", str(self.data[0].port)]
        self.sentinels: list[RedisServer] = []

    def _dir(self, name: str) -> Path:
        path = self.directory / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def sentinel_addresses(self) -> list[tuple[str, int]]:
        """``(host, port)`` of every Sentinel, as ``from_sentinel`` takes them."""
        return [("127.0.0.1", sentinel.port) for sentinel in self.sentinels]

    def start(self) -> None:
        """Start the primary, the replica and the Sentinels; return once all of them see each other."""
        for server in self.data:
            server.start()
        wait_until(lambda: replicas_in_sync(self.data[0].port, 1), timeout=20, what="the replica")
        for i in range(3):
            directory = self._dir(f"sentinel-{i}")
            port = free_port()
            config = directory / "sentinel.conf"  # Sentinel rewrites its own file: one each
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {directory}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {self.data[0].port} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}\n"
                f"sentinel failover-timeout {SERVICE} 10000\n"
                f"sentinel parallel-syncs {SERVICE} 1\n"
            )
            sentinel = RedisServer(self.executable, directory, port=port)
            sentinel.options = ["--sentinel"]
            sentinel.start_sentinel(config)
            self.sentinels.append(sentinel)
        wait_until(self._sentinels_agree, timeout=30, what="the Sentinels to see each other")

    def _sentinels_agree(self) -> bool:
        import redis

        for sentinel in self.sentinels:
            with redis.Redis(host="127.0.0.1", port=sentinel.port, socket_timeout=1) as client:
                master = client.sentinel_master(SERVICE)
                other, slaves = master.get("num-other-sentinels"), master.get("num-slaves")
                if int(other or 0) < 2 or int(slaves or 0) < 1:
                    return False
        return True

    def primary_port(self) -> int:
        """The primary's port, as the Sentinels name it now."""
        import redis

        with redis.Redis(host="127.0.0.1", port=self.sentinels[0].port, socket_timeout=1) as client:
            _, port = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
        return int(port)

    def primary(self) -> RedisServer:
        """The data server the Sentinels name as primary."""
        port = self.primary_port()
        return next(server for server in self.data if server.port == port)

    def wait_failover(self, old: RedisServer, *, timeout: float) -> RedisServer:
        """Until every Sentinel names another primary and that one answers as a primary; returns it."""

        def moved() -> bool:
            import redis

            for sentinel in self.sentinels:
                with redis.Redis(host="127.0.0.1", port=sentinel.port, socket_timeout=1) as client:
                    _, port = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
                if int(port) == old.port:
                    return False
            return role(self.primary_port()) == "master"

        wait_until(moved, timeout=timeout, what="the Sentinel failover")
        return self.primary()

    def rejoin(self, old: RedisServer) -> None:
        """Start a stopped data server again as a replica of the current primary (as an operator would)."""
        primary = self.primary()
        old.options = ["--replicaof", "127.0.0.1", str(primary.port)]
        old.start()

        def settled() -> bool:
            import redis

            for sentinel in self.sentinels:
                with redis.Redis(host="127.0.0.1", port=sentinel.port, socket_timeout=1) as client:
                    replicas = client.sentinel_slaves(SERVICE)
                if not any(
                    r["port"] == old.port and not r.get("is_sdown") and not r.get("is_disconnected")
                    for r in replicas
                ):
                    return False
            return replicas_in_sync(primary.port, 1)

        wait_until(settled, timeout=30, what="the rejoined replica")

    def stop(self) -> None:
        """Stop the Sentinels first (no failover while the data servers stop), then the data servers."""
        stop_all(self.sentinels)
        stop_all(self.data)
