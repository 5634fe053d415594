"""Keys and key rings: loading, generating, publishing, rotating; no secret ever shown."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import pickle
from concurrent.futures import ThreadPoolExecutor

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer
from tests.conftest import ISSUER, Clock

REQUEST = {"user": "alice", "tool": "deploy"}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def secrets_of(ring: Keyring) -> list[str]:
    return [jwk[m] for jwk in ring.private_jwks()["keys"] for m in ("k", "d") if m in jwk]


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_generated_keys_are_named_by_their_rfc7638_thumbprint(alg: str) -> None:
    key = Key.generate(alg)
    assert key.alg == alg
    assert key.can_sign
    assert key.kid == key.thumbprint()
    assert len(key.kid) == 43


def test_the_ed25519_thumbprint_matches_rfc8037_appendix_a3() -> None:
    # RFC 8037, A.3: the thumbprint of the Ed25519 key of A.1/A.2.
    key = Key.from_jwk({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"})
    assert key.thumbprint() == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    assert not key.can_sign


def test_an_ed25519_private_jwk_signs_as_rfc8037_appendix_a4() -> None:
    # RFC 8037, A.4: the JWS of the payload "Example of Ed25519 signing".
    key = Key.from_jwk(
        {
            "kty": "OKP",
            "crv": "Ed25519",
            "d": "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
            "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
        }
    )
    signing_input = b"eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
    assert b64(key.sign(signing_input)) == (
        "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
    )
    assert key.verify(signing_input, key.sign(signing_input))


def test_an_hs256_key_signs_as_hmac_sha256_of_its_secret_every_time() -> None:
    # The key keys HMAC once and copies that state per call: the copy must never be fed.
    secret = bytes(range(1, 33))
    key = Key.from_secret(secret, kid="k")
    for message in (b"", b"a", b"header.payload", os.urandom(1000), b"a"):
        expected = hmac.new(secret, message, hashlib.sha256).digest()
        assert key.sign(message) == expected
        assert key.verify(message, expected)
        assert not key.verify(message, expected[:-1] + bytes([expected[-1] ^ 1]))
        assert not key.verify(message, expected[:16])


def test_one_hs256_key_signs_and_verifies_from_many_threads_at_once() -> None:
    key = Key.from_secret(bytes(range(1, 33)), kid="k")
    messages = [os.urandom(64 + n) for n in range(200)]
    expected = [key.sign(message) for message in messages]

    def work(offset: int) -> bool:
        return all(
            key.sign(messages[(i + offset) % 200]) == expected[(i + offset) % 200]
            and key.verify(messages[(i + offset) % 200], expected[(i + offset) % 200])
            and not key.verify(messages[(i + offset) % 200], expected[(i + offset + 1) % 200])
            for i in range(200)
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, range(16)))


def test_an_hs256_secret_shorter_than_32_bytes_is_refused_with_how_to_make_one() -> None:
    with pytest.raises(KeyringError, match=r"at least 32 random bytes.*keygen") as caught:
        Key.from_jwk({"kty": "oct", "k": b64(b"x" * 31)})
    assert b64(b"x" * 31) not in str(caught.value)
    with pytest.raises(KeyringError, match="at least 32"):
        Key.from_secret(b"password")
    assert Key.from_secret(os.urandom(32)).alg == "HS256"


@pytest.mark.parametrize(
    ("jwk", "message"),
    [
        ({"kty": "RSA", "n": "AQAB", "e": "AQAB"}, "unsupported JWK key type"),
        ({"kty": "OKP", "crv": "X25519", "x": b64(bytes(32))}, "curve Ed25519"),
        ({"kty": "OKP", "crv": "Ed25519", "x": b64(bytes(31))}, "'x' must be 32 bytes"),
        ({"kty": "oct", "k": b64(bytes(32)) + "="}, "canonical unpadded base64url"),
        ({"kty": "oct", "k": 7}, "base64url string"),
        ({"kty": "oct", "alg": "HS512", "k": b64(bytes(32))}, "alg HS256"),
        ({"kty": "oct", "use": "enc", "k": b64(bytes(32))}, "use 'sig'"),
        ({"kty": "oct", "kid": "has space", "k": b64(bytes(32))}, "printable ASCII"),
        ({"kty": "OKP", "crv": "Ed25519", "alg": "ES256", "x": b64(bytes(32))}, "alg EdDSA"),
        (["not", "an", "object"], "JSON object"),
    ],
)
def test_a_jwk_the_profile_cannot_use_is_refused_clearly(jwk: object, message: str) -> None:
    with pytest.raises(KeyringError, match=message):
        Key.from_jwk(jwk)  # type: ignore[arg-type]


def test_an_unsupported_key_type_is_refused_without_showing_the_member() -> None:
    # A secret pasted into the wrong member must not reach the message (and so the logs).
    secret = b64(os.urandom(32))
    with pytest.raises(KeyringError, match="unsupported JWK key type") as caught:
        Key.from_jwk({"kty": secret, "k": b64(os.urandom(32))})
    assert secret not in str(caught.value)
    with pytest.raises(KeyringError) as caught:
        Keyring.from_jwks({"keys": [{"kty": "oct", "k": secret}, {"kty": secret}]})
    assert secret not in str(caught.value)


def test_an_ed25519_jwk_whose_x_is_not_the_public_key_of_d_is_refused() -> None:
    one, two = Key.generate("EdDSA").private_jwk(), Key.generate("EdDSA").private_jwk()
    with pytest.raises(KeyringError, match="not the public key of its 'd'"):
        Key.from_jwk({**one, "x": two["x"]})


def test_an_ed25519_jwk_with_alg_ed25519_loads_as_an_eddsa_key() -> None:
    jwk = {**Key.generate("EdDSA").public_jwk(), "alg": "Ed25519"}
    assert Key.from_jwk(jwk).alg == "EdDSA"


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_a_key_round_trips_through_its_private_jwk(alg: str) -> None:
    key = Key.generate(alg)
    again = Key.from_jwk(json.dumps(key.private_jwk()))
    assert again.kid == key.kid
    message = b"signing input"
    assert again.verify(message, key.sign(message))


def test_a_jwk_with_a_kid_keeps_it() -> None:
    jwk = {**Key.generate("HS256").private_jwk(), "kid": "2026-12-key"}
    assert Key.from_jwk(jwk).kid == "2026-12-key"
    assert Key.generate("EdDSA", kid="replica-a").kid == "replica-a"


def test_no_secret_shows_in_repr_str_or_errors_of_keys_and_rings() -> None:
    ring = Keyring([Key.generate("HS256"), Key.generate("EdDSA")])
    shown = " ".join([repr(ring), str(ring), *(repr(k) for k in ring), *(str(k) for k in ring)])
    sealer = StateSealer(ring, issuer=ISSUER)
    shown += repr(sealer) + str(sealer)
    for secret in secrets_of(ring):
        assert secret not in shown
    assert "HS256" in shown
    assert ring.keys[0].kid in shown


def test_keys_rings_and_sealers_are_immutable() -> None:
    ring = Keyring.generate("HS256")
    sealer = StateSealer(ring, issuer=ISSUER)
    for obj, name in ((ring.keys[0], "_secret"), (ring, "_keys"), (sealer, "_issuer"), (sealer, "ttl")):
        with pytest.raises(AttributeError):
            setattr(obj, name, None)
        with pytest.raises(AttributeError):
            delattr(obj, name)


def test_keys_and_rings_refuse_to_be_pickled() -> None:
    ring = Keyring.generate("HS256")
    with pytest.raises(TypeError, match="private_jwks"):
        pickle.dumps(ring)
    with pytest.raises(TypeError, match="private_jwks"):
        pickle.dumps(ring.keys[0])


def test_keys_are_made_by_their_constructors_only() -> None:
    with pytest.raises(TypeError, match=r"Key\.generate"):
        Key()


def test_public_jwks_holds_ed25519_public_keys_and_never_an_hs256_secret() -> None:
    ring = Keyring([Key.generate("HS256"), Key.generate("EdDSA")])
    published = ring.public_jwks()
    assert [jwk["kty"] for jwk in published["keys"]] == ["OKP"]
    assert set(published["keys"][0]) == {"kty", "crv", "x", "kid", "alg", "use"}
    text = json.dumps(published)
    for secret in secrets_of(ring):
        assert secret not in text
    with pytest.raises(KeyringError, match="no public JWK"):
        ring.keys[0].public_jwk()


def test_a_verify_only_replica_opens_what_the_signer_seals_but_cannot_seal(clock: Clock) -> None:
    signer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, clock=clock)
    replica = StateSealer(Keyring.from_jwks(signer.ring.public_jwks()), issuer=ISSUER, clock=clock)
    token = signer.seal({"step": 2}, **REQUEST)
    assert replica.open(token, **REQUEST) == {"step": 2}
    with pytest.raises(KeyringError, match="verify-only"):
        replica.seal({"step": 3}, **REQUEST)


def test_a_ring_loads_from_a_jwks_dict_or_its_json_text() -> None:
    ring = Keyring([Key.generate("EdDSA"), Key.generate("HS256")])
    for source in (ring.private_jwks(), json.dumps(ring.private_jwks())):
        loaded = Keyring.from_jwks(source)
        assert [k.kid for k in loaded] == [k.kid for k in ring]
        assert loaded.signing_key.kid == ring.keys[0].kid


@pytest.mark.parametrize(
    ("jwks", "message"),
    [
        ("{not json", "is not JSON"),
        ({"keys": []}, "at least one key"),
        ({"keys": "x"}, '"keys" array'),
        ([], '"keys" array'),
    ],
)
def test_a_jwks_the_profile_cannot_use_is_refused_clearly(jwks: object, message: str) -> None:
    with pytest.raises(KeyringError, match=message):
        Keyring.from_jwks(jwks)  # type: ignore[arg-type]


def test_two_keys_with_one_kid_are_refused() -> None:
    key = Key.generate("HS256")
    with pytest.raises(KeyringError, match="have the kid"):
        Keyring([key, Key.from_jwk(key.private_jwk())])


def test_from_env_reads_a_jwks_a_single_jwk_or_a_base64_secret() -> None:
    ring = Keyring([Key.generate("EdDSA"), Key.generate("HS256")])
    secret = bytes(range(32))
    environ = {
        "JWKS": json.dumps(ring.private_jwks()),
        "JWK": json.dumps(ring.keys[1].private_jwk()),
        "URLSAFE": b64(secret),
        "STANDARD": base64.b64encode(secret).decode(),
    }
    assert [k.kid for k in Keyring.from_env("JWKS", environ=environ)] == [k.kid for k in ring]
    assert Keyring.from_env("JWK", environ=environ).keys[0].kid == ring.keys[1].kid
    for name in ("URLSAFE", "STANDARD"):
        assert Keyring.from_env(name, environ=environ).keys[0].kid == Key.from_secret(secret).kid


def test_from_env_reads_mrtr_state_keys_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    ring = Keyring.generate("EdDSA")
    monkeypatch.setenv("MRTR_STATE_KEYS", json.dumps(ring.private_jwks()))
    assert Keyring.from_env().keys[0].kid == ring.keys[0].kid


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "MRTR_STATE_KEYS is not set"),
        ("   ", "MRTR_STATE_KEYS is not set"),
        ("{oops", "not JSON"),
        ("not a secret!", "neither JSON nor a base64 secret"),
        (b64(b"short"), "at least 32"),
    ],
)
def test_from_env_explains_what_is_wrong(value: str | None, message: str) -> None:
    environ = {} if value is None else {"MRTR_STATE_KEYS": value}
    with pytest.raises(KeyringError, match=message):
        Keyring.from_env(environ=environ)


def test_rotation_keeps_old_tokens_open_until_the_old_key_is_removed(clock: Clock) -> None:
    old_ring = Keyring.generate("EdDSA")
    old = StateSealer(old_ring, issuer=ISSUER, clock=clock)
    token = old.seal({"step": 1}, **REQUEST)

    new_key = Key.generate("EdDSA")
    staged = StateSealer(Keyring([*old_ring, new_key]), issuer=ISSUER, clock=clock)  # step 1: new key second
    assert staged.open(token, **REQUEST) == {"step": 1}
    assert staged.ring.signing_key.kid == old_ring.keys[0].kid

    rotated = StateSealer(old_ring.rotated(new_key), issuer=ISSUER, clock=clock)  # step 2: new key first
    assert rotated.open(token, **REQUEST) == {"step": 1}
    new_token = rotated.seal({"step": 2}, **REQUEST)
    assert new_token.split(".")[0] != token.split(".")[0]
    assert staged.open(new_token, **REQUEST) == {"step": 2}  # replicas still on step 1 open it

    retired = StateSealer(rotated.ring.without(old_ring.keys[0].kid), issuer=ISSUER, clock=clock)  # step 3
    assert retired.open(new_token, **REQUEST) == {"step": 2}
    with pytest.raises(InvalidRequestState) as caught:
        retired.open(token, **REQUEST)
    assert caught.value.reason == "unknown_key"


def test_removing_a_key_the_ring_does_not_hold_is_an_error() -> None:
    with pytest.raises(KeyringError, match="no key"):
        Keyring.generate("HS256").without("nope")


def test_an_unsupported_algorithm_is_refused_when_generating() -> None:
    with pytest.raises(KeyringError, match="HS256, EdDSA"):
        Key.generate("RS256")
