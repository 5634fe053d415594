"""The command line and the encrypted form: keygen, inspect, verify and jwks (profile, 3.6 and 7.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mrtr_state import Key, Keyring

from .conftest import ISSUER, NOW, Rings, Run, seal, secrets_of

STATE = {"customer": "cus_8f3a2b", "step": 2}


def write_ring(tmp_path: Path, name: str, ring: Keyring) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(ring.private_jwks()))
    return path


def verify_args(token: str, keys: str, **request: str) -> list[str]:
    options = {"issuer": ISSUER, "user": "alice", "tool": "deploy", "now": str(NOW + 5), **request}
    return ["verify", token, "--keys", keys, *(x for k, v in options.items() for x in (f"--{k}", v))]


def test_keygen_a256gcm_makes_an_encryption_key_whose_tokens_are_encrypted(run: Run) -> None:
    result = run("keygen", "--alg", "A256GCM")
    assert result.status == 0
    ring = Keyring.from_jwks(result.stdout)
    (jwk,) = json.loads(result.stdout)["keys"]
    assert (jwk["kty"], jwk["alg"], jwk["use"]) == ("oct", "A256GCM", "enc")
    assert ring.signing_key.alg == "A256GCM"
    assert seal(ring).count(".") == 4


def test_keygen_add_a256gcm_moves_a_signing_ring_to_the_encrypted_form(
    run: Run, rings: Rings, tmp_path: Path
) -> None:
    old = rings.ring(rings.eddsa)
    signed = seal(old, STATE)
    result = run("keygen", "--alg", "A256GCM", "--add", "eddsa.json", "--force", secrets=rings.secrets)
    assert result.status == 0
    assert "A256GCM key" in result.stderr
    assert "encrypts first" in result.stderr
    moved = rings.ring(rings.eddsa)
    assert [key.alg for key in moved] == ["A256GCM", "EdDSA"]
    encrypted = seal(moved, STATE)
    for token in (signed, encrypted):
        opened = run(*verify_args(token, "eddsa.json"), secrets=secrets_of(moved.private_jwks()))
        assert opened.status == 0, opened
        assert "cus_8f3a2b" in opened.stdout


def test_inspect_of_an_encrypted_token_shows_the_header_and_says_the_claims_are_encrypted(
    run: Run, tmp_path: Path
) -> None:
    ring = Keyring.generate("A256GCM")
    token = seal(ring, STATE)
    result = run("inspect", token, "--now", str(NOW), secrets=secrets_of(ring.private_jwks()))
    assert result.status == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("NOT VERIFIED:")
    assert f'alg "dir", enc "A256GCM", typ "mrtr-state+jwt", kid "{ring.keys[0].kid}"' in lines[1]
    assert "form:       encrypted" in result.stdout
    assert "claims:     encrypted" in result.stdout
    assert "--keys" in result.stdout
    for hidden in ("alice", "deploy", "cus_8f3a2b", ISSUER):
        assert hidden not in result.stdout


def test_inspect_with_keys_decrypts_the_claims(run: Run, tmp_path: Path) -> None:
    ring = Keyring.generate("A256GCM")
    write_ring(tmp_path, "enc.json", ring)
    token = seal(ring, STATE, arguments={"env": "prod"})
    result = run(
        "inspect",
        token,
        "--keys",
        "enc.json",
        "--now",
        str(NOW + 48),
        secrets=secrets_of(ring.private_jwks()),
    )
    assert result.status == 0
    assert result.stdout.splitlines()[0].startswith("NOT VERIFIED: decrypted with --keys")
    assert "decrypted with --keys" in result.stdout.splitlines()[2]
    assert 'user:       "alice" (sub)' in result.stdout
    assert 'target:     tool "deploy"' in result.stdout
    assert '"customer": "cus_8f3a2b"' in result.stdout
    assert "expires in 9m 12s" in result.stdout
    assert "no refusal found without the key" in result.stdout


def test_inspect_with_the_wrong_keys_says_why_it_cannot_decrypt(
    run: Run, rings: Rings, tmp_path: Path
) -> None:
    token = seal(Keyring.generate("A256GCM"), STATE)
    result = run("inspect", token, "--keys", "eddsa.json", "--now", str(NOW), secrets=rings.secrets)
    assert result.status == 0
    assert "would refuse it: unknown_key" in result.stdout
    assert "claims:     encrypted" in result.stdout
    same_kid = Key.generate("A256GCM", kid="k1")
    write_ring(tmp_path, "other.json", Keyring([Key.generate("A256GCM", kid="k1")]))
    changed = run("inspect", seal(Keyring([same_kid]), STATE), "--keys", "other.json", "--now", str(NOW))
    assert "would refuse it: bad_signature" in changed.stdout


def test_inspect_json_of_an_encrypted_token(run: Run, tmp_path: Path) -> None:
    ring = Keyring.generate("A256GCM")
    write_ring(tmp_path, "enc.json", ring)
    token = seal(ring, STATE)
    hidden = json.loads(run("inspect", token, "--json", "--now", str(NOW)).stdout)
    assert (hidden["form"], hidden["decrypted"], hidden["claims"], hidden["problem"]) == (
        "encrypted",
        False,
        None,
        None,
    )
    assert hidden["header"]["enc"] == "A256GCM"
    opened = json.loads(run("inspect", token, "--json", "--keys", "enc.json", "--now", str(NOW)).stdout)
    assert (opened["form"], opened["decrypted"], opened["verified"]) == ("encrypted", True, False)
    assert opened["claims"]["state"] == STATE
    assert opened["expires_in"] == 600


def test_inspect_of_an_encrypted_token_finds_header_problems_without_a_key(run: Run) -> None:
    ring = Keyring.generate("A256GCM")
    header, _, iv, ciphertext, tag = seal(ring, STATE).split(".")
    from mrtr_state.token._b64 import decode, encode

    zipped = encode(json.dumps({**json.loads(decode(header)), "zip": "DEF"}).encode())
    result = run("inspect", f"{zipped}..{iv}.{ciphertext}.{tag}", "--now", str(NOW))
    assert "would refuse it: unsupported_header" in result.stdout
    assert "'zip'" in result.stdout


def test_verify_opens_both_forms_with_a_ring_of_both(run: Run, tmp_path: Path) -> None:
    enc, ed = Key.generate("A256GCM"), Key.generate("EdDSA")
    write_ring(tmp_path, "both.json", Keyring([enc, ed]))
    secrets = secrets_of(Keyring([enc, ed]).private_jwks())
    for minting in (Keyring([enc, ed]), Keyring([ed, enc])):
        result = run(*verify_args(seal(minting, STATE), "both.json"), secrets=secrets)
        assert result.status == 0, result
        assert result.stdout.startswith(f'valid: issued by "{ISSUER}" for the user "alice"')
        assert '"customer": "cus_8f3a2b"' in result.stdout


def test_verify_explains_an_encrypted_refusal_from_the_decrypted_claims(run: Run, tmp_path: Path) -> None:
    ring = Keyring.generate("A256GCM")
    write_ring(tmp_path, "enc.json", ring)
    secrets = secrets_of(ring.private_jwks())
    token = seal(ring, STATE)
    other_user = run(*verify_args(token, "enc.json", user="mallory"), secrets=secrets)
    assert other_user.status == 1
    assert "refused: wrong_user" in other_user.stdout
    assert 'bound to the user "alice", not "mallory"' in other_user.stdout
    late = run(*verify_args(token, "enc.json", now=str(NOW + 600)), secrets=secrets)
    assert "refused: expired" in late.stdout
    h, k, iv, c, t = token.split(".")
    changed = run(*verify_args(f"{h}.{k}.{iv}.{c}.{t[:5]}{'B' if t[5] != 'B' else 'C'}{t[6:]}", "enc.json"))
    assert "refused: bad_signature" in changed.stdout
    assert "encrypted" in changed.stdout


def test_verify_of_an_encrypted_token_naming_a_signing_key_is_an_algorithm_mismatch(
    run: Run, rings: Rings
) -> None:
    hs = rings.ring(rings.hs256).keys[0]
    token = seal(Keyring([Key.generate("A256GCM", kid=hs.kid)]), STATE)
    result = run(*verify_args(token, "hs256.json"), secrets=rings.secrets)
    assert result.status == 1
    assert "refused: algorithm_mismatch" in result.stdout
    assert "needs an A256GCM key" in result.stdout


def test_jwks_never_publishes_an_encryption_key(run: Run, tmp_path: Path) -> None:
    enc = Keyring.generate("A256GCM")
    write_ring(tmp_path, "enc.json", enc)
    secrets = secrets_of(enc.private_jwks())
    line = run("jwks", "enc.json", secrets=secrets).error_line()
    assert "A256GCM encryption keys" in line
    assert "never published" in line
    mixed = Keyring([*enc, Key.generate("EdDSA"), Key.generate("HS256")])
    write_ring(tmp_path, "mixed.json", mixed)
    result = run("jwks", "mixed.json", secrets=secrets_of(mixed.private_jwks()))
    assert result.status == 0
    for secret in secrets_of(mixed.private_jwks()):
        assert secret not in result.stdout
    assert [jwk["kty"] for jwk in json.loads(result.stdout)["keys"]] == ["OKP"]
    assert "left out 1 A256GCM encryption key" in result.stderr
    assert "left out 1 HS256 secret" in result.stderr


def test_text_with_five_segments_that_is_not_a_jwe_is_bad_input(run: Run, rings: Rings) -> None:
    for text in ("a.b.c.d.e", "....", "eyJhbGciOiJkaXIifQ..AAAA.AAAA"):
        assert "not a requestState token" in run("inspect", text).error_line()
        assert "not a requestState token" in run(*verify_args(text, "eddsa.json")).error_line()


VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors"
ENCRYPTED = json.loads((VECTORS / "encrypted.json").read_text(encoding="utf-8"))
VECTOR_KEYS = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))


def _sample() -> list[dict[str, Any]]:
    chosen: dict[str, dict[str, Any]] = {}
    for vector in ENCRYPTED["vectors"]:
        chosen.setdefault(vector["expected"].get("reason", "valid"), vector)
    return list(chosen.values())


@pytest.mark.parametrize("vector", _sample(), ids=lambda v: v["id"])
def test_verify_gives_each_encrypted_vectors_expected_verdict(
    run: Run, tmp_path: Path, vector: dict[str, Any]
) -> None:
    (tmp_path / "verifier.json").write_text(json.dumps(VECTOR_KEYS["encrypted_verifier_jwks"]))
    settings = {**ENCRYPTED["defaults"], **{k: vector[k] for k in ENCRYPTED["defaults"] if k in vector}}
    args = ["verify", "-", "--keys", "verifier.json", "--json", "--issuer", settings["issuer"]]
    args += ["--max-lifetime", str(settings["max_lifetime"]), "--leeway", str(settings["leeway"])]
    args += ["--max-token-bytes", str(settings["max_token_bytes"]), "--now", str(vector["now"])]
    args += ["--user", vector["user"]]
    for kind in ("tool", "prompt", "resource"):
        if kind in vector:
            args += [f"--{kind}", vector[kind]]
    if "arguments" in vector:
        args += ["--arguments", json.dumps(vector["arguments"])]
    result = run(*args, stdin=vector["token"])
    expected = vector["expected"]
    if expected["valid"]:
        assert result.status == 0, result
        assert json.loads(result.stdout)["state"] == expected["state"]
    elif result.status == 2:  # not even a JWS or JWE: bad input for the command
        assert expected["reason"] == "malformed", result
        assert "not a requestState token" in result.error_line()
    else:
        assert result.status == 1, result
        assert json.loads(result.stdout)["reason"] == expected["reason"]
