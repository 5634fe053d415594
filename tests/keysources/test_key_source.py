"""StateSealer with a key source whose keys change: the fast path follows, nothing stale opens."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer, decode_unverified
from mrtr_state.keys.key_source import is_key_source
from mrtr_state.keys.reloading import ReloadingKeyring
from mrtr_state.keys.remote_jwks import RemoteJWKS
from tests.conftest import ISSUER
from tests.keysources.jwks_server import JWKSServer


class Swappable:
    """A key source the test swaps by hand; counts the refreshes asked of it."""

    def __init__(self, ring: Keyring, *, refresh_result: bool = False, refresh_raises: bool = False) -> None:
        self.ring = ring
        self.refreshes = 0
        self.refresh_result = refresh_result
        self.refresh_raises = refresh_raises

    @property
    def keys(self) -> tuple[Key, ...]:
        return self.ring.keys

    def refresh_for_unknown_key(self) -> bool:
        self.refreshes += 1
        if self.refresh_raises:
            raise RuntimeError("the key service is down")
        return self.refresh_result

    async def refresh_for_unknown_key_async(self) -> bool:
        return self.refresh_for_unknown_key()


def open_token(sealer: StateSealer, token: str) -> Any:
    return sealer.open(token, user="alice", tool="deploy")


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_a_key_removed_from_the_source_stops_opening_its_tokens(alg: str) -> None:
    old = Keyring.generate(alg)
    source = Swappable(old)
    sealer = StateSealer(source, issuer=ISSUER)
    token = sealer.seal({}, user="alice", tool="deploy")
    assert open_token(sealer, token) == {}  # through the fast path of the old keys
    source.ring = Keyring([Key.generate(alg)])
    with pytest.raises(InvalidRequestState) as refused:
        open_token(sealer, token)
    assert refused.value.reason == "unknown_key"


def test_seal_signs_with_the_first_key_of_the_current_generation() -> None:
    first = Keyring.generate("HS256")
    source = Swappable(first)
    sealer = StateSealer(source, issuer=ISSUER)
    assert decode_unverified(sealer.seal({}, user="alice", tool="deploy"))[0]["kid"] == first.keys[0].kid
    rotated = first.rotated(Key.generate("HS256"))
    source.ring = rotated
    token = sealer.seal({}, user="alice", tool="deploy")
    assert decode_unverified(token)[0]["kid"] == rotated.keys[0].kid
    assert open_token(StateSealer(Keyring([rotated.keys[0]]), issuer=ISSUER), token) == {}


def test_an_unknown_kid_is_retried_once_whatever_the_source_answers() -> None:
    source = Swappable(Keyring.generate("HS256"), refresh_result=True)
    sealer = StateSealer(source, issuer=ISSUER)
    stranger = StateSealer(Keyring.generate("HS256"), issuer=ISSUER).seal({}, user="alice", tool="deploy")
    with pytest.raises(InvalidRequestState) as refused:
        open_token(sealer, stranger)
    assert refused.value.reason == "unknown_key"
    assert source.refreshes == 1

    async def run() -> None:
        await sealer.open_async(stranger, user="alice", tool="deploy")

    with pytest.raises(InvalidRequestState):
        asyncio.run(run())
    assert source.refreshes == 2


def test_keys_that_changed_meanwhile_open_the_token_even_if_this_look_found_nothing() -> None:
    """Another thread (or a background fetch) installed the new keys between the attempt and the look."""
    old = Keyring.generate("HS256")
    rotated = old.rotated(Key.generate("HS256"))

    class Raced(Swappable):
        def refresh_for_unknown_key(self) -> bool:
            self.refreshes += 1
            self.ring = rotated  # installed by someone else: this look sees nothing new
            return False

    for opener in ("sync", "async"):
        source = Raced(old)
        sealer = StateSealer(source, issuer=ISSUER)
        token = StateSealer(rotated, issuer=ISSUER).seal({}, user="alice", tool="deploy")
        if opener == "sync":
            assert open_token(sealer, token) == {}
        else:
            assert asyncio.run(sealer.open_async(token, user="alice", tool="deploy")) == {}
        assert source.refreshes == 1


def test_only_unknown_key_refusals_ask_the_source_to_refresh() -> None:
    source = Swappable(Keyring.generate("HS256"), refresh_result=True)
    sealer = StateSealer(source, issuer=ISSUER)
    token = sealer.seal({}, user="alice", tool="deploy")
    with pytest.raises(InvalidRequestState):
        sealer.open(token, user="bob", tool="deploy")
    with pytest.raises(InvalidRequestState):
        open_token(sealer, token[:-3] + "AAA")
    assert source.refreshes == 0


def test_a_source_that_raises_while_refreshing_is_a_refusal_not_a_crash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    source = Swappable(Keyring.generate("HS256"), refresh_raises=True)
    sealer = StateSealer(source, issuer=ISSUER)
    stranger = StateSealer(Keyring.generate("HS256"), issuer=ISSUER).seal({}, user="alice", tool="deploy")
    with caplog.at_level(logging.ERROR), pytest.raises(InvalidRequestState) as refused:
        open_token(sealer, stranger)
    assert refused.value.reason == "unknown_key"

    async def run() -> None:
        await sealer.open_async(stranger, user="alice", tool="deploy")

    with pytest.raises(InvalidRequestState) as refused_async:
        asyncio.run(run())
    assert refused_async.value.reason == "unknown_key"
    assert "looking for a new key" in caplog.text


def test_a_keyring_is_a_key_source_and_a_mapping_is_not() -> None:
    assert is_key_source(Keyring.generate("HS256"))
    assert is_key_source(Swappable(Keyring.generate("HS256")))
    assert not is_key_source({"keys": []})
    with pytest.raises(TypeError, match="Keyring or a key source"):
        StateSealer({"keys": []}, issuer=ISSUER)  # type: ignore[arg-type]


def test_a_verify_only_source_cannot_seal() -> None:
    public = Keyring.from_jwks(Keyring.generate("EdDSA").public_jwks())
    sealer = StateSealer(Swappable(public), issuer=ISSUER)
    with pytest.raises(KeyringError, match="verify-only"):
        sealer.seal({}, user="alice", tool="deploy")


def test_remote_keys_are_read_by_keyring_from_jwks(
    server: JWKSServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every rule of a local JWKS (present and future) applies to a remote one: it is the same code."""
    ring = Keyring.generate("EdDSA")
    server.behaviour.serve(ring)
    seen: list[Any] = []
    original = Keyring.from_jwks.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Keyring], jwks: Any) -> Keyring:
        seen.append(jwks)
        return original(cls, jwks)  # type: ignore[no-any-return]

    monkeypatch.setattr(Keyring, "from_jwks", classmethod(spy))
    RemoteJWKS.load(server.url)
    assert seen == [server.behaviour.body.decode()]

    def refuse(cls: type[Keyring], jwks: Any) -> Keyring:
        raise KeyringError("refused by a rule of Keyring.from_jwks")

    monkeypatch.setattr(Keyring, "from_jwks", classmethod(refuse))
    with pytest.raises(KeyringError, match=r"refused by a rule of Keyring\.from_jwks"):
        RemoteJWKS.load(server.url)


def test_key_files_are_read_by_keyring_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reread file is checked exactly as MRTR_STATE_KEYS is at start-up: it is the same code."""
    path = tmp_path / "keys.json"
    text = json.dumps(Keyring.generate("HS256").private_jwks())
    path.write_text(text, encoding="utf-8")

    def refuse(cls: type[Keyring], name: str = "", *, environ: Any = None) -> Keyring:
        assert environ == {"MRTR_STATE_KEYS": text}
        raise KeyringError("refused by a rule of Keyring.from_env")

    monkeypatch.setattr(Keyring, "from_env", classmethod(refuse))
    with pytest.raises(KeyringError, match=r"refused by a rule of Keyring\.from_env"):
        ReloadingKeyring.from_file(path)


def test_a_source_that_hands_out_unusable_keys_keeps_the_last_good_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ring = Keyring.generate("HS256")
    source = Swappable(ring)
    sealer = StateSealer(source, issuer=ISSUER)
    token = sealer.seal({}, user="alice", tool="deploy")
    rotated = ring.rotated(Key.generate("HS256"))
    source.ring = rotated
    assert open_token(sealer, token) == {}  # a sealer for the new keys was made
    key = rotated.keys[0]

    class Broken:
        keys = (key, key)  # two keys with one kid: not a ring

    source.ring = Broken()  # type: ignore[assignment]
    with caplog.at_level(logging.ERROR, logger="mrtr_state.sealer"):
        for _ in range(3):
            assert open_token(sealer, token) == {}  # the last good keys
            assert decode_unverified(sealer.seal({}, user="alice", tool="deploy"))[0]["kid"] == key.kid
    assert len([r for r in caplog.records if "cannot be used" in r.getMessage()]) == 1
