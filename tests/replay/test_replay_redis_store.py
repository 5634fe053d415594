"""RedisReplayStore and AsyncRedisReplayStore against a real redis-server: one atomic SET NX PX."""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from typing import Any

import pytest

from tests.conftest import Clock
from tests.replay.redis_harness import RedisServer, require_redis_client

require_redis_client()

import redis  # noqa: E402
import redis.asyncio  # noqa: E402

from mrtr_state import (  # noqa: E402
    AsyncReplayStore,
    InvalidRequestState,
    Keyring,
    ReplayStore,
    ReplayStoreError,
    StateSealer,
    decode_unverified,
)
from mrtr_state.replay import replay_key  # noqa: E402
from mrtr_state.replay.replay_redis import DEFAULT_PREFIX, AsyncRedisReplayStore, RedisReplayStore  # noqa: E402

ISSUER = "https://files.example.com"
REQUEST: dict[str, Any] = {"user": "alice", "tool": "deploy", "arguments": {"env": "prod"}}
STATE = {"step": "confirm"}


def reason_of(call: Any) -> str:
    with pytest.raises(InvalidRequestState) as caught:
        call()
    return caught.value.reason


def test_a_consumed_token_opens_once_and_is_replayed_after(redis_server: RedisServer) -> None:
    with RedisReplayStore.from_url(redis_server.url) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        token = sealer.seal(STATE, **REQUEST)
        assert sealer.open(token, **REQUEST, consume=True) == STATE
        assert reason_of(lambda: sealer.open(token, **REQUEST, consume=True)) == "replayed"


def test_a_replica_with_its_own_client_sees_the_redemption(redis_server: RedisServer) -> None:
    ring = Keyring.generate("EdDSA")
    with (
        RedisReplayStore.from_url(redis_server.url) as store_a,
        RedisReplayStore.from_url(redis_server.url) as store_b,
    ):
        replica_a = StateSealer(ring, issuer=ISSUER, replay_store=store_a)
        replica_b = StateSealer(ring, issuer=ISSUER, replay_store=store_b)
        token = replica_a.seal(STATE, **REQUEST)
        assert replica_a.open(token, **REQUEST, consume=True) == STATE
        assert reason_of(lambda: replica_b.open(token, **REQUEST, consume=True)) == "replayed"


def test_the_key_is_the_prefix_and_the_hash_of_the_issuer_scoped_jti(redis_server: RedisServer) -> None:
    admin = redis_server.admin()
    with RedisReplayStore.from_url(redis_server.url) as store:
        sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, replay_store=store)
        token = sealer.seal(STATE, **REQUEST)
        sealer.open(token, **REQUEST, consume=True)
        jti = decode_unverified(token)[1]["jti"]
        key = store.redis_key(replay_key(ISSUER, jti))
        assert admin.keys("*") == [key]
        assert key.startswith(DEFAULT_PREFIX)
        assert len(key) == len(DEFAULT_PREFIX) + 43
        assert jti not in key
        assert "example" not in key
        assert admin.get(key) == "1"
    admin.close()


def test_keys_have_one_length_however_long_the_issuer(redis_server: RedisServer) -> None:
    with RedisReplayStore.from_url(redis_server.url) as store:
        short = store.redis_key(replay_key("s", "A" * 22))
        long = store.redis_key(replay_key("https://" + "x" * 10_000 + ".example.com", "A" * 22))
        assert len(short) == len(long) == len(DEFAULT_PREFIX) + 43


def test_the_same_jti_under_two_issuers_is_two_keys(redis_server: RedisServer) -> None:
    with RedisReplayStore.from_url(redis_server.url) as store:
        assert store.redeem(replay_key(ISSUER, "A" * 22), expires_at=int(time.time()) + 60)
        assert store.redeem(
            replay_key("https://other.example.com", "A" * 22), expires_at=int(time.time()) + 60
        )


def test_applications_with_different_prefixes_do_not_see_each_others_redemptions(
    redis_server: RedisServer,
) -> None:
    with (
        RedisReplayStore.from_url(redis_server.url, prefix="billing:") as billing,
        RedisReplayStore.from_url(redis_server.url, prefix="deploys:") as deploys,
    ):
        key, expires_at = replay_key(ISSUER, "A" * 22), int(time.time()) + 60
        assert billing.redeem(key, expires_at=expires_at) is True
        assert deploys.redeem(key, expires_at=expires_at) is True
        assert billing.redeem(key, expires_at=expires_at) is False


def test_retention_is_a_duration_from_the_sealers_clock_whatever_the_redis_clock(
    redis_server: RedisServer, clock: Clock
) -> None:
    # The sealer's clock is months away from Redis's: the key must still live
    # exactly exp + 2 * leeway - now, counted by Redis from the moment it is set.
    admin = redis_server.admin()
    with RedisReplayStore.from_url(redis_server.url, clock=clock) as store:
        sealer = StateSealer(
            Keyring.generate("HS256"), issuer=ISSUER, clock=clock, leeway=5, replay_store=store
        )
        token = sealer.seal(STATE, **REQUEST)
        sealer.open(token, **REQUEST, consume=True)
        (key,) = admin.keys("*")
        pttl = admin.pttl(key)
        assert 600_000 + 10_000 - 2_000 < pttl <= 610_000
    admin.close()


def test_a_retention_already_over_by_the_stores_clock_writes_nothing(
    redis_server: RedisServer, clock: Clock
) -> None:
    admin = redis_server.admin()
    with RedisReplayStore.from_url(redis_server.url, clock=clock) as store:
        with pytest.raises(ReplayStoreError, match="clock"):
            store.redeem("k", expires_at=int(clock.now))
        assert admin.dbsize() == 0
    admin.close()


def test_a_reply_other_than_ok_or_nil_is_an_error_not_a_verdict(redis_server: RedisServer) -> None:
    class Odd(redis.Redis):
        def set(self, *args: Any, **kwargs: Any) -> Any:
            return "QUEUED"

    client = Odd(host="127.0.0.1", port=redis_server.port)
    store = RedisReplayStore(client)
    with pytest.raises(ReplayStoreError, match="unexpected str"):
        store.redeem("k", expires_at=int(time.time()) + 60)
    client.close()


def test_stores_are_replay_stores_of_their_protocol(redis_server: RedisServer) -> None:
    sync = RedisReplayStore.from_url(redis_server.url)
    asynchronous = AsyncRedisReplayStore.from_url(redis_server.url)
    assert isinstance(sync, ReplayStore)
    assert isinstance(asynchronous, AsyncReplayStore)
    sync.close()
    asyncio.run(asynchronous.aclose())


def test_a_client_of_the_wrong_kind_is_a_type_error() -> None:
    sync_client = redis.Redis()
    async_client = redis.asyncio.Redis()
    with pytest.raises(TypeError, match="AsyncRedisReplayStore"):
        RedisReplayStore(async_client)
    with pytest.raises(TypeError, match="RedisReplayStore"):
        AsyncRedisReplayStore(sync_client)
    with pytest.raises(TypeError, match=r"redis\.Redis"):
        RedisReplayStore("redis://127.0.0.1")
    with pytest.raises(TypeError, match="prefix"):
        RedisReplayStore(sync_client, prefix=b"x")
    sync_client.close()
    asyncio.run(async_client.aclose())


@pytest.mark.parametrize("timeout", [0, -1, 61, float("nan")])
def test_the_timeout_must_be_a_sensible_number_of_seconds(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        RedisReplayStore.from_url("redis://127.0.0.1:6379", timeout=timeout)


def clients_connected(admin: Any) -> int:
    return len(admin.client_list()) - 1  # without the admin's own connection


def wait_for_clients(admin: Any, count: int) -> int:
    deadline = time.monotonic() + 5
    while clients_connected(admin) != count and time.monotonic() < deadline:
        time.sleep(0.01)
    return clients_connected(admin)


def test_close_closes_a_from_url_client_but_never_a_passed_in_one(redis_server: RedisServer) -> None:
    admin = redis_server.admin()
    owned = RedisReplayStore.from_url(redis_server.url)
    assert owned.redeem("k1", expires_at=int(time.time()) + 60)
    assert wait_for_clients(admin, 1) == 1
    owned.close()
    assert wait_for_clients(admin, 0) == 0

    client = redis.Redis(host="127.0.0.1", port=redis_server.port)
    with RedisReplayStore(client) as borrowed:
        assert borrowed.redeem("k2", expires_at=int(time.time()) + 60)
    assert client.ping()  # still usable: the store did not own it
    client.close()
    admin.close()


# -- async ------------------------------------------------------------------------------


def test_open_async_with_the_async_store_opens_once(redis_server: RedisServer) -> None:
    async def run() -> tuple[Any, str]:
        async with AsyncRedisReplayStore.from_url(redis_server.url) as store:
            sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
            token = sealer.seal(STATE, **REQUEST)
            first = await sealer.open_async(token, **REQUEST, consume=True)
            with pytest.raises(InvalidRequestState) as second:
                await sealer.open_async(token, **REQUEST, consume=True)
            return first, second.value.reason

    assert asyncio.run(run()) == (STATE, "replayed")


def test_the_async_store_in_the_sync_open_is_a_type_error(redis_server: RedisServer) -> None:
    store = AsyncRedisReplayStore.from_url(redis_server.url)
    sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
    token = sealer.seal(STATE, **REQUEST)
    with pytest.raises(TypeError, match="open_async"):
        sealer.open(token, **REQUEST, consume=True)
    asyncio.run(store.aclose())


def test_sync_and_async_stores_share_redemptions(redis_server: RedisServer) -> None:
    ring = Keyring.generate("EdDSA")
    with RedisReplayStore.from_url(redis_server.url) as sync_store:
        sync_replica = StateSealer(ring, issuer=ISSUER, replay_store=sync_store)
        token = sync_replica.seal(STATE, **REQUEST)
        sync_replica.open(token, **REQUEST, consume=True)

    async def replay() -> str:
        async with AsyncRedisReplayStore.from_url(redis_server.url) as store:
            async_replica = StateSealer(ring, issuer=ISSUER, replay_store=store)
            with pytest.raises(InvalidRequestState) as caught:
                await async_replica.open_async(token, **REQUEST, consume=True)
            return caught.value.reason

    assert asyncio.run(replay()) == "replayed"


# -- secrets ----------------------------------------------------------------------------

PASSWORD = "correct-horse-battery-staple"
WRONG = "s3cret-Wrong-pa55word-7f3a"


def assert_secret_free(texts: list[str], *secrets: str) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text


def refusal_texts(error: InvalidRequestState, store: object, caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        str(error),
        error.detail,
        repr(error),
        repr(store),
        "".join(traceback.format_exception(error)),
        caplog.text,
    ]


def logged_refusal(store: RedisReplayStore) -> InvalidRequestState:
    """Redeem a fresh token through ``store``, which must refuse it; the refusal, logged as a server would."""
    sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
    token = sealer.seal(STATE, **REQUEST)
    with pytest.raises(InvalidRequestState) as caught:
        sealer.open(token, **REQUEST, consume=True)
    logging.getLogger("server").exception("refused", exc_info=caught.value)
    return caught.value


def test_a_password_right_in_the_url_works(start_redis: Any) -> None:
    server = start_redis(password=PASSWORD)
    with RedisReplayStore.from_url(server.url) as store:
        assert store.redeem("k", expires_at=int(time.time()) + 60) is True
        assert repr(store) == f"RedisReplayStore(prefix={DEFAULT_PREFIX!r})"


def test_a_wrong_password_is_refused_and_never_shown(
    start_redis: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server = start_redis(password=PASSWORD)
    with RedisReplayStore.from_url(server.url_with_password(WRONG)) as store:
        error = logged_refusal(store)
    assert error.reason == "store_unavailable"
    assert error.detail == "Redis could not record the redemption (AuthenticationError)"
    assert_secret_free(refusal_texts(error, store, caplog), WRONG, PASSWORD)


def test_an_unreachable_redis_with_a_password_in_the_url_never_shows_it(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = redis_server.url_with_password(WRONG)
    redis_server.stop()
    with RedisReplayStore.from_url(url) as store:
        error = logged_refusal(store)
    assert error.reason == "store_unavailable"
    assert error.detail == "Redis could not record the redemption (ConnectionError)"
    texts = refusal_texts(error, store, caplog)
    assert_secret_free(texts, WRONG, url, f"127.0.0.1:{redis_server.port}")


def test_the_async_store_never_shows_the_password(start_redis: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server = start_redis(password=PASSWORD)

    async def run() -> tuple[InvalidRequestState, AsyncRedisReplayStore]:
        async with AsyncRedisReplayStore.from_url(server.url_with_password(WRONG)) as store:
            sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
            token = sealer.seal(STATE, **REQUEST)
            with pytest.raises(InvalidRequestState) as caught:
                await sealer.open_async(token, **REQUEST, consume=True)
            return caught.value, store

    error, store = asyncio.run(run())
    assert error.reason == "store_unavailable"
    assert error.detail == "Redis could not record the redemption (AuthenticationError)"
    assert_secret_free(refusal_texts(error, store, caplog), WRONG, PASSWORD)


@pytest.mark.parametrize(
    "url",
    [
        f"redis://:{WRONG}@127.0.0.1:notaport/0",
        f"http://:{WRONG}@127.0.0.1:6379/0",
        f"redis://:{WRONG}@[::1/0",
    ],
)
def test_a_bad_url_is_a_value_error_that_does_not_repeat_it(url: str) -> None:
    for make in (RedisReplayStore.from_url, AsyncRedisReplayStore.from_url):
        with pytest.raises(ValueError, match="Redis URL") as caught:
            make(url)
        assert WRONG not in str(caught.value)
        assert WRONG not in "".join(traceback.format_exception(caught.value))


def test_the_stores_need_only_set_on_their_prefix(redis_server: RedisServer) -> None:
    # The least-privilege ACL docs/single-use.md recommends.
    admin = redis_server.admin()
    admin.execute_command("ACL", "SETUSER", "mrtr", "on", ">pw-of-mrtr", "~mrtr-state:jti:*", "-@all", "+set")
    admin.close()
    url = f"redis://mrtr:pw-of-mrtr@127.0.0.1:{redis_server.port}/0"
    with RedisReplayStore.from_url(url) as store:
        sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
        token = sealer.seal(STATE, **REQUEST)
        assert sealer.open(token, **REQUEST, consume=True) == STATE
        assert reason_of(lambda: sealer.open(token, **REQUEST, consume=True)) == "replayed"

    async def run() -> Any:
        async with AsyncRedisReplayStore.from_url(url) as store:
            sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, replay_store=store)
            return await sealer.open_async(sealer.seal(STATE, **REQUEST), **REQUEST, consume=True)

    assert asyncio.run(run()) == STATE
    with (
        RedisReplayStore.from_url(url, prefix="other:") as elsewhere,
        pytest.raises(ReplayStoreError) as caught,
    ):
        elsewhere.redeem("k", expires_at=int(time.time()) + 60)
    assert str(caught.value) == "Redis refused the redemption (NoPermissionError)"
