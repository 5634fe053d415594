"""The Python library against the encrypted form's vectors (spec/vectors/encrypted.json)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mrtr_state import Keyring
from mrtr_state.token._b64 import decode
from tests.vector_files import assert_verdict, load

KEYS = load("keys.json")
ENCRYPTED = load("encrypted.json")
RING = Keyring.from_jwks(KEYS["encrypted_verifier_jwks"])


@pytest.mark.parametrize("vector", ENCRYPTED["vectors"], ids=lambda v: v["id"])
def test_each_encrypted_vector_gets_its_expected_verdict_and_reason(vector: dict[str, Any]) -> None:
    assert_verdict(ENCRYPTED, RING, vector)


def test_the_encrypted_vectors_cover_every_stateless_reason_code() -> None:
    from mrtr_state import REASONS

    covered = {v["expected"].get("reason") for v in ENCRYPTED["vectors"]}
    assert set(REASONS) - {"replayed", "store_unavailable"} <= covered


def test_the_encryption_key_is_a_new_member_and_verifier_jwks_is_unchanged() -> None:
    assert KEYS["a256gcm"]["alg"] == "A256GCM"
    assert KEYS["a256gcm"]["use"] == "enc"
    assert len(decode(KEYS["a256gcm"]["k"])) == 32
    assert all(jwk.get("alg") != "A256GCM" for jwk in KEYS["verifier_jwks"]["keys"])
    assert KEYS["encrypted_verifier_jwks"]["keys"][0] == KEYS["a256gcm"]


@pytest.mark.parametrize(
    "vector", [v for v in ENCRYPTED["vectors"] if v["expected"]["valid"]], ids=lambda v: v["id"]
)
def test_valid_encrypted_vectors_decrypt_with_plain_aes_gcm_as_rfc_7516_says(vector: dict[str, Any]) -> None:
    """An independent reading: AES-GCM with the raw key, the header segment's ASCII as AAD."""
    header, encrypted_key, iv, ciphertext, tag = vector["token"].split(".")
    assert encrypted_key == ""
    assert json.loads(decode(header))["alg"] == "dir"
    plaintext = AESGCM(decode(KEYS["a256gcm"]["k"])).decrypt(
        decode(iv), decode(ciphertext) + decode(tag), header.encode("ascii")
    )
    assert json.loads(plaintext)["state"] == vector["expected"]["state"]
