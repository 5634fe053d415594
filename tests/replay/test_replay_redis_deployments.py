"""The stores on the deployments fleets run: a Redis Cluster and a primary with a replica behind Sentinel.

Every deployment is real (Debian's redis-server on loopback, started and stopped
by the fixtures); the durability option (``wait_replicas``) accepts only writes a
replica acknowledged and refuses, never accepts, when none does.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.replay.redis_harness import (
    SERVICE,
    RedisClusterDeployment,
    RedisServer,
    SentinelDeployment,
    require_redis_client,
)

require_redis_client()

import redis  # noqa: E402
import redis.cluster  # noqa: E402

from mrtr_state import InvalidRequestState, Keyring, ReplayStoreError, StateSealer  # noqa: E402
from mrtr_state.replay.replay_redis import AsyncRedisReplayStore, RedisReplayStore  # noqa: E402
from tests.replay.redemption import ISSUER, REQUEST, STATE, outcome, outcome_async  # noqa: E402


def dbsize(port: int) -> int:
    """How many keys the node at ``port`` holds (a replica too)."""
    with redis.Redis(port=port, socket_timeout=5) as client:
        return int(client.dbsize())


def later() -> int:
    return int(time.time()) + 60


def test_the_cluster_store_opens_each_token_once_across_all_three_primaries(
    redis_cluster: RedisClusterDeployment,
) -> None:
    with RedisReplayStore.from_cluster(redis_cluster.url) as store:
        sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
        tokens = [sealer.seal(STATE, **REQUEST) for _ in range(60)]
        assert [outcome(sealer, token) for token in tokens] == ["opened"] * 60
        assert [outcome(sealer, token) for token in tokens] == ["replayed"] * 60
        keys = {store.redis_key(f"{ISSUER}#{i}") for i in range(60)}
    # The ids really are spread over the three shards (one key per command).
    written = [dbsize(p.port) for p in redis_cluster.primaries()]
    assert sum(written) == 60
    assert all(count > 0 for count in written)
    assert len(keys) == 60


def test_the_cluster_store_with_wait_1_accepts_only_replicated_redemptions(
    redis_cluster: RedisClusterDeployment,
) -> None:
    with RedisReplayStore.from_cluster(redis_cluster.url, wait_replicas=1, wait_timeout=0.5) as store:
        results = [store.redeem(f"id-{i}", expires_at=later()) for i in range(30)]
        assert results == [True] * 30
        assert [store.redeem(f"id-{i}", expires_at=later()) for i in range(30)] == [False] * 30
        # Each accepted id is on its primary's replica too.
        for node in redis_cluster.nodes:
            if node not in redis_cluster.primaries():
                assert dbsize(node.port) > 0


def test_the_cluster_store_with_wait_2_refuses_when_only_one_replica_exists(
    redis_cluster: RedisClusterDeployment,
) -> None:
    with RedisReplayStore.from_cluster(redis_cluster.url, wait_replicas=2, wait_timeout=0.2) as store:
        with pytest.raises(ReplayStoreError) as caught:
            store.redeem("id", expires_at=later())
        assert str(caught.value) == (
            "Redis did not confirm the redemption on 2 replica(s) in time (1 acknowledged)"
        )
        # The write itself survived on the primary: the retry is a replay, never a second yes.
        assert store.redeem("id", expires_at=later()) is False


def test_the_async_cluster_store_opens_each_token_once_with_and_without_wait(
    redis_cluster: RedisClusterDeployment,
) -> None:
    async def run(wait: int) -> tuple[list[Any], list[Any]]:
        async with AsyncRedisReplayStore.from_cluster(redis_cluster.url, wait_replicas=wait) as store:
            sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
            tokens = [sealer.seal(STATE, **REQUEST) for _ in range(20)]
            first = await asyncio.gather(
                *(sealer.open_async(t, **REQUEST, consume=True) for t in tokens), return_exceptions=True
            )
            second = await asyncio.gather(
                *(sealer.open_async(t, **REQUEST, consume=True) for t in tokens), return_exceptions=True
            )
            return first, second

    for wait in (0, 1):
        first, second = asyncio.run(run(wait))
        assert first == [STATE] * 20
        assert [getattr(r, "reason", r) for r in second] == ["replayed"] * 20


def test_cluster_stores_given_several_start_up_nodes_work_when_the_first_died_before_first_use(
    redis_cluster: RedisClusterDeployment,
) -> None:
    first, *others = redis_cluster.primaries()
    urls = [first.url, *(node.url for node in others)]

    async def run() -> tuple[list[Any], list[Any]]:
        # The async client connects on its first redemption, after the first-named
        # node has died and the cluster has failed over.
        async with AsyncRedisReplayStore.from_cluster(urls) as store:
            await asyncio.to_thread(kill_and_fail_over)
            sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
            tokens = [sealer.seal(STATE, **REQUEST) for _ in range(20)]
            first_pass = [await outcome_async(sealer, t) for t in tokens]
            return first_pass, [await outcome_async(sealer, t) for t in tokens]

    def kill_and_fail_over() -> None:
        first.kill()
        redis_cluster.wait_failover(first, timeout=60)

    first_pass, second_pass = asyncio.run(run())
    assert first_pass == ["opened"] * 20
    assert second_pass == ["replayed"] * 20
    # The sync store connects when it is made: the dead first-named node does not stop it.
    with RedisReplayStore.from_cluster(urls) as store:
        sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
        tokens = [sealer.seal(STATE, **REQUEST) for _ in range(20)]
        assert [outcome(sealer, t) for t in tokens] == ["opened"] * 20
        assert [outcome(sealer, t) for t in tokens] == ["replayed"] * 20


def test_from_cluster_takes_one_url_or_several_differing_only_in_host_and_port() -> None:
    with pytest.raises(TypeError, match="non-empty sequence"):
        RedisReplayStore.from_cluster([])
    with pytest.raises(ValueError, match="not unix://"):
        AsyncRedisReplayStore.from_cluster(["unix:///tmp/redis.sock"])
    for other in (
        "redis://:0th3r@127.0.0.1:2/0",
        "rediss://:s3cret@127.0.0.1:2/0",
        "redis://u:s3cret@127.0.0.1:2/0",
    ):
        for builder in (RedisReplayStore.from_cluster, AsyncRedisReplayStore.from_cluster):
            with pytest.raises(ValueError, match="another host and port") as caught:
                builder(["redis://:s3cret@127.0.0.1:1/0", other])  # type: ignore[operator]
            assert "s3cret" not in str(caught.value)
            assert "0th3r" not in str(caught.value)


def test_the_sentinel_store_writes_to_the_primary_the_sentinels_name(
    redis_sentinel: SentinelDeployment,
) -> None:
    with RedisReplayStore.from_sentinel(redis_sentinel.sentinel_addresses, SERVICE) as store:
        sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
        token = sealer.seal(STATE, **REQUEST)
        assert outcome(sealer, token) == "opened"
        assert outcome(sealer, token) == "replayed"
    assert dbsize(redis_sentinel.primary().port) == 1


def test_the_sentinel_store_follows_a_failover_and_wait_1_keeps_every_redemption(
    redis_sentinel: SentinelDeployment,
) -> None:
    store = RedisReplayStore.from_sentinel(
        redis_sentinel.sentinel_addresses, SERVICE, wait_replicas=1, timeout=1.0, wait_timeout=0.2
    )
    with store:
        assert [store.redeem(f"id-{i}", expires_at=later()) for i in range(10)] == [True] * 10
        old = redis_sentinel.primary()
        old.kill()
        redis_sentinel.wait_failover(old, timeout=30)
        # The promoted replica had acknowledged every accepted id: all are replays.
        # (Each replay waits out wait_timeout here: WAIT runs after every SET, and no replica is left.)
        replays = []
        for i in range(10):
            try:
                replays.append(store.redeem(f"id-{i}", expires_at=later()))
            except ReplayStoreError:
                replays.append("refused")  # the first call after the switch may meet the old address
        assert True not in replays
        # With no replica left, WAIT 1 cannot be met: refused, never accepted.
        with pytest.raises(ReplayStoreError, match="did not confirm the redemption on 1 replica"):
            store.redeem("new-id", expires_at=later())
        redis_sentinel.rejoin(old)
        accepted = []
        for i in range(10):  # the Sentinels may still be reconfiguring the rejoined replica
            try:
                accepted.append(store.redeem(f"another-id-{i}", expires_at=later()))
                break
            except ReplayStoreError:
                time.sleep(0.2)
        assert accepted == [True]


def test_the_async_sentinel_store_opens_each_token_once(redis_sentinel: SentinelDeployment) -> None:
    async def run() -> tuple[list[Any], list[Any]]:
        async with AsyncRedisReplayStore.from_sentinel(
            redis_sentinel.sentinel_addresses, SERVICE, wait_replicas=1
        ) as store:
            sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
            tokens = [sealer.seal(STATE, **REQUEST) for _ in range(20)]
            calls = [sealer.open_async(t, **REQUEST, consume=True) for t in tokens * 2]
            results = await asyncio.gather(*calls, return_exceptions=True)
            return results[:20], results[20:]

    first, second = asyncio.run(run())
    outcomes = [*first, *second]
    assert outcomes.count(STATE) == 20
    assert [getattr(r, "reason", None) for r in outcomes if r != STATE] == ["replayed"] * 20


def test_wait_1_on_a_redis_without_replicas_refuses_every_redemption(redis_server: RedisServer) -> None:
    with RedisReplayStore.from_url(redis_server.url, wait_replicas=1, wait_timeout=0.1) as store:
        sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
        token = sealer.seal(STATE, **REQUEST)
        with pytest.raises(InvalidRequestState) as caught:
            sealer.open(token, **REQUEST, consume=True)
        assert caught.value.reason == "store_unavailable"
        assert caught.value.detail == (
            "Redis did not confirm the redemption on 1 replica(s) in time (0 acknowledged)"
        )
        assert outcome(sealer, token) == "replayed"


def test_the_builders_refuse_a_wait_timeout_not_shorter_than_the_timeout() -> None:
    with pytest.raises(ValueError, match="wait_timeout must be less than timeout"):
        RedisReplayStore.from_url("redis://127.0.0.1:1/0", wait_replicas=1, timeout=0.5, wait_timeout=0.5)
    with pytest.raises(ValueError, match="wait_timeout must be less than timeout"):
        AsyncRedisReplayStore.from_sentinel(
            [("127.0.0.1", 1)], SERVICE, wait_replicas=1, timeout=0.2, wait_timeout=1
        )
    with pytest.raises(TypeError, match="wait_replicas must be an int"):
        RedisReplayStore.from_url("redis://127.0.0.1:1/0", wait_replicas=True)
    with pytest.raises(ValueError, match="wait_replicas must be from 0 to 100"):
        RedisReplayStore.from_url("redis://127.0.0.1:1/0", wait_replicas=-1)
    with pytest.raises(TypeError, match="sentinels must be a non-empty sequence"):
        RedisReplayStore.from_sentinel("127.0.0.1:26379", SERVICE)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="each Sentinel must be a"):
        RedisReplayStore.from_sentinel([("127.0.0.1", "26379")], SERVICE)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="service_name"):
        RedisReplayStore.from_sentinel([("127.0.0.1", 26379)], "")


def test_from_cluster_without_a_reachable_node_names_no_address() -> None:
    with pytest.raises(ReplayStoreError) as caught:
        RedisReplayStore.from_cluster("redis://:s3cret@127.0.0.1:1", timeout=0.2)
    assert str(caught.value).startswith("could not reach the Redis Cluster (")
    assert "127.0.0.1" not in str(caught.value)
    assert "s3cret" not in str(caught.value)


def test_the_builders_clients_never_retry(
    redis_cluster: RedisClusterDeployment, redis_sentinel: SentinelDeployment
) -> None:
    with RedisReplayStore.from_cluster(redis_cluster.url) as store:
        client = store._client
        assert isinstance(client, redis.cluster.RedisCluster)
        assert client.retry.get_retries() == 0
    with RedisReplayStore.from_sentinel(redis_sentinel.sentinel_addresses, SERVICE) as store:
        kwargs = store._client.connection_pool.connection_kwargs
        assert kwargs["retry"].get_retries() == 0
        assert kwargs["socket_timeout"] == kwargs["socket_connect_timeout"] == 1.0


def test_the_repr_names_the_durability_but_no_address(redis_sentinel: SentinelDeployment) -> None:
    with RedisReplayStore.from_sentinel(
        redis_sentinel.sentinel_addresses, SERVICE, wait_replicas=1, password=None
    ) as store:
        assert repr(store) == "RedisReplayStore(prefix='mrtr-state:jti:', wait_replicas=1)"
        assert store.wait_replicas == 1


def test_the_sentinel_store_logs_in_as_an_acl_user_with_only_set_and_wait(
    redis_sentinel: SentinelDeployment,
) -> None:
    for server in redis_sentinel.data:  # ACLs do not replicate: every node gets the user
        with redis.Redis(port=server.port, socket_timeout=5) as admin:
            admin.execute_command("ACL", "SETUSER", "mrtr", "on", ">pw-3c1f", "~mrtr-state:jti:*", "-@all")
            admin.execute_command("ACL", "SETUSER", "mrtr", "+set", "+wait")
    addresses = redis_sentinel.sentinel_addresses
    with RedisReplayStore.from_sentinel(
        addresses, SERVICE, username="mrtr", password="pw-3c1f", wait_replicas=1
    ) as store:
        assert store.redeem("id", expires_at=later()) is True
        assert store.redeem("id", expires_at=later()) is False
    with RedisReplayStore.from_sentinel(addresses, SERVICE, username="mrtr", password="wrong") as store:
        with pytest.raises(ReplayStoreError) as caught:
            store.redeem("other", expires_at=later())
        assert "wrong" not in str(caught.value)
        assert str(caught.value).startswith("Redis could not record the redemption (")
