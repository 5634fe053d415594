"""Fixtures of the replay tests: Redis deployments per test (the clock comes from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.replay.redis_harness import (
    RedisClusterDeployment,
    RedisServer,
    SentinelDeployment,
    redis_cli_executable,
    redis_server_executable,
    require_redis_client,
)


@pytest.fixture
def start_redis(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """Start redis-servers for this test (``start_redis(password=...)``); all stop at its end."""
    require_redis_client()
    executable = redis_server_executable()
    servers: list[RedisServer] = []

    def start(**options: Any) -> RedisServer:
        directory = tmp_path / f"redis-{len(servers)}"
        directory.mkdir()
        server = RedisServer(executable, directory, **options)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def redis_server(start_redis: Callable[..., RedisServer]) -> RedisServer:
    """A fresh, empty redis-server on a free loopback port, stopped after the test."""
    return start_redis()


@pytest.fixture
def redis_cluster(tmp_path: Path) -> Iterator[RedisClusterDeployment]:
    """A fresh Redis Cluster (three primaries, three replicas) on loopback, stopped after the test."""
    require_redis_client()
    cluster = RedisClusterDeployment(redis_server_executable(), redis_cli_executable(), tmp_path / "cluster")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def redis_sentinel(tmp_path: Path) -> Iterator[SentinelDeployment]:
    """A fresh primary, replica and three Sentinels on loopback, stopped after the test."""
    require_redis_client()
    deployment = SentinelDeployment(redis_server_executable(), tmp_path / "sentinel")
    try:
        deployment.start()
        yield deployment
    finally:
        deployment.stop()
