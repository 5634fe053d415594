"""The rules the profile revision made: key hygiene, unbindable arguments, the required binding,
jti length, typ as a decoded string, underflow, weak secrets in the environment."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer, arguments_digest
from mrtr_state.keys._ed25519 import decode_point, has_small_order, public_key_problem
from tests.conftest import ISSUER, Clock, SealerFactory

P = 2**255 - 19
IDENTITY = (1).to_bytes(32, "little")
ALL_ZERO = bytes(32)
ORDER_2 = (P - 1).to_bytes(32, "little")
VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_jwk(x: bytes) -> dict[str, str]:
    return {"kty": "OKP", "crv": "Ed25519", "x": b64(x)}


# --- 7.2: Ed25519 public keys ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "x",
    [IDENTITY, ALL_ZERO, ORDER_2, ORDER_8],
    ids=["identity", "all-zero (order 4)", "order 2", "order 8"],
)
def test_an_ed25519_key_of_small_order_is_refused_at_load(x: bytes) -> None:
    with pytest.raises(KeyringError, match="small order") as refused:
        Key.from_jwk(public_jwk(x))
    assert b64(x) not in str(refused.value)
    with pytest.raises(KeyringError, match="small order"):
        Keyring.from_env(environ={"MRTR_STATE_KEYS": json.dumps({"keys": [public_jwk(x)]})})


@pytest.mark.parametrize(
    "x",
    [
        (P + 1).to_bytes(32, "little"),  # the identity with y >= p
        P.to_bytes(32, "little"),  # an order-4 point with y >= p
        (1 | 1 << 255).to_bytes(32, "little"),  # the identity with the sign bit set on x = 0
        (2).to_bytes(32, "little"),  # y = 2 is on no point of the curve
    ],
    ids=["y = p + 1", "y = p", "x = 0 with sign bit", "not on the curve"],
)
def test_an_ed25519_key_that_is_not_a_canonical_point_is_refused_at_load(x: bytes) -> None:
    with pytest.raises(KeyringError, match="canonical encoding of a point"):
        Key.from_jwk(public_jwk(x))


def test_the_small_order_rule_stops_a_constant_signature_forgery() -> None:
    # The attack the rule stops: under the identity key, R = identity and S = 0 verify
    # whatever the message, in the Ed25519 library underneath. The key never loads.
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    constant = IDENTITY + bytes(32)
    raw = Ed25519PublicKey.from_public_bytes(IDENTITY)
    for message in (b"alice's token", b"mallory's token"):
        raw.verify(constant, message)  # no exception: the forgery the library alone allows
    with pytest.raises(KeyringError):
        Keyring([Key.from_jwk(public_jwk(IDENTITY))])


def test_generated_ed25519_keys_are_canonical_points_of_large_order() -> None:
    for _ in range(50):
        x = base64.urlsafe_b64decode(Key.generate("EdDSA").public_jwk()["x"] + "=")
        assert public_key_problem(x) is None
        Key.from_jwk(public_jwk(x))


def test_the_point_decoding_follows_rfc8032_and_finds_all_eight_torsion_points() -> None:
    # The RFC 8032 7.1 test 1 public key decodes; [8]P of the base point is not the identity.
    rfc_key = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    point = decode_point(rfc_key)
    assert point is not None
    assert not has_small_order(point)
    torsion = [decode_point(x) for x in (IDENTITY, ALL_ZERO, ORDER_2, ORDER_8)]
    assert all(p is not None and has_small_order(p) for p in torsion)


# --- 3.4: unbindable arguments and underflow ------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        {"id": 2**60},
        {"id": 2**53},
        {"id": -(2**53)},
        {"id": 1e23},
        {"id": 1.152921504606847e18},
        {"x": [[1e21]]},
    ],
)
def test_seal_refuses_unbindable_arguments_and_says_to_pass_strings(
    sealer: StateSealer, arguments: dict[str, object]
) -> None:
    with pytest.raises(ValueError, match="as strings"):
        sealer.seal({}, user="alice", tool="delete_message", arguments=arguments)


def test_the_safe_range_stays_bindable_as_integers_and_as_doubles() -> None:
    top = 2**53 - 1
    assert arguments_digest({"id": top}) == arguments_digest({"id": float(top)})
    assert arguments_digest({"id": -top}) == arguments_digest({"id": -float(top)})


def test_two_ids_beyond_2_53_can_no_longer_share_a_binding(make_sealer: SealerFactory) -> None:
    # What the issue found: 2**60 and 2**60 + 1 had one digest. Neither is bindable now,
    # and a token bound to the double's digest opens for neither.
    sealer = make_sealer()
    with pytest.raises(ValueError, match="as strings"):
        sealer.seal({}, user="alice", tool="delete_message", arguments={"id": 2**60})
    unbound = sealer.seal({}, user="alice", tool="delete_message", arguments={"id": "1152921504606846976"})
    for arguments in ({"id": 2**60}, {"id": 2**60 + 1}):
        with pytest.raises(InvalidRequestState) as refused:
            sealer.open(unbound, user="alice", tool="delete_message", arguments=arguments)
        assert refused.value.reason == "wrong_request"


def test_unbindable_arguments_do_not_matter_to_a_token_without_a_binding(sealer: StateSealer) -> None:
    token = sealer.seal({"n": 1}, user="alice", tool="deploy")
    assert sealer.open(token, user="alice", tool="deploy", arguments={"id": 2**60}) == {"n": 1}


def test_an_argument_that_underflows_is_read_as_zero(sealer: StateSealer) -> None:
    arguments = json.loads('{"tiny": 1e-400, "negative": -1e-400}')
    assert arguments_digest(arguments) == arguments_digest({"tiny": 0, "negative": 0})
    token = sealer.seal({}, user="alice", tool="deploy", arguments={"tiny": 0, "negative": 0})
    assert sealer.open(token, user="alice", tool="deploy", arguments=arguments) == {}


def test_a_state_number_that_underflows_opens_as_zero(ring: Keyring, clock: Clock) -> None:
    key = ring.signing_key
    header = b64(json.dumps({"alg": key.alg, "typ": "mrtr-state+jwt", "kid": key.kid}).encode())
    now = int(clock())
    claims = (
        f'{{"iss":"{ISSUER}","sub":"alice","aud":"tools/call:deploy","iat":{now},"exp":{now + 60},'
        f'"jti":"{b64(os.urandom(16))}","state":{{"tiny":1e-400}}}}'
    )
    payload = b64(claims.encode())
    token = f"{header}.{payload}.{b64(key.sign(f'{header}.{payload}'.encode()))}"
    assert StateSealer(ring, issuer=ISSUER, clock=clock).open(token, user="alice", tool="deploy") == {
        "tiny": 0
    }


# --- step 19: the required binding ---------------------------------------------------------------


def test_a_verifier_that_requires_the_binding_refuses_a_token_without_it(make_sealer: SealerFactory) -> None:
    minter, strict = make_sealer(), make_sealer(require_arguments=True)
    token = minter.seal({}, user="alice", tool="deploy")
    with pytest.raises(InvalidRequestState) as refused:
        strict.open(token, user="alice", tool="deploy", arguments={})
    assert refused.value.reason == "wrong_request"
    assert strict.require_arguments
    assert minter.open(token, user="alice", tool="deploy", arguments={}, require_arguments=False) == {}
    with pytest.raises(InvalidRequestState):
        minter.open(token, user="alice", tool="deploy", arguments={}, require_arguments=True)


def test_the_required_binding_never_applies_to_a_resource_read(make_sealer: SealerFactory) -> None:
    strict = make_sealer(require_arguments=True)
    token = strict.seal({"page": 2}, user="alice", resource="file:///q3.csv")
    assert strict.open(token, user="alice", resource="file:///q3.csv") == {"page": 2}


def test_a_sealer_that_requires_the_binding_will_not_mint_a_token_without_it(
    make_sealer: SealerFactory,
) -> None:
    strict = make_sealer(require_arguments=True)
    with pytest.raises(ValueError, match="require_arguments"):
        strict.seal({}, user="alice", prompt="summarize")
    token = strict.seal({}, user="alice", prompt="summarize", arguments={})
    assert strict.open(token, user="alice", prompt="summarize", arguments={}) == {}


def test_require_arguments_is_a_bool(make_sealer: SealerFactory) -> None:
    with pytest.raises(TypeError, match="require_arguments"):
        make_sealer(require_arguments="yes")


# --- 3.2.1: jti length; step 7: typ as a decoded string -------------------------------------------


def forged(ring: Keyring, clock: Clock, *, jti: str, header: bytes | None = None) -> str:
    key = ring.signing_key
    raw_header = header or json.dumps({"alg": key.alg, "typ": "mrtr-state+jwt", "kid": key.kid}).encode()
    now = int(clock())
    claims = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": "tools/call:deploy",
        "iat": now,
        "exp": now + 60,
        "jti": jti,
        "state": 1,
    }
    h, p = b64(raw_header), b64(json.dumps(claims).encode())
    return f"{h}.{p}.{b64(key.sign(f'{h}.{p}'.encode()))}"


@pytest.mark.parametrize(
    ("length", "accepted"), [(16, False), (21, False), (22, True), (64, True), (65, False)]
)
def test_a_jti_holds_22_to_64_base64url_characters(
    ring: Keyring, clock: Clock, length: int, accepted: bool
) -> None:
    sealer = StateSealer(ring, issuer=ISSUER, clock=clock)
    jti = (b64(hashlib.sha512(b"jti").digest()) * 2)[:length]
    token = forged(ring, clock, jti=jti)
    if accepted:
        assert sealer.open(token, user="alice", tool="deploy") == 1
    else:
        with pytest.raises(InvalidRequestState) as refused:
            sealer.open(token, user="alice", tool="deploy")
        assert refused.value.reason == "malformed"


def test_a_minter_writes_a_jti_of_22_characters(sealer: StateSealer) -> None:
    from mrtr_state import decode_unverified

    _, claims = decode_unverified(sealer.seal({}, user="alice", tool="deploy"))
    assert len(claims["jti"]) == 22


def test_typ_is_compared_as_the_decoded_string(ring: Keyring, clock: Clock) -> None:
    key = ring.signing_key
    sealer = StateSealer(ring, issuer=ISSUER, clock=clock)
    escaped = b'{"alg":"%s","typ":"mrtr-state\\u002bjwt","kid":"%s"}' % (key.alg.encode(), key.kid.encode())
    assert sealer.open(forged(ring, clock, jti="A" * 22, header=escaped), user="alice", tool="deploy") == 1
    wrong = b'{"alg":"%s","typ":"mrtr-state\\u002Bjwt ","kid":"%s"}' % (key.alg.encode(), key.kid.encode())
    with pytest.raises(InvalidRequestState) as refused:
        sealer.open(forged(ring, clock, jti="A" * 22, header=wrong), user="alice", tool="deploy")
    assert refused.value.reason == "wrong_type"


# --- 7.1: obvious non-random secrets in the environment -------------------------------------------


@pytest.mark.parametrize(
    ("secret", "what"),
    [
        (b"a" * 32, "one byte repeated"),
        (bytes(48), "one byte repeated"),
        (b"ab" * 16, "a pattern of 2 bytes"),
        (b"secret12" * 4, "a pattern of 8 bytes"),
        (b"passwd" * 6, "a pattern of 6 bytes"),
    ],
)
def test_the_environment_refuses_an_obviously_non_random_secret(secret: bytes, what: str) -> None:
    value = base64.b64encode(secret).decode()
    with pytest.raises(KeyringError, match="mrtr-state keygen") as refused:
        Keyring.from_env(environ={"MRTR_STATE_KEYS": value})
    assert what in str(refused.value)
    assert value not in str(refused.value)


def test_the_environment_accepts_a_random_secret_and_a_longer_pattern() -> None:
    Keyring.from_env(environ={"MRTR_STATE_KEYS": b64(os.urandom(32))})
    Keyring.from_env(environ={"MRTR_STATE_KEYS": b64(b"123456789" * 4)})  # period 9: not refused


# --- 7.1: one weak-secret rule for every oct secret, in every form (issue 24, D5) -----------------


def oct_jwk(secret: bytes, alg: str = "HS256", **members: object) -> dict[str, object]:
    return {"kty": "oct", "alg": alg, "k": b64(secret), **members}


@pytest.mark.parametrize("alg", ["HS256", "A256GCM"])
@pytest.mark.parametrize(
    ("secret", "what"),
    [
        (bytes(32), "one byte repeated"),
        (b"\xa5" * 32, "one byte repeated"),
        (b"abc" * 10 + b"ab", "a pattern of 3 bytes"),
        (b"secret12" * 4, "a pattern of 8 bytes"),
    ],
    ids=["all-zero", "one-byte", "period-3", "period-8"],
)
def test_a_weak_oct_secret_is_refused_in_every_form(alg: str, secret: bytes, what: str) -> None:
    forms = [
        lambda: Key.from_jwk(oct_jwk(secret, alg)),
        lambda: Key.from_jwk(json.dumps(oct_jwk(secret, alg, kid="explicit"))),
        lambda: Keyring.from_jwks({"keys": [oct_jwk(secret, alg)]}),
        lambda: Keyring.from_env(environ={"MRTR_STATE_KEYS": json.dumps({"keys": [oct_jwk(secret, alg)]})}),
        lambda: Keyring.from_env(environ={"MRTR_STATE_KEYS": json.dumps(oct_jwk(secret, alg))}),
    ]
    if alg == "HS256":
        forms.append(lambda: Key.from_secret(secret))
    for load in forms:
        with pytest.raises(KeyringError, match="keygen") as refused:
            load()
        assert what in str(refused.value)
        assert b64(secret) not in str(refused.value)


def test_a_longer_pattern_and_random_secrets_still_load_in_every_oct_form() -> None:
    Key.from_jwk(oct_jwk(b"123456789" * 4))  # period 9: not refused
    Key.from_jwk(oct_jwk(os.urandom(32), "A256GCM"))
    for alg in ("HS256", "A256GCM"):
        for _ in range(20):
            Keyring.generate(alg)


# --- 7.6 / 9.10: one secret never serves as an encryption key and another key (D4) -----------------


def shared_secret_rings(secret: bytes) -> list[list[dict[str, object]]]:
    enc = oct_jwk(secret, "A256GCM", use="enc", kid="enc")
    sig = oct_jwk(secret, kid="sig")
    return [
        [enc, sig],
        [sig, enc],
        [enc, oct_jwk(secret, "A256GCM", kid="enc-2")],
        [sig, oct_jwk(os.urandom(32), kid="other"), enc],
    ]


def test_a_ring_where_an_encryption_key_shares_its_secret_is_refused_whatever_the_kids() -> None:
    secret = os.urandom(32)
    for keys in shared_secret_rings(secret):
        with pytest.raises(KeyringError, match="hold the same secret") as refused:
            Keyring.from_jwks({"keys": keys})
        assert b64(secret) not in str(refused.value)
        with pytest.raises(KeyringError, match="hold the same secret"):
            Keyring.from_env(environ={"MRTR_STATE_KEYS": json.dumps({"keys": keys})})
        with pytest.raises(KeyringError, match="hold the same secret"):
            Keyring([Key.from_jwk(jwk) for jwk in keys])


def test_the_shared_secret_attack_of_issue_24_no_longer_loads() -> None:
    # Whoever held the HS256 secret could decrypt every encrypted state of the ring.
    k = b64(os.urandom(32))
    with pytest.raises(KeyringError, match="hold the same secret"):
        Keyring.from_jwks(
            {
                "keys": [
                    {"kty": "oct", "alg": "A256GCM", "k": k, "kid": "enc"},
                    {"kty": "oct", "k": k, "kid": "sig"},
                ]
            }
        )


def test_rotation_cannot_bring_a_shared_secret_into_a_ring() -> None:
    secret = os.urandom(32)
    ring = Keyring([Key.from_jwk(oct_jwk(secret, kid="sig"))])
    with pytest.raises(KeyringError, match="hold the same secret"):
        ring.rotated(Key.from_jwk(oct_jwk(secret, "A256GCM", kid="enc")))


def test_keys_of_distinct_secrets_and_two_hs256_keys_of_one_secret_still_load() -> None:
    secret = os.urandom(32)
    Keyring.from_jwks({"keys": [oct_jwk(secret, "A256GCM", kid="enc"), oct_jwk(os.urandom(32), kid="sig")]})
    # Not named by the rule: two HS256 kids for one secret serve one algorithm.
    Keyring.from_jwks({"keys": [oct_jwk(secret, kid="a"), oct_jwk(secret, kid="b")]})


# --- 7.4: an explicit kid is refused at load unless it is 1 to 128 printable ASCII (D3) -----------


@pytest.mark.parametrize(
    "kid",
    ["", "has space", "x" * 129, "caf\u00e9", "tab\there", "nul\u0000", "del\u007f", 7, None, True, ["k"]],
    ids=["empty", "space", "129", "non-ascii", "tab", "nul", "del", "number", "null", "bool", "array"],
)
@pytest.mark.parametrize("alg", ["HS256", "A256GCM", "EdDSA"])
def test_an_explicit_kid_outside_the_rule_is_refused_at_load(kid: object, alg: str) -> None:
    jwk = Key.generate(alg).private_jwk()
    jwk["kid"] = kid  # type: ignore[assignment]
    with pytest.raises(KeyringError, match="printable ASCII"):
        Key.from_jwk(jwk)
    with pytest.raises(KeyringError, match="printable ASCII"):
        Keyring.from_jwks({"keys": [jwk]})


@pytest.mark.parametrize("kid", ["a", "x" * 128, "!~", "key-2026-01:sig/1"])
def test_an_explicit_kid_of_1_to_128_printable_ascii_loads(kid: str) -> None:
    for alg in ("HS256", "A256GCM", "EdDSA"):
        jwk = Key.generate(alg).private_jwk()
        assert Key.from_jwk({**jwk, "kid": kid}).kid == kid


# --- 5.1: a ring without an encryption key (issue 24, item 15) -------------------------------------


def test_a_ring_without_an_encryption_key_refuses_an_encrypted_token_naming_its_signing_key_at_step_9() -> (
    None
):
    vectors = json.loads((VECTORS / "encrypted.json").read_text(encoding="utf-8"))
    keys = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))
    vector = next(v for v in vectors["vectors"] if v["id"] == "encrypted-algorithm-mismatch-hs256-key")
    signing_only = Keyring.from_jwks(keys["verifier_jwks"])  # no encryption key at all
    sealer = StateSealer(signing_only, issuer=vectors["defaults"]["issuer"], clock=lambda: vector["now"])
    with pytest.raises(InvalidRequestState) as refused:
        sealer.open(vector["token"], user=vector["user"], tool=vector["tool"], arguments=vector["arguments"])
    assert refused.value.reason == "algorithm_mismatch"
