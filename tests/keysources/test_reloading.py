"""ReloadingKeyring: a real key file rotated under concurrent opens, broken files, the signal."""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import threading
import time
from pathlib import Path

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer
from mrtr_state.keys.reloading import ReloadingKeyring
from tests.conftest import ISSUER
from tests.keysources.conftest import Monotonic

ARGS = {"env": "prod"}


def write(path: Path, ring: Keyring | str) -> None:
    """Replace the file as an operator should: a new file renamed over the old one."""
    text = ring if isinstance(ring, str) else json.dumps(ring.private_jwks())
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def kids(source: ReloadingKeyring) -> list[str]:
    return [key.kid for key in source.keys]


def wait_until(condition: object, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class Load:
    """Threads that seal on one replica and open on both, until stopped; every refusal is kept."""

    def __init__(self, minting: StateSealer, verifying: StateSealer, threads: int = 4) -> None:
        self.minting, self.verifying = minting, verifying
        self.refusals: list[str] = []
        self.errors: list[BaseException] = []
        self.rounds = [0] * threads
        self.signing_kids: set[str] = set()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(threads)]

    def run(self, index: int) -> None:
        try:
            while not self.stop.is_set():
                token = self.minting.seal({"n": index}, user="alice", tool="deploy", arguments=ARGS)
                header = json.loads(_b64decode(token.split(".")[0]))
                self.signing_kids.add(header["kid"])
                for sealer in (self.verifying, self.minting):
                    try:
                        sealer.open(token, user="alice", tool="deploy", arguments=ARGS)
                    except InvalidRequestState as refusal:
                        self.refusals.append(refusal.reason)
                self.rounds[index] += 1
        except BaseException as exc:  # pragma: no cover - reported by the test
            self.errors.append(exc)

    def quiesce(self) -> None:
        """Wait until every thread has finished two rounds begun after now (no token older is in flight)."""
        marks = list(self.rounds)
        wait_until(
            lambda: all(r >= m + 2 for r, m in zip(self.rounds, marks, strict=True)), "two more rounds"
        )

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)
        assert not any(thread.is_alive() for thread in self.threads)


def _b64decode(segment: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    return tmp_path / "keys.json"


def test_a_secret_ring_file_rotation_is_picked_up_under_load_with_no_refused_valid_token(
    key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = Key.generate("HS256")
    write(key_file, Keyring([old]))
    # Two replicas reading the same file: one mints, the other only opens. Both also
    # look when a token names a kid they do not hold.
    replica_a = ReloadingKeyring.from_file(key_file, check_interval=0.02)
    replica_b = ReloadingKeyring.from_file(key_file, check_interval=0.5)
    minting = StateSealer(replica_a, issuer=ISSUER)
    verifying = StateSealer(replica_b, issuer=ISSUER)
    with caplog.at_level(logging.INFO, logger="mrtr_state.reloading"), Load(minting, verifying) as load:
        current = old
        for cycle in range(3):
            new = Key.generate("HS256")
            if cycle != 1:
                # Profile 7.3 step 1: the new key second; both replicas pick it up.
                write(key_file, Keyring([current, new]))
                wait_until(lambda: new.kid in kids(replica_a), "step 1 on the minting replica")  # noqa: B023
                replica_b.reload()
            # Step 2: the new key first (cycle 1 skips step 1, as `keygen --add --force` does:
            # the verifying replica then learns the key from the first token that names it).
            write(key_file, Keyring([new, current]))
            wait_until(lambda: kids(replica_a)[0] == new.kid, "step 2 on the minting replica")  # noqa: B023
            wait_until(lambda: new.kid in load.signing_kids, "a token signed with the new key")  # noqa: B023
            # A broken write in the middle of the run changes nothing.
            write(key_file, '{"keys": [')
            load.quiesce()
            # Step 3, once no token signed by the old key can be in flight: remove it.
            write(key_file, Keyring([new]))
            wait_until(lambda: kids(replica_a) == [new.kid], "step 3 on the minting replica")  # noqa: B023
            replica_b.reload()
            load.quiesce()
            current = new
    assert load.errors == []
    assert load.refusals == []
    assert sum(load.rounds) > 50
    print(f"rounds under load: {sum(load.rounds)} seals, {2 * sum(load.rounds)} opens, 0 refused")
    assert kids(replica_a) == kids(replica_b) == [current.kid]
    assert "cannot be used" in caplog.text  # the broken write was reported
    for key in (old, current):
        assert key.private_jwk()["k"] not in caplog.text


def test_a_replica_that_has_not_looked_yet_opens_a_token_of_the_new_key(key_file: Path) -> None:
    old = Keyring.generate("HS256")
    write(key_file, old)
    replica = StateSealer(ReloadingKeyring.from_file(key_file, check_interval=3600), issuer=ISSUER)
    rotated = old.rotated(Key.generate("HS256"))
    write(key_file, rotated)
    token = StateSealer(rotated, issuer=ISSUER).seal({}, user="alice", tool="deploy")
    assert replica.open(token, user="alice", tool="deploy") == {}


def test_the_file_is_looked_at_no_more_often_than_the_check_interval(
    key_file: Path, monotonic: Monotonic
) -> None:
    first = Keyring.generate("EdDSA")
    write(key_file, first)
    source = ReloadingKeyring.from_file(key_file, check_interval=10, clock=monotonic)
    second = Keyring.generate("EdDSA")
    write(key_file, second)
    monotonic.advance(9.9)
    assert [k.kid for k in source.keys] == [k.kid for k in first]
    monotonic.advance(0.1)
    assert [k.kid for k in source.keys] == [k.kid for k in second]


BROKEN = {
    "garbage": "not a key ring",
    "half written": '{"keys": [{"kty": "oct", "k": "',
    "short secret": json.dumps({"keys": [{"kty": "oct", "k": "c2hvcnQ"}]}),
    "empty": "",
    "no keys": '{"keys": []}',
    "an RSA key": json.dumps({"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB"}]}),
}


@pytest.mark.parametrize("content", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_file_is_refused_and_the_last_good_ring_stays(
    key_file: Path, monotonic: Monotonic, caplog: pytest.LogCaptureFixture, content: str
) -> None:
    good = Keyring.generate("HS256")
    write(key_file, good)
    source = ReloadingKeyring.from_file(key_file, check_interval=1, clock=monotonic)
    sealer = StateSealer(source, issuer=ISSUER)
    token = sealer.seal({}, user="alice", tool="deploy")
    write(key_file, content)
    with caplog.at_level(logging.WARNING, logger="mrtr_state.reloading"):
        for _ in range(3):
            monotonic.advance(1)
            assert sealer.open(token, user="alice", tool="deploy") == {}
    assert [k.kid for k in source.keys] == [k.kid for k in good]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once per bad content, not once per look
    assert "cannot be used" in warnings[0].getMessage()
    assert good.private_jwks()["keys"][0]["k"] not in caplog.text
    with pytest.raises(KeyringError, match="cannot be used"):
        source.reload()
    # Fixed: picked up at the next look.
    fixed = good.rotated(Key.generate("HS256"))
    write(key_file, fixed)
    monotonic.advance(1)
    assert [k.kid for k in source.keys] == [k.kid for k in fixed]


def test_a_missing_file_is_refused_and_the_last_good_ring_stays(key_file: Path, monotonic: Monotonic) -> None:
    good = Keyring.generate("HS256")
    write(key_file, good)
    source = ReloadingKeyring.from_file(key_file, check_interval=1, clock=monotonic)
    key_file.unlink()
    monotonic.advance(1)
    assert [k.kid for k in source.keys] == [k.kid for k in good]
    with pytest.raises(KeyringError, match="cannot be read"):
        source.reload()


def test_a_file_that_cannot_be_used_at_start_is_an_error(key_file: Path) -> None:
    with pytest.raises(KeyringError, match="cannot be read"):
        ReloadingKeyring.from_file(key_file)
    write(key_file, '{"keys": [')
    with pytest.raises(KeyringError, match=r"keys\.json.*cannot be used"):
        ReloadingKeyring.from_file(key_file)


def test_the_file_holds_what_mrtr_state_keys_holds(key_file: Path) -> None:
    secret = secrets.token_urlsafe(32)
    write(key_file, secret + "\n")
    ring = ReloadingKeyring.from_env(environ={"MRTR_STATE_KEYS_FILE": str(key_file)})
    assert [k.kid for k in ring.keys] == [
        k.kid for k in Keyring.from_env(environ={"MRTR_STATE_KEYS": secret})
    ]
    with pytest.raises(KeyringError, match="MRTR_STATE_KEYS_FILE is not set"):
        ReloadingKeyring.from_env(environ={})


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP is POSIX")
def test_sighup_makes_the_next_access_reread_the_file(key_file: Path, monotonic: Monotonic) -> None:
    write(key_file, Keyring.generate("HS256"))
    source = ReloadingKeyring.from_file(key_file, check_interval=3600, clock=monotonic)
    rotated = Keyring.generate("HS256")
    write(key_file, rotated)
    previous = signal.getsignal(signal.SIGHUP)
    try:
        source.reload_on_signal()
        os.kill(os.getpid(), signal.SIGHUP)
        wait_until(lambda: [k.kid for k in source.keys] == [k.kid for k in rotated], "the reread")
    finally:
        signal.signal(signal.SIGHUP, previous)
