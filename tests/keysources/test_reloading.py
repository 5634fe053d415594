"""ReloadingKeyring: a real key file rotated under concurrent opens, broken files, the signal."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer
from mrtr_state.keys import reloading
from mrtr_state.keys.reloading import ReloadingKeyring
from tests.conftest import ISSUER
from tests.keysources.conftest import Monotonic

ARGS = {"env": "prod"}


def write(path: Path, ring: Keyring | str) -> None:
    """Replace the file as an operator should: a new file renamed over the old one."""
    text = ring if isinstance(ring, str) else json.dumps(ring.private_jwks())
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(0o600)
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


class Counted:
    """Counts the calls of a function of the reloading module (a read, or a parse)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.calls = 0
        real = getattr(reloading, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(reloading, name, counted)


def test_a_bad_file_is_not_reread_for_every_unknown_kid_within_the_cooldown(
    key_file: Path, monotonic: Monotonic, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = Keyring.generate("HS256")
    write(key_file, good)
    source = ReloadingKeyring.from_file(key_file, check_interval=1, cooldown=5, clock=monotonic)
    sealer = StateSealer(source, issuer=ISSUER)
    write(key_file, '{"keys": [' + '{"kty": "oct", "k": "c2hvcnQ"}, ' * 20_000 + "]}")  # ~600 KiB, bad
    reads, parses = Counted(monkeypatch, "_read"), Counted(monkeypatch, "_parse")
    stranger = StateSealer(Keyring.generate("HS256"), issuer=ISSUER).seal({}, user="alice", tool="deploy")
    for _ in range(100):
        with pytest.raises(InvalidRequestState) as refused:
            sealer.open(stranger, user="alice", tool="deploy")
        assert refused.value.reason == "unknown_key"
        monotonic.advance(0.01)
    assert (reads.calls, parses.calls) == (1, 1)
    assert [k.kid for k in source.keys] == [k.kid for k in good]
    # After the cooldown it is read again, but the same bad bytes are not parsed again.
    monotonic.advance(5)
    source.refresh_for_unknown_key()
    assert (reads.calls, parses.calls) == (2, 1)
    # A new file renamed over the bad one is read at once, cooldown or not.
    fixed = good.rotated(Key.generate("HS256"))
    write(key_file, fixed)
    assert source.refresh_for_unknown_key() is True
    assert [k.kid for k in source.keys] == [k.kid for k in fixed]


def test_reload_rereads_a_bad_file_whatever_the_cooldown(key_file: Path, monotonic: Monotonic) -> None:
    write(key_file, Keyring.generate("HS256"))
    source = ReloadingKeyring.from_file(key_file, cooldown=3600, clock=monotonic)
    write(key_file, "not a key ring")
    with pytest.raises(KeyringError, match="cannot be used"):
        source.reload()
    with pytest.raises(KeyringError, match="cannot be used"):
        source.reload()  # the same bad content: refused again, with its reason


def test_the_cooldown_must_be_a_number_of_seconds(key_file: Path) -> None:
    write(key_file, Keyring.generate("HS256"))
    with pytest.raises(ValueError, match="cooldown must not be negative"):
        ReloadingKeyring.from_file(key_file, cooldown=-1)
    with pytest.raises(TypeError, match="cooldown must be a number"):
        ReloadingKeyring.from_file(key_file, cooldown="5")  # type: ignore[arg-type]


def in_a_thread(call: Callable[[], object], seconds: float) -> BaseException | None:
    """Run ``call`` in a thread; the exception it raised (None if none). Fails if it takes longer."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the test
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"blocked for more than {seconds} s"
    return outcome[0]


def release_fifo(path: Path) -> None:
    """Open the FIFO for writing and close it, so that a reader blocked on it (before the fix) goes on."""
    with contextlib.suppress(OSError):  # no reader waiting
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_at_the_key_path_is_refused_at_once_and_never_blocks(
    key_file: Path, monotonic: Monotonic
) -> None:
    fifo = key_file.with_name("fifo")
    os.mkfifo(fifo)
    try:
        refusal = in_a_thread(lambda: ReloadingKeyring.from_file(fifo), 5)
        assert isinstance(refusal, KeyringError)
        assert "not a regular file (a FIFO)" in str(refusal)
        good = Keyring.generate("HS256")
        write(key_file, good)
        source = ReloadingKeyring.from_file(key_file, clock=monotonic)
        os.replace(fifo, key_file)
        refusal = in_a_thread(source.reload, 5)
        assert isinstance(refusal, KeyringError)
        assert "not a regular file (a FIFO)" in str(refusal)
        monotonic.advance(10)
        assert in_a_thread(source.refresh_for_unknown_key, 5) is None
        assert [k.kid for k in source.keys] == [k.kid for k in good]
    finally:
        release_fifo(key_file)
        release_fifo(fifo)


def test_a_directory_at_the_key_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyringError, match=r"not a regular file \(a directory\)"):
        ReloadingKeyring.from_file(tmp_path)


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604], ids=oct)
def test_a_key_file_others_may_read_loads_with_a_warning(
    key_file: Path, caplog: pytest.LogCaptureFixture, mode: int
) -> None:
    ring = Keyring.generate("HS256")
    write(key_file, ring)
    key_file.chmod(mode)
    with caplog.at_level(logging.WARNING, logger="mrtr_state.reloading"):
        source = ReloadingKeyring.from_file(key_file)
    assert [k.kid for k in source.keys] == [k.kid for k in ring]
    assert f"may be read by its group or others (mode {mode:04o})" in caplog.text
    assert "chmod 600" in caplog.text
    assert ring.private_jwks()["keys"][0]["k"] not in caplog.text


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_a_rotated_key_file_others_may_read_is_loaded_with_a_warning(
    key_file: Path, monotonic: Monotonic, caplog: pytest.LogCaptureFixture
) -> None:
    write(key_file, Keyring.generate("HS256"))
    source = ReloadingKeyring.from_file(key_file, clock=monotonic)
    rotated = Keyring.generate("HS256")
    write(key_file, rotated)
    key_file.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="mrtr_state.reloading"):
        assert source.reload() is True
    assert "(mode 0644)" in caplog.text


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_a_key_file_only_its_owner_may_read_loads_without_a_warning(
    key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(key_file, Keyring.generate("HS256"))
    with caplog.at_level(logging.WARNING, logger="mrtr_state.reloading"):
        ReloadingKeyring.from_file(key_file)
    assert caplog.records == []


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o666, 0o602], ids=oct)
def test_a_key_file_anyone_may_write_is_refused_unless_allowed(
    key_file: Path, monotonic: Monotonic, caplog: pytest.LogCaptureFixture, mode: int
) -> None:
    ring = Keyring.generate("HS256")
    write(key_file, ring)
    key_file.chmod(mode)
    with pytest.raises(KeyringError, match=rf"anyone may write it \(mode {mode:04o}\).*chmod 600"):
        ReloadingKeyring.from_file(key_file)
    with caplog.at_level(logging.WARNING, logger="mrtr_state.reloading"):
        allowed = ReloadingKeyring.from_file(key_file, allow_world_writable=True)
    assert [k.kid for k in allowed.keys] == [k.kid for k in ring]
    assert f"(mode {mode:04o})" in caplog.text  # still a warning
    # A rotation to a file anyone may write is refused; the last good ring stays.
    key_file.chmod(0o600)
    source = ReloadingKeyring.from_file(key_file, clock=monotonic)
    write(key_file, Keyring.generate("HS256"))
    key_file.chmod(mode)
    with pytest.raises(KeyringError, match="anyone may write it"):
        source.reload()
    assert [k.kid for k in source.keys] == [k.kid for k in ring]
