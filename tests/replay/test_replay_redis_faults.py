"""Faults against a real redis-server: every failure refuses (store_unavailable), never accepts.

Redis stopped, paused, read-only or out of memory: refusals only; Redis back:
the next redemption works; and an id is gone from Redis once its token expired.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from tests.replay.redis_harness import RedisServer, require_redis_client

require_redis_client()

import redis  # noqa: E402

from mrtr_state import InvalidRequestState, Keyring, ReplayStoreError, StateSealer  # noqa: E402
from mrtr_state.replay.replay_redis import AsyncRedisReplayStore, RedisReplayStore  # noqa: E402
from tests.replay.redemption import ISSUER, REQUEST, STATE, outcome  # noqa: E402


def test_redis_stopped_mid_run_refuses_every_redemption_and_recovers_when_back(
    redis_server: RedisServer,
) -> None:
    with RedisReplayStore.from_url(redis_server.url) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        redeemed, *fresh = [sealer.seal(STATE, **REQUEST) for _ in range(6)]
        assert outcome(sealer, redeemed) == "opened"

        redis_server.stop()
        during = [outcome(sealer, token) for token in [redeemed, *fresh, *fresh]]
        assert during == ["store_unavailable"] * len(during)

        redis_server.start()  # same port, empty (no persistence)
        assert outcome(sealer, fresh[0]) == "opened"
        assert outcome(sealer, fresh[0]) == "replayed"
        assert [outcome(sealer, token) for token in fresh[1:]] == ["opened"] * 4


def test_an_outage_is_logged_once_with_its_cause_and_its_end_once(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 31: one WARNING when the outage begins, one INFO when Redis answers; no host, key or token."""
    caplog.set_level(logging.INFO, logger="mrtr_state.replay.replay_redis")
    with RedisReplayStore.from_url(redis_server.url) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        tokens = [sealer.seal(STATE, **REQUEST) for _ in range(6)]
        assert outcome(sealer, tokens[0]) == "opened"
        assert caplog.records == []
        redis_server.stop()
        assert [outcome(sealer, token) for token in tokens[1:4]] == ["store_unavailable"] * 3
        redis_server.start()
        assert [outcome(sealer, token) for token in tokens[4:]] == ["opened"] * 2
    lines = [(record.levelno, record.getMessage()) for record in caplog.records]
    assert [level for level, _ in lines] == [logging.WARNING, logging.INFO], lines
    assert "unavailable: Redis could not record the redemption (ConnectionError)" in lines[0][1]
    assert lines[1][1] == "mrtr-state: the Redis replay store answers again"
    port = redis_server.url.rsplit(":", 1)[-1].split("/")[0]
    for _, message in lines:
        assert port not in message
        assert "127.0.0.1" not in message
        assert not any(token in message or token.split(".")[2] in message for token in tokens)


def test_async_redis_stopped_mid_run_refuses_every_redemption_and_recovers_when_back(
    redis_server: RedisServer,
) -> None:
    async def run() -> tuple[list[Any], list[Any]]:
        async with AsyncRedisReplayStore.from_url(redis_server.url) as store:
            sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
            tokens = [sealer.seal(STATE, **REQUEST) for _ in range(8)]
            assert await sealer.open_async(tokens[0], **REQUEST, consume=True) == STATE
            redis_server.stop()
            calls = [sealer.open_async(t, **REQUEST, consume=True) for t in tokens]
            during = await asyncio.gather(*calls, return_exceptions=True)
            redis_server.start()
            calls = [sealer.open_async(t, **REQUEST, consume=True) for t in tokens[1:]]
            after = await asyncio.gather(*calls, return_exceptions=True)
            return during, after

    during, after = asyncio.run(run())
    assert [getattr(r, "reason", r) for r in during] == ["store_unavailable"] * 8
    assert after == [STATE] * 7


def test_a_paused_redis_is_refused_after_the_timeout_and_never_accepted(redis_server: RedisServer) -> None:
    with RedisReplayStore.from_url(redis_server.url, timeout=0.2) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        before, during = sealer.seal(STATE, **REQUEST), sealer.seal(STATE, **REQUEST)
        assert outcome(sealer, before) == "opened"
        redis_server.pause()
        try:
            with pytest.raises(InvalidRequestState) as caught:
                sealer.open(during, **REQUEST, consume=True)
        finally:
            redis_server.resume()
        assert caught.value.reason == "store_unavailable"
        assert caught.value.detail == "Redis could not record the redemption (TimeoutError)"
        # Redis ran the stalled SET once it woke up: the token counts as redeemed,
        # which fails closed (the client sees 'replayed' on its retry).
        assert outcome(sealer, during) == "replayed"
        assert outcome(sealer, sealer.seal(STATE, **REQUEST)) == "opened"


def test_a_read_only_replica_refuses_with_its_error_code(redis_server: RedisServer) -> None:
    # After a failover a store may point at a replica: writes fail, nothing is accepted.
    admin = redis_server.admin()
    admin.execute_command("REPLICAOF", "127.0.0.1", "1")  # a primary that never answers
    with RedisReplayStore.from_url(redis_server.url) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        with pytest.raises(InvalidRequestState) as caught:
            sealer.open(sealer.seal(STATE, **REQUEST), **REQUEST, consume=True)
    admin.execute_command("REPLICAOF", "NO", "ONE")
    admin.close()
    assert caught.value.reason == "store_unavailable"
    assert caught.value.detail == "Redis refused the redemption (ReadOnlyError)"


def test_a_redis_out_of_memory_refuses_with_its_error_code(redis_server: RedisServer) -> None:
    admin = redis_server.admin()
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", "1")
    with RedisReplayStore.from_url(redis_server.url) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        with pytest.raises(InvalidRequestState) as caught:
            sealer.open(sealer.seal(STATE, **REQUEST), **REQUEST, consume=True)
    admin.close()
    assert caught.value.reason == "store_unavailable"
    assert caught.value.detail == "Redis refused the redemption (OutOfMemoryError)"


def test_an_id_is_gone_from_redis_once_its_token_has_expired(redis_server: RedisServer) -> None:
    # A real one-second lifetime: Redis expires keys by its own clock, so this is
    # the one test that waits (about a second).
    admin = redis_server.admin()
    with RedisReplayStore.from_url(redis_server.url) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, ttl=1, replay_store=store)
        token = sealer.seal(STATE, **REQUEST)
        exp = int(time.time()) + 1  # at most this (iat was taken first)
        if outcome(sealer, token) == "expired":
            pytest.fail("the one-second token expired before it was redeemed; the machine is too slow")
        (key,) = admin.keys("*")
        assert 0 < admin.pttl(key) <= 1000  # it expires, and no later than exp
        assert outcome(sealer, token) in {"replayed", "expired"}
        while time.time() < exp + 0.5:
            time.sleep(0.05)
        assert admin.exists(key) == 0
        assert admin.dbsize() == 0
        assert outcome(sealer, token) == "expired"
    admin.close()


def test_an_error_reply_refuses_naming_redis_error_code(redis_server: RedisServer) -> None:
    # A retention past what Redis can represent: Redis answers "ERR value is not an integer or out of range".
    with RedisReplayStore.from_url(redis_server.url) as store, pytest.raises(ReplayStoreError) as caught:
        store.redeem("k", expires_at=2**62)
    assert str(caught.value) == "Redis refused the redemption (ResponseError ERR)"


def test_an_error_reply_redis_py_has_no_class_for_keeps_its_code(redis_server: RedisServer) -> None:
    class Misconfigured(redis.Redis):
        def set(self, *args: Any, **kwargs: Any) -> Any:
            raise redis.exceptions.ResponseError("MISCONF Redis is configured to save RDB snapshots, but ...")

    client = Misconfigured(host="127.0.0.1", port=redis_server.port)
    with pytest.raises(ReplayStoreError) as caught:
        RedisReplayStore(client).redeem("k", expires_at=int(time.time()) + 60)
    client.close()
    assert str(caught.value) == "Redis refused the redemption (ResponseError MISCONF)"
