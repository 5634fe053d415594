"""The encrypted form (profile, sections 3.6, 5.1, 7.6): keys, minting, every step, and rule AGT-18.

The state travels as a JWE (dir, A256GCM) that the client cannot read; every refusal of
the signed form still happens, with the reason codes of section 5.1.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from joserfc import jwe as joserfc_jwe
from joserfc.jwk import OctKey

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer
from mrtr_state.token._b64 import decode, encode
from tests.conftest import ISSUER, ONE_CHANGE_REASONS, Clock, one_character_changes

REQUEST: dict[str, Any] = {"user": "alice@example.com", "tool": "deploy", "arguments": {"env": "prod"}}
STATE = {"customer_id": "cus_8f3a2b", "plan": ["charge-card", "ship-order"], "email": "alice@example.com"}
JWE_ALGORITHMS = ["dir", "A256GCM"]


@pytest.fixture(scope="module")
def enc_ring() -> Keyring:
    return Keyring.generate("A256GCM")


@pytest.fixture
def enc_sealer(enc_ring: Keyring, clock: Clock) -> StateSealer:
    return StateSealer(enc_ring, issuer=ISSUER, clock=clock)


def secret_of(key: Key) -> bytes:
    return decode(key.private_jwk()["k"])


def refusal(sealer: StateSealer, token: object, **request: object) -> str:
    with pytest.raises(InvalidRequestState) as caught:
        sealer.open(token, **{**REQUEST, **request})  # type: ignore[arg-type]
    return caught.value.reason


def forge(
    key: Key,
    header: dict[str, Any] | bytes,
    claims: dict[str, Any] | bytes,
    *,
    iv: bytes = bytes(range(12)),
    secret: bytes | None = None,
) -> str:
    """A compact JWE assembled by hand, so that each test can break exactly one rule."""
    h = encode(header if isinstance(header, bytes) else json.dumps(header).encode())
    plaintext = claims if isinstance(claims, bytes) else json.dumps(claims).encode()
    sealed = AESGCM(secret if secret is not None else secret_of(key)).encrypt(iv, plaintext, h.encode())
    return f"{h}..{encode(iv)}.{encode(sealed[:-16])}.{encode(sealed[-16:])}"


def header_of(key: Key, **changes: Any) -> dict[str, Any]:
    header = {"alg": "dir", "enc": "A256GCM", "typ": "mrtr-state+jwt", "kid": key.kid}
    header.update(changes)
    return {k: v for k, v in header.items() if v is not None}


def claims_of(sealer: StateSealer, clock: Clock, **changes: Any) -> dict[str, Any]:
    """The claims a fresh token carries, read back with the key (then edited)."""
    key = sealer.ring.keys[0]
    h, _, iv, ct, tag = sealer.seal(STATE, **REQUEST).split(".")
    claims: dict[str, Any] = json.loads(
        AESGCM(secret_of(key)).decrypt(decode(iv), decode(ct) + decode(tag), h.encode())
    )
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


# --- keys (section 7.6) ----------------------------------------------------------------------------


def test_a_generated_encryption_key_is_32_bytes_named_by_its_thumbprint() -> None:
    key = Key.generate("A256GCM")
    assert key.alg == "A256GCM"
    assert key.can_sign
    assert key.kid == key.thumbprint()
    jwk = key.private_jwk()
    assert jwk == {"kty": "oct", "alg": "A256GCM", "use": "enc", "kid": key.kid, "k": jwk["k"]}
    assert len(decode(jwk["k"])) == 32
    assert Keyring.generate("A256GCM").signing_key.alg == "A256GCM"


def test_an_encryption_key_round_trips_through_its_jwk_and_a_jwks() -> None:
    key = Key.generate("A256GCM")
    again = Key.from_jwk(key.private_jwk())
    assert (again.alg, again.kid, again.private_jwk()) == ("A256GCM", key.kid, key.private_jwk())
    ring = Keyring.from_jwks(json.dumps(Keyring([key]).private_jwks()))
    assert ring.keys[0].private_jwk() == key.private_jwk()
    bare = {"kty": "oct", "alg": "A256GCM", "k": key.private_jwk()["k"]}
    assert Key.from_jwk(bare).kid == key.kid  # use optional, kid defaults to the thumbprint


@pytest.mark.parametrize(
    ("jwk", "message"),
    [
        ({"kty": "oct", "alg": "A256GCM", "k": encode(bytes(31))}, "exactly 32"),
        ({"kty": "oct", "alg": "A256GCM", "k": encode(bytes(48))}, "exactly 32"),
        ({"kty": "oct", "alg": "A256GCM", "use": "sig", "k": encode(bytes(32))}, "use 'enc'"),
        ({"kty": "oct", "alg": "A256GCM", "k": encode(bytes(32)) + "="}, "canonical unpadded"),
        ({"kty": "oct", "alg": "A256GCM", "kid": "a b", "k": encode(bytes(32))}, "printable ASCII"),
        ({"kty": "oct", "use": "enc", "k": encode(bytes(32))}, "alg 'A256GCM' and use 'enc'"),
        ({"kty": "oct", "alg": "A128GCM", "k": encode(bytes(16))}, "alg HS256"),
    ],
)
def test_an_encryption_jwk_the_profile_cannot_use_is_refused_clearly(
    jwk: dict[str, Any], message: str
) -> None:
    with pytest.raises(KeyringError, match=message) as caught:
        Key.from_jwk(jwk)
    assert jwk["k"] not in str(caught.value)


def test_an_oct_jwk_without_alg_stays_an_hs256_secret() -> None:
    assert Key.from_jwk({"kty": "oct", "k": encode(bytes(range(32)))}).alg == "HS256"


def test_an_hs256_and_an_encryption_key_with_one_secret_cannot_share_a_ring() -> None:
    secret = encode(bytes(range(32)))
    hs = Key.from_jwk({"kty": "oct", "k": secret})
    enc = Key.from_jwk({"kty": "oct", "alg": "A256GCM", "k": secret})
    assert hs.kid == enc.kid
    with pytest.raises(KeyringError, match="two keys in the ring"):
        Keyring([enc, hs])


def test_an_encryption_key_never_signs_never_verifies_and_is_never_published() -> None:
    key = Key.generate("A256GCM")
    with pytest.raises(KeyringError, match="does not sign"):
        key.sign(b"message")
    assert key.verify(b"message", bytes(32)) is False
    with pytest.raises(KeyringError, match="no public JWK"):
        key.public_jwk()
    ring = Keyring([key, Key.generate("EdDSA"), Key.generate("HS256")])
    published = ring.public_jwks()["keys"]
    assert [jwk["kty"] for jwk in published] == ["OKP"]
    assert all("k" not in jwk for jwk in published)
    assert [jwk["alg"] for jwk in ring.private_jwks()["keys"]] == ["A256GCM", "EdDSA", "HS256"]


def test_no_encryption_key_bytes_show_in_a_repr_or_an_error() -> None:
    key = Key.generate("A256GCM")
    k = key.private_jwk()["k"]
    sealer = StateSealer(Keyring([key]), issuer=ISSUER)
    for text in (repr(key), str(key), repr(Keyring([key])), repr(sealer)):
        assert k not in text
        assert "A256GCM" in text


def test_mrtr_state_keys_takes_a_jwks_with_an_encryption_key_and_a_bare_secret_stays_hs256() -> None:
    ring = Keyring.generate("A256GCM")
    loaded = Keyring.from_env(environ={"MRTR_STATE_KEYS": json.dumps(ring.private_jwks())})
    assert loaded.signing_key.alg == "A256GCM"
    single = Keyring.from_env(environ={"MRTR_STATE_KEYS": json.dumps(ring.keys[0].private_jwk())})
    assert single.signing_key.kid == ring.keys[0].kid
    bare = Keyring.from_env(environ={"MRTR_STATE_KEYS": ring.keys[0].private_jwk()["k"]})
    assert bare.signing_key.alg == "HS256"


# --- minting (sections 3.6 and 4) ------------------------------------------------------------------


def test_an_a256gcm_ring_mints_a_compact_jwe_with_dir_and_a256gcm(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    header, encrypted_key, iv, _, tag = token.split(".")
    assert json.loads(decode(header)) == {
        "alg": "dir",
        "enc": "A256GCM",
        "typ": "mrtr-state+jwt",
        "kid": enc_sealer.ring.keys[0].kid,
    }
    assert list(json.loads(decode(header))) == ["alg", "enc", "typ", "kid"]
    assert encrypted_key == ""
    assert (len(iv), len(decode(iv)), len(tag), len(decode(tag))) == (16, 12, 22, 16)
    assert enc_sealer.open(token, **REQUEST) == STATE


def test_the_iv_never_comes_from_the_entropy_hook_so_a_stuck_hook_still_gives_distinct_ivs(
    enc_ring: Keyring, clock: Clock
) -> None:
    draws: list[int] = []

    def stuck(n: int) -> bytes:
        draws.append(n)
        return bytes(n)

    sealer = StateSealer(enc_ring, issuer=ISSUER, clock=clock, entropy=stuck)
    tokens = [sealer.seal(STATE, **REQUEST) for _ in range(50)]
    assert draws == [16] * 50  # the jti only, never the IV
    ivs = {token.split(".")[2] for token in tokens}
    assert len(ivs) == 50
    assert encode(bytes(12)) not in ivs
    assert sealer.open(tokens[-1], **REQUEST) == STATE


def test_no_byte_of_the_state_or_the_user_is_readable_in_the_token(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    decoded = b"".join(decode(segment) for segment in token.split(".") if segment)
    # Strings of 8 characters or more: a random text of this length holds a given
    # shorter one by chance too often for a test that must not be flaky.
    secrets = [REQUEST["user"], "cus_8f3a2b", "charge-card", "ship-order", "tools/call:deploy", ISSUER]
    for text in secrets:
        raw = text.encode()
        assert raw not in decoded, text
        assert text not in token, text
        for shift in range(3):  # the base64url of the text at every alignment
            assert encode(bytes(shift) + raw)[4:-4] not in token, text
    header = json.loads(decode(token.split(".")[0]))
    assert set(header) == {"alg", "enc", "typ", "kid"}


def test_the_size_cap_counts_the_whole_encrypted_token(enc_ring: Keyring, clock: Clock) -> None:
    sealer = StateSealer(enc_ring, issuer=ISSUER, clock=clock, max_token_bytes=1024)
    fits = sealer.seal({"filler": "x" * 300}, **REQUEST)
    assert len(fits) <= 1024
    with pytest.raises(ValueError, match="over the cap of 1024"):
        sealer.seal({"filler": "x" * 900}, **REQUEST)


def test_the_predicted_size_is_the_minted_size(enc_ring: Keyring, clock: Clock) -> None:
    for filler in range(100, 140):
        state = {"f": "x" * filler}
        length = len(StateSealer(enc_ring, issuer=ISSUER, clock=clock).seal(state, **REQUEST))
        exact = StateSealer(enc_ring, issuer=ISSUER, clock=clock, max_token_bytes=length)
        assert len(exact.seal(state, **REQUEST)) == length
        with pytest.raises(ValueError, match="over the cap"):
            StateSealer(enc_ring, issuer=ISSUER, clock=clock, max_token_bytes=length - 1).seal(
                state, **REQUEST
            )


# --- an independent JOSE implementation reads and mints the same tokens -------------------------------


def test_an_independent_jwe_library_decrypts_the_token_with_the_raw_key(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    key = OctKey.import_key(secret_of(enc_sealer.ring.keys[0]))
    opened = joserfc_jwe.decrypt_compact(token, key, algorithms=JWE_ALGORITHMS)
    claims = json.loads(opened.plaintext or b"")
    assert claims["sub"] == REQUEST["user"]
    assert claims["aud"] == "tools/call:deploy"
    assert claims["state"] == STATE
    assert claims["exp"] - claims["iat"] == 600


def test_a_token_minted_by_an_independent_jwe_library_opens(enc_sealer: StateSealer, clock: Clock) -> None:
    key = enc_sealer.ring.keys[0]
    claims = claims_of(enc_sealer, clock)
    token = joserfc_jwe.encrypt_compact(
        header_of(key), json.dumps(claims), OctKey.import_key(secret_of(key)), algorithms=JWE_ALGORITHMS
    )
    assert enc_sealer.open(token, **REQUEST) == STATE


# --- rule AGT-18 on the encrypted form ------------------------------------------------------------------


def test_every_one_character_change_of_an_encrypted_token_is_refused(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    for i, changed in one_character_changes(token, steps=(1, 17)):
        assert refusal(enc_sealer, changed) in ONE_CHANGE_REASONS, f"position {i}"


def _full_path_refusal(sealer: StateSealer, token: str) -> tuple[str, str]:
    """Open's refusal without jwe.open_known: jwe.open_claims for five segments, else jws.verify."""
    from mrtr_state.token import jwe, jws

    ring = sealer.ring
    assert isinstance(ring, Keyring)
    cap = sealer.max_token_bytes

    def full_path() -> object:
        if jwe.is_encrypted(token, cap):
            return jwe.open_claims(token, cap, jwe.known_headers(ring), ring)
        return jws.verify(token, cap, jws.known_headers(ring), ring)

    with pytest.raises(InvalidRequestState) as full:
        full_path()
    return full.value.reason, full.value.detail


@pytest.mark.parametrize("tail", [":", " ", "\u00e9", "=", "+", "/", "*", "A", "AA", "AAA", ".A", "."])
def test_the_common_encrypted_token_path_refuses_as_the_full_path_does(
    enc_sealer: StateSealer, tail: str
) -> None:
    # jwe.open_known (what open tries for an encrypted token) leaves every damaged token to jwe.open_claims.
    token = enc_sealer.seal(STATE, **REQUEST)
    for changed in (token + tail, tail + token, token.replace(".", "." + tail, 1)):
        with pytest.raises(InvalidRequestState) as opened:
            enc_sealer.open(changed, **REQUEST)
        assert (opened.value.reason, opened.value.detail) == _full_path_refusal(enc_sealer, changed)


def test_every_one_character_change_takes_the_full_paths_refusal(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    first, second = token.index("."), token.index(".", token.index(".") + 1)
    damaged = [changed for _, changed in one_character_changes(token, steps=(1, 17, 63))]
    # Segments dropped, emptied, doubled, or an encrypted key that is not empty.
    segments = token.split(".")
    damaged += [
        ".".join(segments[:3] + segments[4:]),
        ".".join([*segments[:2], "", segments[3], segments[4]]),
        ".".join([*segments[:3], "", segments[4]]),
        ".".join([*segments[:4], ""]),
        ".".join([*segments, segments[4]]),
        token[:first] + ".AAAA" + token[second:],
        token[: first + 1] + token[second + 1 :],
    ]
    for changed in damaged:
        with pytest.raises(InvalidRequestState) as opened:
            enc_sealer.open(changed, **REQUEST)
        assert (opened.value.reason, opened.value.detail) == _full_path_refusal(enc_sealer, changed), changed


def test_an_encrypted_token_that_only_the_full_path_reads_still_opens(
    enc_ring: Keyring, clock: Clock
) -> None:
    # A protected header the ring does not mint with (its members in another order) is not
    # known to the fast path, so the full path reads it: the same claims open.
    sealer = StateSealer(enc_ring, issuer=ISSUER, clock=clock)
    minted = sealer.seal(STATE, **REQUEST)
    h, _, iv, ciphertext, tag = minted.split(".")
    key = next(iter(enc_ring))
    claims = AESGCM(secret_of(key)).decrypt(decode(iv), decode(ciphertext) + decode(tag), h.encode())
    header = {"enc": "A256GCM", "alg": "dir", "kid": key.kid, "typ": "mrtr-state+jwt"}
    reordered = forge(key, header, claims)
    assert reordered.split(".")[0] != h
    assert sealer.open(reordered, **REQUEST) == STATE


def test_an_encrypted_state_opens_until_the_600th_second_and_not_at_it(
    enc_sealer: StateSealer, clock: Clock
) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    clock.advance(599)
    assert enc_sealer.open(token, **REQUEST) == STATE
    clock.advance(1)
    assert refusal(enc_sealer, token) == "expired"


def test_an_encrypted_state_presented_by_another_user_is_refused(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    assert refusal(enc_sealer, token, user="mallory@example.com") == "wrong_user"


def test_an_encrypted_state_for_another_target_or_arguments_is_refused(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    assert refusal(enc_sealer, token, tool="delete_repo") == "wrong_tool"
    assert refusal(enc_sealer, token, arguments={"env": "staging"}) == "wrong_request"
    other = StateSealer(enc_sealer.ring, issuer="https://other.example.com", clock=lambda: 1_767_225_600)
    assert refusal(other, token) == "wrong_issuer"


_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def noncanonical(segment: str) -> str:
    """Set an unused low bit of the last character: a lax decoder reads the same bytes."""
    return segment[:-1] + _ALPHABET[_ALPHABET.index(segment[-1]) | 1]


# --- each step of section 5.1 ----------------------------------------------------------------------------


def test_step_1_an_oversized_encrypted_token_is_too_large(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    assert refusal(enc_sealer, token + "A" * 8192) == "too_large"
    huge = "A" * 10_000_000 + "...."
    assert refusal(enc_sealer, huge) == "too_large"


@pytest.mark.parametrize(
    "mangle",
    [
        lambda h, k, i, c, t: f"{h}.{k}.{i}.{c}",  # four segments
        lambda h, k, i, c, t: f"{h}.{k}.{i}.{c}.{t}.{t}",  # six
        lambda h, k, i, c, t: f"{h}.{encode(bytes(40))}.{i}.{c}.{t}",  # an encrypted key
        lambda h, k, i, c, t: f"{h}.{k}..{c}.{t}",  # empty IV
        lambda h, k, i, c, t: f"{h}.{k}.{i}..{t}",  # empty ciphertext
        lambda h, k, i, c, t: f"{h}.{k}.{i}.{c}.",  # empty tag
        lambda h, k, i, c, t: f".{k}.{i}.{c}.{t}",  # empty header
        lambda h, k, i, c, t: f"{h}.{k}.{i}.{c}.{t}==",  # padding
        lambda h, k, i, c, t: f"{h}.{k}.{i}.{c}.{noncanonical(t)}",  # unused bits set in the tag
        lambda h, k, i, c, t: f"{h}.{k}.{i}.{c}{'A' * ((1 - len(c)) % 4)}.{t}",  # length 1 modulo 4
        lambda h, k, i, c, t: f"{h}.{k}.{i}.{c} .{t}",  # white space
    ],
)
def test_steps_2_and_3_five_canonical_segments_with_an_empty_key_or_malformed(
    enc_sealer: StateSealer, mangle: Any
) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    assert refusal(enc_sealer, mangle(*token.split("."))) == "malformed"


def test_step_4_a_protected_header_that_is_not_strict_json_is_malformed(
    enc_sealer: StateSealer, clock: Clock
) -> None:
    key = enc_sealer.ring.keys[0]
    claims = claims_of(enc_sealer, clock)
    duplicate = (
        b'{"alg":"dir","enc":"A256GCM","typ":"mrtr-state+jwt","kid":"%s","kid":"x"}' % key.kid.encode()
    )
    for header in (b"{alg:dir}", b"[]", duplicate, b"\xef\xbb\xbf" + json.dumps(header_of(key)).encode()):
        assert refusal(enc_sealer, forge(key, header, claims)) == "malformed"


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"zip": "DEF"}, "unsupported_header"),
        ({"cty": "JWT"}, "unsupported_header"),
        ({"crit": ["exp"]}, "unsupported_header"),
        ({"iv": "AAAAAAAAAAAAAAAA"}, "unsupported_header"),
        ({"alg": "A256KW"}, "unsupported_header"),
        ({"alg": "HS256"}, "unsupported_header"),
        ({"alg": None}, "unsupported_header"),
        ({"enc": "A128GCM"}, "unsupported_header"),
        ({"enc": "A256CBC-HS512"}, "unsupported_header"),
        ({"enc": None}, "unsupported_header"),
        ({"typ": "JWT"}, "wrong_type"),
        ({"typ": None}, "wrong_type"),
        ({"kid": "nobody"}, "unknown_key"),
        ({"kid": 7}, "unknown_key"),
        ({"kid": None}, "unknown_key"),
    ],
)
def test_steps_5_to_8_the_protected_header(
    enc_sealer: StateSealer, clock: Clock, changes: dict[str, Any], reason: str
) -> None:
    key = enc_sealer.ring.keys[0]
    token = forge(key, header_of(key, **changes), claims_of(enc_sealer, clock))
    assert refusal(enc_sealer, token) == reason


def test_step_9_an_encrypted_token_naming_a_signing_key_is_an_algorithm_mismatch(clock: Clock) -> None:
    hs, ed, enc = Key.generate("HS256"), Key.generate("EdDSA"), Key.generate("A256GCM")
    sealer = StateSealer(Keyring([enc, hs, ed]), issuer=ISSUER, clock=clock)
    claims = claims_of(sealer, clock)
    as_aes_key = forge(hs, header_of(hs), claims, secret=secret_of(hs))
    assert refusal(sealer, as_aes_key) == "algorithm_mismatch"
    assert refusal(sealer, forge(ed, header_of(ed), claims, secret=bytes(32))) == "algorithm_mismatch"


def test_step_9_a_signed_token_naming_an_encryption_key_is_an_algorithm_mismatch(clock: Clock) -> None:
    import hmac

    enc = Key.generate("A256GCM")
    sealer = StateSealer(Keyring([enc, Key.generate("HS256")]), issuer=ISSUER, clock=clock)
    header = encode(json.dumps({"alg": "HS256", "typ": "mrtr-state+jwt", "kid": enc.kid}).encode())
    payload = encode(json.dumps(claims_of(sealer, clock)).encode())
    mac = hmac.digest(secret_of(enc), f"{header}.{payload}".encode(), "sha256")
    assert refusal(sealer, f"{header}.{payload}.{encode(mac)}") == "algorithm_mismatch"
    as_alg = encode(json.dumps({"alg": "A256GCM", "typ": "mrtr-state+jwt", "kid": enc.kid}).encode())
    assert refusal(sealer, f"{as_alg}.{payload}.{encode(mac)}") == "unsupported_header"


def test_step_10_iv_and_tag_lengths_and_the_tag_itself(enc_sealer: StateSealer, clock: Clock) -> None:
    key = enc_sealer.ring.keys[0]
    claims = claims_of(enc_sealer, clock)
    for iv in (bytes(8), bytes(16)):
        assert refusal(enc_sealer, forge(key, header_of(key), claims, iv=iv)) == "bad_signature"
    h, k, i, c, t = forge(key, header_of(key), claims).split(".")
    short_tag = encode(decode(t)[:12])
    assert refusal(enc_sealer, f"{h}.{k}.{i}.{c}.{short_tag}") == "bad_signature"
    other = forge(key, header_of(key), claims, secret=bytes(32))
    assert refusal(enc_sealer, other) == "bad_signature"
    respelled = encode(json.dumps(header_of(key), indent=1).encode())
    assert refusal(enc_sealer, f"{respelled}.{k}.{i}.{c}.{t}") == "bad_signature"


def test_step_11_decrypted_claims_that_are_not_strict_json_are_malformed(
    enc_sealer: StateSealer, clock: Clock
) -> None:
    key = enc_sealer.ring.keys[0]
    text = json.dumps(claims_of(enc_sealer, clock)).encode()
    for plaintext in (b"not json", b"[]", text.replace(b'"sub": ', b'"sub": "x", "sub": '), b"\xff" + text):
        assert refusal(enc_sealer, forge(key, header_of(key), plaintext)) == "malformed"


def test_the_claim_steps_apply_unchanged(enc_sealer: StateSealer, clock: Clock) -> None:
    key = enc_sealer.ring.keys[0]
    claims = claims_of(enc_sealer, clock)
    cases = [
        ({"nbf": 1}, "malformed"),
        ({"aud": ["tools/call:deploy"]}, "malformed"),
        ({"jti": "short"}, "malformed"),
        ({"exp": claims["iat"] + 3600}, "lifetime_too_long"),
        ({"iat": claims["iat"] + 10, "exp": claims["iat"] + 610}, "issued_in_future"),
    ]
    for changes, reason in cases:
        assert refusal(enc_sealer, forge(key, header_of(key), {**claims, **changes})) == reason, changes


# --- rings of both forms (section 7.3) --------------------------------------------------------------------


def test_the_first_key_decides_the_form_and_a_mixed_ring_opens_both(clock: Clock) -> None:
    enc, hs, ed = Key.generate("A256GCM"), Key.generate("HS256"), Key.generate("EdDSA")
    encrypting = StateSealer(Keyring([enc, hs, ed]), issuer=ISSUER, clock=clock)
    signing = StateSealer(Keyring([ed, enc]), issuer=ISSUER, clock=clock)
    encrypted, signed = encrypting.seal(STATE, **REQUEST), signing.seal(STATE, **REQUEST)
    assert encrypted.count(".") == 4
    assert signed.count(".") == 2
    for sealer in (encrypting, signing):
        assert sealer.open(encrypted, **REQUEST) == STATE
        assert sealer.open(signed, **REQUEST) == STATE


def test_a_fleet_moves_from_signed_to_encrypted_with_the_rotation_steps(clock: Clock) -> None:
    old_ring = Keyring.generate("EdDSA")
    old = StateSealer(old_ring, issuer=ISSUER, clock=clock)
    signed = old.seal({"step": 1}, **REQUEST)

    enc = Key.generate("A256GCM")
    staged = StateSealer(Keyring([*old_ring, enc]), issuer=ISSUER, clock=clock)  # step 1: added second
    assert staged.seal({"step": 1}, **REQUEST).count(".") == 2  # still signs
    assert staged.open(signed, **REQUEST) == {"step": 1}

    moved = StateSealer(old_ring.rotated(enc), issuer=ISSUER, clock=clock)  # step 2: first
    encrypted = moved.seal({"step": 2}, **REQUEST)
    assert encrypted.count(".") == 4
    assert moved.open(signed, **REQUEST) == {"step": 1}
    assert staged.open(encrypted, **REQUEST) == {"step": 2}  # replicas still on step 1 open it
    assert old.open(signed, **REQUEST) == {"step": 1}
    assert refusal(old, encrypted) == "unknown_key"  # a replica never given the key

    clock.advance(600)
    done = StateSealer(moved.ring.without(old_ring.keys[0].kid), issuer=ISSUER, clock=clock)  # step 3
    fresh = done.seal({"step": 3}, **REQUEST)
    assert done.open(fresh, **REQUEST) == {"step": 3}
    assert refusal(done, signed) == "unknown_key"

    back = StateSealer(done.ring.rotated(Key.generate("HS256")), issuer=ISSUER, clock=clock)  # and back
    assert back.seal({"step": 4}, **REQUEST).count(".") == 2
    assert back.open(fresh, **REQUEST) == {"step": 3}


async def _open_async(sealer: StateSealer, token: str) -> Any:
    return await sealer.open_async(token, **REQUEST)


def test_open_async_and_single_use_work_on_the_encrypted_form(enc_ring: Keyring, clock: Clock) -> None:
    import asyncio

    from mrtr_state import MemoryReplayStore

    sealer = StateSealer(enc_ring, issuer=ISSUER, clock=clock, replay_store=MemoryReplayStore(clock=clock))
    token = sealer.seal(STATE, **REQUEST)
    assert asyncio.run(_open_async(sealer, token)) == STATE
    assert sealer.open(token, **REQUEST, consume=True) == STATE
    with pytest.raises(InvalidRequestState) as caught:
        sealer.open(token, **REQUEST, consume=True)
    assert caught.value.reason == "replayed"


def test_a_refusal_of_the_encrypted_form_names_no_claim_or_key(enc_sealer: StateSealer) -> None:
    token = enc_sealer.seal(STATE, **REQUEST)
    k = enc_sealer.ring.keys[0].private_jwk()["k"]
    for bad in (token[:-3] + "AAA", token.replace("..", ".AAAA.")):
        with pytest.raises(InvalidRequestState) as caught:
            enc_sealer.open(bad, **REQUEST)
        message = str(caught.value) + repr(caught.value)
        assert k not in message
        assert "cus_8f3a2b" not in message
        assert base64.urlsafe_b64encode(b"alice").decode()[:6] not in message


# --- the profile says the same ------------------------------------------------------------------------


def test_the_encrypted_forms_header_parameters_and_sizes_are_the_profiles() -> None:
    from pathlib import Path

    from mrtr_state.token import jwe

    profile = (Path(__file__).resolve().parent.parent / "spec" / "profile.md").read_text(encoding="utf-8")
    section = profile[profile.index("### 3.6. The encrypted form") : profile.index("## 4. Minting")]
    rows = dict(
        (name, value)
        for name, value in re.findall(
            r"^\| `([a-z]+)` \| string \| REQUIRED \| exactly `([^`]+)`", section, re.M
        )
    )
    assert set(re.findall(r"^\| `([a-z]+)` \| string \| REQUIRED \|", section, re.M)) == set(
        jwe.HEADER_PARAMETERS
    )
    assert rows == {"alg": jwe.ALG, "enc": jwe.ENC, "typ": "mrtr-state+jwt"}
    assert f"{jwe.IV_BYTES} bytes (96 bits)" in section
    assert f"{jwe.TAG_BYTES}-byte (128-bit)" in section
    steps = profile[
        profile.index("### 5.1. Validation of the encrypted form") : profile.index("## 6. Reason codes")
    ]
    assert "`alg`, `enc`, `typ` and `kid`" in steps
