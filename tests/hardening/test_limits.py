"""Limits: huge and deeply nested inputs are refused quickly, with bounded memory."""

from __future__ import annotations

import base64
import json
import tracemalloc

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer
from tests.conftest import ISSUER, NOW

REQUEST = {"user": "alice", "tool": "deploy"}
KEY = Key.generate("HS256")
SEALER = StateSealer(Keyring([KEY]), issuer=ISSUER, clock=lambda: NOW)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def signed(header: bytes, payload: bytes) -> str:
    signing_input = f"{b64(header)}.{b64(payload)}"
    return f"{signing_input}.{b64(KEY.sign(signing_input.encode()))}"


def reason(token: object) -> str:
    with pytest.raises(InvalidRequestState) as caught:
        SEALER.open(token, **REQUEST)  # type: ignore[arg-type]
    return caught.value.reason


@pytest.mark.parametrize("size", [8193, 1 << 20, 16 << 20])
def test_an_oversized_input_is_refused_before_decoding_with_no_memory_growth(size: int) -> None:
    token = "eyJ" + "A" * (size - 3)
    tracemalloc.start()
    try:
        assert reason(token) == "too_large"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, f"refusing {size} bytes allocated {peak} bytes"


def test_a_header_nested_within_the_size_cap_is_malformed_not_a_crash() -> None:
    header = b'{"alg":"HS256","x":' + b"[" * 3000 + b"]" * 3000 + b"}"
    token = f"{b64(header)}.e30.AAAA"
    assert len(token) <= SEALER.max_token_bytes
    assert reason(token) == "malformed"


def test_a_signed_payload_nested_deeper_than_the_limit_is_malformed() -> None:
    header = json.dumps({"alg": "HS256", "typ": "mrtr-state+jwt", "kid": KEY.kid}).encode()
    claims = {"iss": ISSUER, "sub": "alice", "aud": "tools/call:deploy", "iat": NOW, "exp": NOW + 600}
    prefix = json.dumps({**claims, "jti": "A" * 22})[:-1].encode()
    for depth in (33, 34, 2000):
        payload = prefix + b',"state":' + b"[" * depth + b"]" * depth + b"}"
        token = signed(header, payload)
        if len(token) > SEALER.max_token_bytes:
            continue
        assert reason(token) == "malformed", depth
    payload = prefix + b',"state":' + b"[" * 32 + b"]" * 32 + b"}"
    assert SEALER.open(signed(header, payload), **REQUEST) is not None


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    state = {"text": "[" * 500 + "{" * 500}
    token = SEALER.seal(state, **REQUEST)
    assert SEALER.open(token, **REQUEST) == state


def test_deeply_nested_key_files_are_refused_clearly() -> None:
    # Found by fuzz/fuzz_jwks.py: json.loads raised RecursionError, not KeyringError.
    with pytest.raises(KeyringError, match="nested deeper"):
        Keyring.from_jwks("[" * 5000 + "]" * 5000)
    with pytest.raises(KeyringError, match="nested deeper"):
        Key.from_jwk('{"kty":"oct","k":' + "[" * 5000 + "]" * 5000 + "}")


def test_a_key_file_with_duplicate_members_is_refused() -> None:
    jwk = KEY.private_jwk()
    text = json.dumps(jwk)[:-1] + ', "k": "' + b64(bytes(32)) + '"}'
    with pytest.raises(KeyringError, match="duplicate member"):
        Key.from_jwk(text)


def test_a_key_file_error_never_echoes_the_file() -> None:
    secret = KEY.private_jwk()["k"]
    for text in ('{"kty":"oct","k":"' + secret + '",}', '{"k":"' + secret + '\udcff"}'):
        with pytest.raises(KeyringError) as caught:
            Keyring.from_jwks(text)
        assert secret not in str(caught.value)
