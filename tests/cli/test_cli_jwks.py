"""``mrtr-state jwks``: publish Ed25519 public keys; never an HS256 secret."""

from __future__ import annotations

import base64
import json

from mrtr_state import Keyring, StateSealer

from .conftest import ISSUER, NOW, Rings, Run, seal


def test_jwks_prints_public_keys_that_verify_the_rings_tokens(run: Run, rings: Rings) -> None:
    result = run("jwks", "eddsa.json", secrets=rings.secrets)
    assert result.status == 0
    assert result.stderr == ""
    for secret in rings.secrets:
        assert secret not in result.stdout
    document = json.loads(result.stdout)
    assert all(set(jwk) == {"kty", "crv", "alg", "use", "kid", "x"} for jwk in document["keys"])
    public = Keyring.from_jwks(document)
    assert not public.keys[0].can_sign
    token = seal(rings.ring(rings.eddsa))
    assert StateSealer(public, issuer=ISSUER, clock=lambda: NOW).open(token, user="alice", tool="deploy") == {
        "step": 2
    }


def test_jwks_of_an_hs256_only_ring_is_refused_saying_secrets_are_never_published(
    run: Run, rings: Rings
) -> None:
    line = run("jwks", "hs256.json", secrets=rings.secrets).error_line()
    assert "HS256" in line
    assert "never published" in line
    assert "EdDSA" in line
    assert "mrtr-state keygen --alg EdDSA" in line


def test_jwks_of_a_mixed_ring_leaves_the_hs256_secret_out_and_says_so(run: Run, rings: Rings) -> None:
    result = run("jwks", "mixed.json", secrets=rings.secrets)
    assert result.status == 0
    for secret in rings.secrets:
        assert secret not in result.stdout
    assert [jwk["kty"] for jwk in json.loads(result.stdout)["keys"]] == ["OKP"]
    assert "left out 1 HS256 secret" in result.stderr


def test_jwks_of_a_public_jwks_prints_it_again(run: Run, rings: Rings) -> None:
    result = run("jwks", "public.json")
    assert json.loads(result.stdout) == json.loads(rings.public.read_text())


def test_jwks_reads_the_ring_from_standard_input(run: Run, rings: Rings) -> None:
    result = run("jwks", "-", stdin=rings.eddsa.read_text(), secrets=rings.secrets)
    assert result.status == 0
    assert json.loads(result.stdout) == rings.ring(rings.eddsa).public_jwks()


def test_jwks_without_a_file_reads_the_environment_variable_the_library_reads(run: Run, rings: Rings) -> None:
    result = run("jwks", env={"MRTR_STATE_KEYS": rings.mixed.read_text()}, secrets=rings.secrets)
    assert result.status == 0
    assert json.loads(result.stdout) == rings.ring(rings.mixed).public_jwks()


def test_jwks_without_a_file_or_variable_says_how_to_give_keys(run: Run) -> None:
    line = run("jwks").error_line()
    assert "MRTR_STATE_KEYS" in line


def test_jwks_of_a_secret_in_the_environment_is_refused_without_showing_it(run: Run) -> None:
    secret = base64.b64encode(bytes(range(32))).decode()
    line = run("jwks", env={"MRTR_STATE_KEYS": secret}, secrets=[secret, secret.rstrip("=")]).error_line()
    assert "never published" in line
