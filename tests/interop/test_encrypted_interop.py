"""The encrypted form (JWE dir + A256GCM) crosses between Python and every interop example.

Each example opens the encrypted tokens Python mints (and refuses them, changed, for the reason
Python gives), and mints encrypted tokens with its own JOSE library that Python opens: `jose` in
TypeScript, go-jose in Go, nimbus-jose-jwt in Java, josekit in Rust. The encrypted vectors run as
verify jobs, so every vector's verdict and reason code is compared one by one.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mrtr_state import Keyring, StateSealer, arguments_digest
from tests.interop import harness
from tests.interop.test_interop import (
    CONTEXT_CASE,
    ISSUER,
    NOW,
    OTHER_CONTEXTS,
    cases,
    python_verdict,
    request_of,
)

VECTORS = harness.ROOT / "spec" / "vectors"
CASES = 60
ENCRYPTED = Keyring.generate("A256GCM")
SIGNED = Keyring.generate("EdDSA")
TARGETS = ("tool", "prompt", "resource")


def b64decode(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def raw_key() -> bytes:
    return b64decode(ENCRYPTED.signing_key.private_jwk()["k"])


def sealer(now: int, ring: Keyring = ENCRYPTED) -> StateSealer:
    return StateSealer(ring, issuer=ISSUER, clock=lambda: now)


def verify_job(
    token: str, case: dict[str, Any], now: int, jwks: dict[str, Any] | None = None
) -> dict[str, Any]:
    keys = jwks if jwks is not None else ENCRYPTED.private_jwks()
    return {"keys": keys, "token": token, "issuer": ISSUER, "now": now, **request_of(case)}


def encrypted_mutations(token: str, rng: random.Random) -> list[str]:
    """Ways a client could change an encrypted token: every one is refused by the Python library."""
    header, key, iv, ciphertext, tag = token.split(".")

    def changed(segment: str) -> str:
        i = rng.randrange(len(segment))
        return f"{segment[:i]}{'A' if segment[i] != 'A' else 'B'}{segment[i + 1 :]}"

    return [
        f"{header}.{key}.{iv}.{changed(ciphertext)}.{tag}",
        f"{header}.{key}.{iv}.{ciphertext}.{changed(tag)}",
        f"{header}.{key}.{changed(iv)}.{ciphertext}.{tag}",
        f"{changed(header)}.{key}.{iv}.{ciphertext}.{tag}",
        f"{header}.AAAA.{iv}.{ciphertext}.{tag}",
        f"{header}.{key}.{iv}.{ciphertext}",
        f"{header}.{key}.{iv}.{ciphertext}.{tag}.",
        f"{header}.{key}.{iv}=.{ciphertext}.{tag}",
        f"{header}.{key}.{ciphertext}.{iv}.{tag}",
        token[:-1],
        token + "A",
        f"{header}.{key}.{iv}.{ciphertext[:-4]}.{tag}",
    ]


def open_with_the_raw_key(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Check the JWE's shape and decrypt it with AES-256-GCM directly; return (header, claims)."""
    header, key, iv, ciphertext, tag = token.split(".")
    assert key == "", "the encrypted-key segment of dir is empty"
    assert (len(b64decode(iv)), len(b64decode(tag))) == (12, 16)
    sealed = b64decode(ciphertext) + b64decode(tag)
    plaintext = AESGCM(raw_key()).decrypt(b64decode(iv), sealed, header.encode("ascii"))
    return json.loads(b64decode(header)), json.loads(plaintext)


# --- the tests ------------------------------------------------------------------------------------


def test_each_language_gives_every_encrypted_vector_its_verdict_and_reason(program: harness.Program) -> None:
    keys = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))
    encrypted = json.loads((VECTORS / "encrypted.json").read_text(encoding="utf-8"))
    batch, expected = [], []
    for vector in encrypted["vectors"]:
        job = {"keys": keys["encrypted_verifier_jwks"], **encrypted["defaults"]}
        job |= {
            k: v
            for k, v in vector.items()
            if k not in ("id", "description", "expected", "keyless", "reencoding")
        }
        batch.append(job)
        expected.append((vector["id"], vector["expected"]))
    results = harness.jobs(program, "verify", batch)
    assert [(vector_id, result) for (vector_id, _), result in zip(expected, results, strict=True)] == expected


def test_each_language_opens_what_python_encrypts_to_exactly_the_state(program: harness.Program) -> None:
    source = cases(f"{program.name}-python-encrypts")
    batch, expected = [], []
    for i in range(CASES):
        case = next(source)
        token = sealer(NOW + i).seal(case["state"], **request_of(case))
        assert token.count(".") == 4
        batch.append(verify_job(token, case, NOW + i + 1))
        expected.append({"valid": True, "state": case["state"]})
    assert harness.jobs(program, "verify", batch) == expected


def test_each_language_refuses_changed_encrypted_tokens_for_the_reason_python_gives(
    program: harness.Program,
) -> None:
    rng = random.Random(f"{program.name}-encrypted-tamper")
    source = cases(f"{program.name}-encrypted-tampered")
    batch, expected = [], []
    for _ in range(12):
        case = next(source)
        token = sealer(NOW).seal(case["state"], **request_of(case))
        for changed in encrypted_mutations(token, rng):
            verdict = python_verdict(sealer(NOW), changed, case)
            assert not verdict["valid"], "the Python library accepted a changed token"
            batch.append(verify_job(changed, case, NOW))
            expected.append(verdict)
    assert harness.jobs(program, "verify", batch) == expected


def test_each_language_gives_pythons_reason_for_every_one_character_change_of_an_encrypted_token(
    program: harness.Program,
) -> None:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    case = {"user": "alice", "tool": "deploy", "arguments": {"n": 1}, "state": {"plan": ["a", "b"]}}
    token = sealer(NOW).seal(case["state"], **request_of(case))
    batch, expected = [], []
    for i, char in enumerate(token):
        other = "A" if char == "." else alphabet[(alphabet.index(char) + 1) % len(alphabet)]
        changed = f"{token[:i]}{other}{token[i + 1 :]}"
        verdict = python_verdict(sealer(NOW), changed, case)
        assert not verdict["valid"], f"the Python library accepted a change at {i}"
        batch.append(verify_job(changed, case, NOW))
        expected.append(verdict)
    assert harness.jobs(program, "verify", batch) == expected


def test_each_language_refuses_another_user_tool_request_issuer_and_time_when_encrypted(
    program: harness.Program,
) -> None:
    token = sealer(NOW).seal(CONTEXT_CASE["state"], **request_of(CONTEXT_CASE))
    batch = [verify_job(token, c, now) for c, now, _ in OTHER_CONTEXTS]
    batch.append({**verify_job(token, CONTEXT_CASE, NOW), "issuer": "https://other.example.com"})
    reasons = [r.get("reason") for r in harness.jobs(program, "verify", batch)]
    assert reasons == [reason for _, _, reason in OTHER_CONTEXTS] + ["wrong_issuer"]


def test_a_ring_of_both_forms_opens_both_and_never_uses_a_key_for_the_other_form(
    program: harness.Program,
) -> None:
    case = {"user": "alice", "tool": "deploy", "state": {"step": 1}}
    encrypted = sealer(NOW).seal(case["state"], **request_of(case))
    signed = sealer(NOW, SIGNED).seal(case["state"], **request_of(case))
    both = {"keys": [*ENCRYPTED.private_jwks()["keys"], *SIGNED.public_jwks()["keys"]]}
    # A signed token whose kid names the encryption key, and an encrypted one whose kid names the signing key.
    enc_kid, sig_kid = ENCRYPTED.signing_key.kid, SIGNED.signing_key.kid
    swap = {enc_kid: sig_kid, sig_kid: enc_kid}
    renamed = []
    for token in (signed, encrypted):
        header, _, rest = token.partition(".")
        fields = json.loads(b64decode(header))
        fields["kid"] = swap[fields["kid"]]
        text = base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).rstrip(b"=")
        renamed.append(f"{text.decode()}.{rest}")
    batch = [verify_job(token, case, NOW, both) for token in (encrypted, signed, *renamed)]
    assert harness.jobs(program, "verify", batch) == [
        {"valid": True, "state": case["state"]},
        {"valid": True, "state": case["state"]},
        {"valid": False, "reason": "algorithm_mismatch"},
        {"valid": False, "reason": "algorithm_mismatch"},
    ]


def test_python_opens_what_each_language_encrypts_and_refuses_its_changed_copies(
    program: harness.Program,
) -> None:
    """For TypeScript, these are jose-minted encrypted tokens (EncryptJWT) opening in Python."""
    source = cases(f"{program.name}-language-encrypts")
    jwk = ENCRYPTED.signing_key.private_jwk()
    batch, chosen = [], []
    for i in range(CASES):
        case = next(source)
        chosen.append((case, NOW + i))
        batch.append({"key": jwk, "issuer": ISSUER, "now": NOW + i, "ttl": 600, **case})
    results = harness.jobs(program, "mint", batch)
    rng = random.Random(f"{program.name}-encrypted-minted")
    for (case, now), result in zip(chosen, results, strict=True):
        assert result["token"].count(".") == 4
        opener = sealer(now + 1)
        assert python_verdict(opener, result["token"], case) == {"valid": True, "state": case["state"]}
        for changed in encrypted_mutations(result["token"], rng):
            assert not python_verdict(opener, changed, case)["valid"]


def test_tokens_each_language_encrypts_follow_the_profile_and_hide_the_claims(
    program: harness.Program,
) -> None:
    arguments: dict[str, Any] = {"b": 2, "a": [1.0, "x"]}
    case = {"user": "alice", "tool": "deploy", "arguments": arguments, "state": {"secret": "v"}}
    job = {"key": ENCRYPTED.signing_key.private_jwk(), "issuer": ISSUER, "now": NOW, "ttl": 600, **case}
    results = harness.jobs(program, "mint", [{**job, "jti": "AAAAAAAAAAAAAAAAAAAAAA"}, job])
    header, claims = open_with_the_raw_key(results[0]["token"])
    kid = ENCRYPTED.signing_key.kid
    assert header == {"alg": "dir", "enc": "A256GCM", "typ": "mrtr-state+jwt", "kid": kid}
    assert claims == {
        "iss": ISSUER,
        "sub": "alice",
        "aud": "tools/call:deploy",
        "iat": NOW,
        "exp": NOW + 600,
        "jti": "AAAAAAAAAAAAAAAAAAAAAA",
        "args_sha256": arguments_digest(arguments),
        "state": {"secret": "v"},
    }
    # A fresh random IV for every token, and nothing of the claims readable in the token's bytes.
    ivs = {result["token"].split(".")[2] for result in results}
    assert len(ivs) == 2
    for result in results:
        readable = result["token"].encode() + b"".join(b64decode(s) for s in result["token"].split("."))
        for secret in (b"alice", b"secret", b"deploy", ISSUER.encode()):
            assert secret not in readable


def test_jose_decrypt_with_the_raw_key_reads_the_profiles_claims(typescript: harness.Program) -> None:
    """jose's own jwtDecrypt, given only the 32 raw bytes, opens what the Python library encrypts.

    The example depends on the mrtr-state package only; `jose` is a dependency of the package, so the
    snippet runs from the package's directory (the example's build installs it there first).
    """
    arguments: dict[str, Any] = {"x": 1}
    case = {"user": "alice", "prompt": "plan", "arguments": arguments, "state": {"trip": ["LHR", "JFK"]}}
    token = sealer(NOW).seal(case["state"], **request_of(case))
    script = """
        import { jwtDecrypt } from "jose";
        let input = "";
        for await (const chunk of process.stdin) input += chunk;
        const { token, key } = JSON.parse(input);
        const { payload, protectedHeader } = await jwtDecrypt(token, Buffer.from(key, "base64url"), {
          keyManagementAlgorithms: ["dir"],
          contentEncryptionAlgorithms: ["A256GCM"],
          currentDate: new Date(Number(process.argv[1]) * 1000),
        });
        process.stdout.write(JSON.stringify({ payload, protectedHeader }));
    """
    result = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(NOW + 1)],
        cwd=harness.ROOT / "typescript",
        input=json.dumps({"token": token, "key": ENCRYPTED.signing_key.private_jwk()["k"]}),
        capture_output=True,
        text=True,
        timeout=harness.RUN_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    opened = json.loads(result.stdout)
    assert opened["protectedHeader"] == {
        "alg": "dir",
        "enc": "A256GCM",
        "typ": "mrtr-state+jwt",
        "kid": ENCRYPTED.signing_key.kid,
    }
    assert {k: v for k, v in opened["payload"].items() if k != "jti"} == {
        "iss": ISSUER,
        "sub": "alice",
        "aud": "prompts/get:plan",
        "iat": NOW,
        "exp": NOW + 600,
        "args_sha256": arguments_digest(arguments),
        "state": case["state"],
    }
