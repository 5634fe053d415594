"""RemoteJWKS against a real HTTP server on loopback: rotation, cooldown, and every way a fetch fails."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer
from mrtr_state.keys.remote_jwks import RemoteJWKS, check_jwks_url
from tests.conftest import ISSUER
from tests.keysources.conftest import Monotonic
from tests.keysources.jwks_server import JWKSServer, jwks_server, self_signed

T = TypeVar("T")

ARGS = {"env": "prod"}


def seal(ring: Keyring, **claims: str) -> str:
    return StateSealer(ring, issuer=ISSUER).seal({"step": 2}, user="alice", tool="deploy", arguments=ARGS)


def open_with(sealer: StateSealer, token: str) -> object:
    return sealer.open(token, user="alice", tool="deploy", arguments=ARGS)


def wait_until(condition: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_a_verify_only_replica_follows_a_rotation_over_http(server: JWKSServer, monotonic: Monotonic) -> None:
    minting = Keyring.generate("EdDSA")
    server.behaviour.serve(minting)
    remote = RemoteJWKS.load(server.url, clock=monotonic, refresh_interval=300, cooldown=30)
    replica = StateSealer(remote, issuer=ISSUER)
    old_token = seal(minting)
    assert open_with(replica, old_token) == {"step": 2}

    # Profile 7.3 step 1: the new key is published second; the scheduled fetch picks it up.
    new_key = Key.generate("EdDSA")
    step1 = Keyring([*minting.keys, new_key])
    server.behaviour.serve(step1)
    monotonic.advance(300)
    fetches = server.requests
    assert remote.keys  # a scheduled fetch is due: started in the background
    wait_until(lambda: new_key.kid in [k.kid for k in remote.keys], "the scheduled fetch")
    assert server.requests == fetches + 1

    # Step 2 on the minting replica: the new key signs. The replica opens without a fetch.
    step2 = Keyring([new_key, *minting.keys])
    server.behaviour.serve(step2)
    new_token = seal(step2)
    assert open_with(replica, new_token) == {"step": 2}
    assert open_with(replica, old_token) == {"step": 2}

    # Step 3: the old key is removed; after the next fetch its tokens are refused.
    server.behaviour.serve(Keyring([new_key]))
    monotonic.advance(300)
    remote.keys  # noqa: B018
    wait_until(lambda: len(remote.keys) == 1, "the fetch that removes the old key")
    with pytest.raises(InvalidRequestState) as refused:
        open_with(replica, old_token)
    assert refused.value.reason == "unknown_key"
    assert open_with(replica, new_token) == {"step": 2}


def test_a_replica_under_load_follows_three_rotations_with_no_refused_valid_token(server: JWKSServer) -> None:
    """Threads mint on the minting side and open on the replica while the JWKS rotates (profile 7.3)."""
    minting = {"sealer": StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER)}
    server.behaviour.serve(minting["sealer"].ring)  # type: ignore[arg-type]
    remote = RemoteJWKS.load(server.url, refresh_interval=0.05, cooldown=0.05)
    replica = StateSealer(remote, issuer=ISSUER)
    refusals: list[str] = []
    rounds = [0] * 4
    stop = threading.Event()

    def work(index: int) -> None:
        while not stop.is_set():
            token = minting["sealer"].seal({"n": index}, user="alice", tool="deploy", arguments=ARGS)
            try:
                replica.open(token, user="alice", tool="deploy", arguments=ARGS)
            except InvalidRequestState as refusal:
                refusals.append(refusal.reason)
            rounds[index] += 1

    def quiesce() -> None:
        marks = list(rounds)
        wait_until(lambda: all(r >= m + 2 for r, m in zip(rounds, marks, strict=True)), "two more rounds")

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(4)]
    for thread in threads:
        thread.start()
    try:
        current: Keyring = minting["sealer"].ring  # type: ignore[assignment]
        for _ in range(3):
            new = Key.generate("EdDSA")
            server.behaviour.serve(Keyring([*current, new]))  # step 1: published second
            wait_until(lambda: new.kid in [k.kid for k in remote.keys], "step 1 on the replica")  # noqa: B023
            current = Keyring([new, *current])
            minting["sealer"] = StateSealer(current, issuer=ISSUER)  # step 2: it signs
            server.behaviour.serve(current)
            quiesce()
            current = Keyring([new])  # step 3: the old key goes, once no token of it is in flight
            minting["sealer"] = StateSealer(current, issuer=ISSUER)
            server.behaviour.serve(current)
            wait_until(lambda: [k.kid for k in remote.keys] == [new.kid], "step 3 on the replica")  # noqa: B023
            quiesce()
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert refusals == []
    assert sum(rounds) > 30
    assert server.requests > 6


def test_a_token_with_a_new_kid_makes_the_replica_fetch_at_once(
    server: JWKSServer, monotonic: Monotonic
) -> None:
    minting = Keyring.generate("EdDSA")
    server.behaviour.serve(minting)
    remote = RemoteJWKS.load(server.url, clock=monotonic, cooldown=30)
    replica = StateSealer(remote, issuer=ISSUER)
    # The minting replica rotated without step 1 (new key first at once).
    rotated = minting.rotated(Key.generate("EdDSA"))
    server.behaviour.serve(rotated)
    monotonic.advance(30)
    assert open_with(replica, seal(rotated)) == {"step": 2}


def test_async_open_follows_a_rotation_without_blocking_the_loop(
    server: JWKSServer, monotonic: Monotonic
) -> None:
    minting = Keyring.generate("EdDSA")
    server.behaviour.serve(minting)

    async def run() -> object:
        remote = await RemoteJWKS.load_async(server.url, clock=monotonic)
        replica = StateSealer(remote, issuer=ISSUER)
        rotated = minting.rotated(Key.generate("EdDSA"))
        server.behaviour.serve(rotated)
        monotonic.advance(30)
        return await replica.open_async(seal(rotated), user="alice", tool="deploy", arguments=ARGS)

    assert asyncio.run(run()) == {"step": 2}


async def ticking(work: Coroutine[Any, Any, T]) -> tuple[T, int]:
    """Await ``work`` while a task ticks every 10 ms: its result, and how often the loop ran the ticker."""
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    task = asyncio.create_task(ticker())
    try:
        result = await work
    finally:
        done.set()
        await task
    return result, ticks


def test_an_async_open_waiting_for_a_slow_fetch_never_blocks_the_event_loop(
    server: JWKSServer, monotonic: Monotonic
) -> None:
    remote, _ = loaded(server, monotonic, timeout=0.5)
    replica = StateSealer(remote, issuer=ISSUER)
    server.behaviour.stall = 30
    stranger = seal(Keyring.generate("EdDSA"))
    monotonic.advance(30)

    async def refusal() -> str:
        with pytest.raises(InvalidRequestState) as refused:
            await replica.open_async(stranger, user="alice", tool="deploy", arguments=ARGS)
        return refused.value.reason

    reason, ticks = asyncio.run(ticking(refusal()))
    assert reason == "unknown_key"
    assert ticks >= 10  # the loop kept running while the fetch was waited for
    wait_until(lambda: server.requests == 2, "the fetch that was waited for")


def test_unknown_kids_cause_at_most_one_fetch_per_cooldown(server: JWKSServer, monotonic: Monotonic) -> None:
    server.behaviour.serve(Keyring.generate("EdDSA"))
    remote = RemoteJWKS.load(server.url, clock=monotonic, cooldown=30)
    replica = StateSealer(remote, issuer=ISSUER)
    strangers = [seal(Keyring.generate("EdDSA")) for _ in range(5)]
    monotonic.advance(30)
    before = server.requests
    for token in strangers * 4:
        with pytest.raises(InvalidRequestState) as refused:
            open_with(replica, token)
        assert refused.value.reason == "unknown_key"
    assert server.requests == before + 1
    monotonic.advance(29)
    with pytest.raises(InvalidRequestState):
        open_with(replica, strangers[0])
    assert server.requests == before + 1
    monotonic.advance(1)
    with pytest.raises(InvalidRequestState):
        open_with(replica, strangers[0])
    assert server.requests == before + 2


def loaded(server: JWKSServer, monotonic: Monotonic, **options: float) -> tuple[RemoteJWKS, Keyring]:
    ring = Keyring.generate("EdDSA")
    server.behaviour.serve(ring)
    return RemoteJWKS.load(server.url, clock=monotonic, **options), ring  # type: ignore[arg-type]


def assert_kept(remote: RemoteJWKS, ring: Keyring) -> None:
    assert [k.kid for k in remote.keys] == [k.kid for k in ring]
    replica = StateSealer(remote, issuer=ISSUER)
    assert open_with(replica, seal(ring)) == {"step": 2}


def test_a_slow_server_is_cut_off_at_the_timeout_and_the_last_keys_stay(
    server: JWKSServer, monotonic: Monotonic
) -> None:
    remote, ring = loaded(server, monotonic, timeout=0.3)
    server.behaviour.stall = 30
    started = time.monotonic()
    with pytest.raises(KeyringError, match=r"no answer within 0\.3 s"):
        remote.refresh()
    assert time.monotonic() - started < 5  # bounded by the timeout, not by the 30 s stall
    assert_kept(remote, ring)


def test_a_server_that_trickles_its_answer_is_cut_off(server: JWKSServer, monotonic: Monotonic) -> None:
    remote, ring = loaded(server, monotonic, timeout=0.3)
    server.behaviour.trickle = 0.05
    started = time.monotonic()
    with pytest.raises(KeyringError, match="could not fetch"):
        remote.refresh()
    assert time.monotonic() - started < 5
    assert_kept(remote, ring)


def refreshed(remote: RemoteJWKS) -> bool:
    """Whether one :meth:`RemoteJWKS.refresh` succeeds."""
    try:
        remote.refresh()
    except KeyringError:
        return False
    return True


def test_the_timeout_bounds_the_whole_fetch_when_the_headers_trickle_in(
    server: JWKSServer, monotonic: Monotonic
) -> None:
    remote, ring = loaded(server, monotonic, timeout=0.5)
    server.behaviour.trickle_headers = 0.1  # one byte every 0.1 s: about a minute of headers
    started = time.monotonic()
    with pytest.raises(KeyringError, match=r"within 0\.5 s"):
        remote.refresh()
    assert time.monotonic() - started < 2
    assert "within 0.5 s" in (remote.last_error or "")
    # The fetch itself was cut at its deadline: the server sees the client hang up.
    assert server.hung_up.wait(3), "the fetch went on reading the trickled headers"
    assert_kept(remote, ring)
    # A key published now is fetched at once: no fetch of the trickled answer holds the way.
    rotated = Keyring.generate("EdDSA")
    server.behaviour.trickle_headers = 0
    server.behaviour.serve(rotated)
    wait_until(lambda: refreshed(remote), "a good refresh", timeout=5)
    assert remote.last_error is None
    assert open_with(StateSealer(remote, issuer=ISSUER), seal(rotated)) == {"step": 2}


def test_last_error_names_the_last_failed_refresh_and_clears_after_a_good_one(
    server: JWKSServer, monotonic: Monotonic
) -> None:
    # 2 s: room for the 404 fetch on a busy machine; trickled headers take far longer.
    remote, ring = loaded(server, monotonic, timeout=2)
    assert remote.last_error is None
    server.behaviour.status = 404
    with pytest.raises(KeyringError, match="HTTP 404"):
        remote.refresh()
    assert "HTTP 404" in (remote.last_error or "")
    server.behaviour.status = 200
    server.behaviour.trickle_headers = 0.1
    with pytest.raises(KeyringError, match=r"within 2 s"):
        remote.refresh()
    assert "HTTP 404" not in (remote.last_error or "")
    assert "within 2 s" in (remote.last_error or "")
    server.behaviour.trickle_headers = 0
    assert server.hung_up.wait(3)
    wait_until(lambda: refreshed(remote), "a good refresh", timeout=5)
    assert remote.last_error is None
    assert_kept(remote, ring)


@pytest.mark.parametrize("no_length", [False, True], ids=["content-length", "counted"])
def test_an_oversized_answer_is_refused(server: JWKSServer, monotonic: Monotonic, no_length: bool) -> None:
    remote, ring = loaded(server, monotonic, max_bytes=4096)
    padding = " " * 5000
    server.behaviour.body = json.dumps(ring.public_jwks()).encode() + padding.encode()
    server.behaviour.no_length = no_length
    with pytest.raises(KeyringError, match="over the limit of 4096"):
        remote.refresh()
    assert_kept(remote, ring)


def test_an_html_answer_is_refused(server: JWKSServer, monotonic: Monotonic) -> None:
    remote, ring = loaded(server, monotonic)
    server.behaviour.content_type = "text/html"
    server.behaviour.body = b"<!doctype html><html><body>Sign in to continue</body></html>"
    with pytest.raises(KeyringError, match=r"\(text/html\) is not a JSON object"):
        remote.refresh()
    assert_kept(remote, ring)


def test_a_server_that_dies_leaves_the_last_keys_in_use(
    server: JWKSServer, monotonic: Monotonic, caplog: pytest.LogCaptureFixture
) -> None:
    remote, ring = loaded(server, monotonic, cooldown=10, refresh_interval=60)
    server.stop()
    with (
        caplog.at_level(logging.WARNING, logger="mrtr_state.remote_jwks"),
        pytest.raises(KeyringError, match="cannot connect"),
    ):
        remote.refresh()
    assert "keeping the 1 keys" in caplog.text
    assert remote.last_error is not None
    assert_kept(remote, ring)
    # A failed fetch is retried after the cooldown, not a whole interval later.
    monotonic.advance(10)
    remote.keys  # noqa: B018
    wait_until(lambda: "cannot connect" in (remote.last_error or "") and server.requests == 1, "a retry")


@pytest.mark.parametrize(
    ("status", "match"),
    [(404, "HTTP 404"), (500, "HTTP 500"), (302, "redirects are not followed")],
)
def test_an_answer_other_than_200_is_refused(
    server: JWKSServer, monotonic: Monotonic, status: int, match: str
) -> None:
    remote, ring = loaded(server, monotonic)
    server.behaviour.status = status
    server.behaviour.headers = {"Location": "http://127.0.0.1:1/elsewhere"} if status == 302 else {}
    with pytest.raises(KeyringError, match=match):
        remote.refresh()
    assert_kept(remote, ring)


def test_a_published_private_key_or_secret_is_refused_and_never_logged(
    server: JWKSServer, monotonic: Monotonic, caplog: pytest.LogCaptureFixture
) -> None:
    remote, ring = loaded(server, monotonic)
    private = Keyring.generate("EdDSA").private_jwks()
    secret = Keyring.generate("HS256").private_jwks()
    for jwks, match in ((private, "private key"), (secret, r"secret key \(alg HS256\)")):
        server.behaviour.body = json.dumps(jwks).encode()
        with caplog.at_level(logging.WARNING), pytest.raises(KeyringError, match=match) as refused:
            remote.refresh()
        material = jwks["keys"][0].get("d") or jwks["keys"][0]["k"]
        assert material not in str(refused.value)
        assert material not in caplog.text
    assert_kept(remote, ring)


def test_a_jwks_key_that_a_local_file_would_refuse_is_refused(
    server: JWKSServer, monotonic: Monotonic
) -> None:
    remote, ring = loaded(server, monotonic)
    good = ring.public_jwks()["keys"][0]
    for bad in ({**good, "x": good["x"][:-2]}, {**good, "use": "enc"}, {**good, "kty": "RSA"}):
        server.behaviour.body = json.dumps({"keys": [bad]}).encode()
        with pytest.raises(KeyringError):
            remote.refresh()
    server.behaviour.body = b'{"keys": []}'
    with pytest.raises(KeyringError, match="at least one key"):
        remote.refresh()
    server.behaviour.body = b'{"keys": [], "keys": []}'
    with pytest.raises(KeyringError, match="strict JSON"):
        remote.refresh()
    assert_kept(remote, ring)


def test_loading_fails_loudly_when_the_first_fetch_fails(server: JWKSServer) -> None:
    server.behaviour.status = 503
    with pytest.raises(KeyringError, match="HTTP 503"):
        RemoteJWKS.load(server.url)


@pytest.mark.parametrize(
    "url",
    [
        "http://keys.example.com/jwks.json",
        "http://10.0.0.1/jwks.json",
        "ftp://127.0.0.1/jwks.json",
        "file:///etc/jwks.json",
        "https://user:s3cr3t@keys.example.com/jwks.json",
        "https:///jwks.json",
        "https://keys.example.com:99999/jwks.json",
    ],
)
def test_a_url_other_than_https_or_loopback_http_is_refused(url: str) -> None:
    with pytest.raises(KeyringError) as refused:
        check_jwks_url(url)
    assert "s3cr3t" not in str(refused.value)


@pytest.mark.parametrize(
    "url",
    ["https://keys.example.com/jwks.json", "http://127.0.0.1:8/j", "http://[::1]:8/j", "http://localhost/j"],
)
def test_https_and_loopback_http_urls_are_allowed(url: str) -> None:
    assert check_jwks_url(url) == url


def test_a_remote_jwks_can_verify_but_never_sign(server: JWKSServer, monotonic: Monotonic) -> None:
    remote, _ = loaded(server, monotonic)
    with pytest.raises(KeyringError, match="verify-only"):
        StateSealer(remote, issuer=ISSUER).seal({}, user="alice", tool="deploy")


def test_https_verifies_the_certificate_and_takes_a_private_ca(tmp_path: Path) -> None:
    tls, cert_file = self_signed(tmp_path)
    ring = Keyring.generate("EdDSA")
    with jwks_server(tls) as server:
        server.behaviour.serve(ring)
        assert server.url.startswith("https://127.0.0.1:")
        with pytest.raises(KeyringError, match="certificate verify failed"):
            RemoteJWKS.load(server.url)
        trusted = ssl.create_default_context(cafile=str(cert_file))
        remote = RemoteJWKS.load(server.url, ssl_context=trusted)
        assert open_with(StateSealer(remote, issuer=ISSUER), seal(ring)) == {"step": 2}


def test_the_timeout_bounds_the_whole_fetch_over_https_too(tmp_path: Path, monotonic: Monotonic) -> None:
    tls, cert_file = self_signed(tmp_path)
    trusted = ssl.create_default_context(cafile=str(cert_file))
    with jwks_server(tls) as server:
        ring = Keyring.generate("EdDSA")
        server.behaviour.serve(ring)
        remote = RemoteJWKS.load(server.url, ssl_context=trusted, timeout=0.5, clock=monotonic)
        server.behaviour.trickle_headers = 0.1
        with pytest.raises(KeyringError, match=r"within 0\.5 s"):
            remote.refresh()
        assert server.hung_up.wait(3), "the fetch went on reading the trickled headers"
        server.behaviour.trickle_headers = 0
        wait_until(lambda: refreshed(remote), "a good refresh", timeout=5)
        assert_kept(remote, ring)


class HungResolver:
    """``socket.getaddrinfo`` that hangs (until ``release`` is set, at most a minute) while ``hanging``."""

    def __init__(self) -> None:
        self.real = socket.getaddrinfo
        self.hanging = True
        self.release = threading.Event()
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.hanging:
            self.calls += 1
            self.release.wait(60)
        return self.real(*args, **kwargs)

    def answer(self) -> None:
        """Answer from now on, the lookups already waiting included."""
        self.hanging = False
        self.release.set()


@pytest.fixture
def hung_resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[HungResolver]:
    resolver = HungResolver()
    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    yield resolver
    resolver.release.set()  # no lookup outlives the test


class Events:
    """A :class:`~mrtr_state.metrics.StateMetrics` that keeps what it is told."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str]]] = []

    def __call__(self, event: str, attributes: Mapping[str, str], /) -> None:
        self.seen.append((event, dict(attributes)))

    def failed_fetches(self) -> int:
        return self.seen.count(("key_refresh", {"source": "remote_jwks", "outcome": "failed"}))


def test_a_hung_name_lookup_is_cut_off_at_the_timeout(
    server: JWKSServer, monotonic: Monotonic, hung_resolver: HungResolver
) -> None:
    ring = Keyring.generate("EdDSA")
    server.behaviour.serve(ring)
    events = Events()
    started = time.monotonic()
    with pytest.raises(KeyringError, match=r"could not fetch the JWKS from .*: no answer within 0\.5 s$"):
        RemoteJWKS.load(server.url, timeout=0.5, clock=monotonic, metrics=events)
    assert time.monotonic() - started < 3  # bounded by the timeout, not by the minute-long lookup
    # The fetch itself ends at its deadline, abandoning the lookup: it is counted (and logged) as failed.
    wait_until(lambda: events.failed_fetches() == 1, "the fetch to give up on the lookup", timeout=3)
    assert hung_resolver.calls == 1
    assert server.requests == 0

    # A new fetch while that lookup still hangs waits for the same lookup (no second thread
    # hangs with it), and fails the same way, at its own deadline.
    remote = RemoteJWKS(server.url, timeout=0.5, clock=monotonic, metrics=events)
    with pytest.raises(KeyringError, match=r"no answer within 0\.5 s$"):
        remote.refresh()
    wait_until(lambda: events.failed_fetches() == 2, "the second fetch to give up", timeout=3)
    assert remote.last_error == f"could not fetch the JWKS from {server.url}: no answer within 0.5 s"
    assert hung_resolver.calls == 1
    # The failed fetch is over, so the cooldown holds: a token with an unknown kid starts no fetch
    # (and does not wait for the hung lookup).
    assert remote.refresh_for_unknown_key() is False
    assert hung_resolver.calls == 1
    assert events.failed_fetches() == 2

    # Once the resolver answers, the next fetch connects and loads the keys.
    hung_resolver.answer()
    wait_until(lambda: refreshed(remote), "a good refresh", timeout=5)
    assert remote.last_error is None
    assert_kept(remote, ring)


def test_a_hung_name_lookup_never_blocks_the_event_loop_and_is_cut_off(
    server: JWKSServer, monotonic: Monotonic, hung_resolver: HungResolver
) -> None:
    server.behaviour.serve(Keyring.generate("EdDSA"))
    events = Events()

    async def refusal() -> tuple[str, float]:
        started = time.monotonic()
        with pytest.raises(KeyringError) as refused:
            await RemoteJWKS.load_async(server.url, timeout=0.5, clock=monotonic, metrics=events)
        return str(refused.value), time.monotonic() - started

    (message, waited), ticks = asyncio.run(ticking(refusal()))
    assert message == f"could not fetch the JWKS from {server.url}: no answer within 0.5 s"
    assert waited < 3
    assert ticks >= 10  # the loop kept running while the lookup hung
    wait_until(lambda: events.failed_fetches() == 1, "the fetch to give up on the lookup", timeout=3)
    assert server.requests == 0


def test_https_checks_the_host_name_of_the_url_not_the_address_it_resolves_to(tmp_path: Path) -> None:
    tls, cert_file = self_signed(tmp_path, dns_name="localhost")
    trusted = ssl.create_default_context(cafile=str(cert_file))
    ring = Keyring.generate("EdDSA")
    with jwks_server(tls) as server:
        server.behaviour.serve(ring)
        by_name = server.url.replace("https://127.0.0.1:", "https://localhost:")
        remote = RemoteJWKS.load(by_name, ssl_context=trusted, timeout=5)
        assert open_with(StateSealer(remote, issuer=ISSUER), seal(ring)) == {"step": 2}
        # The same server by its address: the certificate does not name it.
        with pytest.raises(KeyringError, match="certificate verify failed"):
            RemoteJWKS.load(server.url, ssl_context=trusted, timeout=5)


def test_a_name_that_does_not_resolve_is_refused_with_the_resolvers_reason(
    server: JWKSServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_such_name(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    with pytest.raises(KeyringError, match=r"cannot connect: Name or service not known$"):
        RemoteJWKS.load(server.url, timeout=5)


def test_the_addresses_of_a_name_are_tried_in_order_until_one_accepts(
    server: JWKSServer, monotonic: Monotonic, monkeypatch: pytest.MonkeyPatch
) -> None:
    ring = Keyring.generate("EdDSA")
    server.behaviour.serve(ring)
    with socket.socket() as closed:  # bound, never listening: a connect to it is refused
        closed.bind(("127.0.0.1", 0))
        refusing = closed.getsockname()
        asked: list[tuple[Any, ...]] = []

        def two_addresses(*args: Any, **kwargs: Any) -> Any:
            asked.append(args[:2])
            stream = (socket.AF_INET, socket.SOCK_STREAM, 6, "")
            return [(*stream, refusing), (*stream, ("127.0.0.1", server.port))]

        monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
        remote = RemoteJWKS.load(server.url, timeout=5, clock=monotonic)
    assert asked == [("127.0.0.1", server.port)]
    assert server.requests == 1
    assert_kept(remote, ring)
