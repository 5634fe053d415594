"""jws and jwe own the compact format: the size of a token before it is made, the header fast path."""

from __future__ import annotations

import pytest

from mrtr_state import Keyring
from mrtr_state.token import _b64, jwe, jws


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
@pytest.mark.parametrize("payload_bytes", [0, 1, 2, 3, 100, 5000])
def test_the_signed_size_is_the_length_of_the_token_sign_makes(alg: str, payload_bytes: int) -> None:
    key = Keyring.generate(alg).signing_key
    header = jws.header_segment(key)
    token = jws.sign(key, header, b"x" * payload_bytes)
    assert jws.size(header, payload_bytes, alg) == len(token)


@pytest.mark.parametrize("payload_bytes", [1, 2, 3, 100, 5000])
def test_the_encrypted_size_is_the_length_of_the_token_encrypt_makes(payload_bytes: int) -> None:
    key = Keyring.generate("A256GCM").signing_key
    assert isinstance(key, jwe.A256GCMKey)
    header = jwe.header_segment(key)
    token = jwe.encrypt(key, header, b"x" * payload_bytes)
    assert jwe.size(header, payload_bytes) == len(token)


def test_the_known_headers_are_the_headers_each_form_mints_with() -> None:
    ring = Keyring([*Keyring.generate("HS256"), *Keyring.generate("A256GCM")])
    signing, encrypting = ring.keys
    assert jws.known_headers(ring) == {jws.header_segment(signing): signing}
    assert isinstance(encrypting, jwe.A256GCMKey)
    assert jwe.known_headers(ring) == {jwe.header_segment(encrypting): encrypting}


@pytest.mark.parametrize(
    ("text", "left"),
    [("abc.DEF-_.09", b".."), ("a+b/c=", b"+/="), ("a b", b" "), ("", b""), ("é.a", "é.".encode())],
)
def test_outside_alphabet_leaves_exactly_what_is_not_base64url(text: str, left: bytes) -> None:
    assert _b64.outside_alphabet(text.encode("utf-8")) == left
