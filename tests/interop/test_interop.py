"""Tokens cross between Python and every interop example, in both directions.

Each example in examples/interop/ is built once per test run from its own build file (the
`program` fixture of conftest.py), then driven in batches (see harness.py). The Python library
is the oracle: what it mints each language opens to exactly the same state, what it refuses
each language refuses for the same reason, and what each language mints the Python library
opens. The encrypted form has its own module, test_encrypted_interop.py.
"""

from __future__ import annotations

import json
import random
import re
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, StateSealer, arguments_digest, decode_unverified
from tests.interop import harness

EXPECTED_LANGUAGES = {"typescript", "go", "java", "rust"}
PROGRAMS = harness.discover()
VECTORS = harness.ROOT / "spec" / "vectors"
NOW = 1_767_225_600
ISSUER = "https://mcp.example.com"
CASES_PER_ALGORITHM = 60


# --- random inputs --------------------------------------------------------------------------------

_ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyz0123456789-_./:",
    "ÀÉÎÕÜßçñøåæ",
    "日本語中文한국어",
    "😀🚀𝄞𐍈",
    '"\\\t\n\x00\x1f\x7f\u2028',
]


def text(rng: random.Random, low: int = 1, high: int = 12) -> str:
    return "".join(rng.choice(rng.choice(_ALPHABETS)) for _ in range(rng.randint(low, high)))


def number(rng: random.Random, *, bindable: bool = False) -> int | float:
    """A JSON number; with ``bindable``, never one whose value is an integer beyond 2**53 - 1.

    Such arguments are unbindable (profile, section 3.4): sealing them is refused.
    """
    kind = rng.randrange(4)
    if kind == 0:
        return rng.randint(-(2**53) + 1, 2**53 - 1)
    if kind == 1:
        return rng.randint(-1000, 1000)
    if kind == 2:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
    while True:  # any finite double, subnormals and huge exponents included
        value: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        # Integral doubles between 2**53 and 1e21 are left out: JSON.stringify writes
        # them as integer literals, which the profile refuses beyond the safe range
        # (section 3.3), so a JavaScript minter cannot carry them.
        if (
            value == value
            and abs(value) != float("inf")
            and not (value.is_integer() and 2**53 <= abs(value) < 1e21)
            and not (bindable and abs(value) >= 2**53)
        ):
            return value


def json_value(rng: random.Random, depth: int = 0, *, bindable: bool = False) -> Any:
    kind = rng.randrange(7 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return number(rng, bindable=bindable)
    if kind in (3, 4):
        return text(rng, 0, 16)
    if kind == 5:
        return [json_value(rng, depth + 1, bindable=bindable) for _ in range(rng.randint(0, 4))]
    return {text(rng, 0, 8): json_value(rng, depth + 1, bindable=bindable) for _ in range(rng.randint(0, 4))}


def target(rng: random.Random) -> dict[str, str]:
    kind = rng.choice(["tool", "tool", "prompt", "resource"])
    name = text(rng) if kind != "resource" else f"file:///{text(rng)}"
    return {kind: name}


def cases(seed: str) -> Iterator[dict[str, Any]]:
    """Random requests: user, target, arguments (sometimes none) and a state."""
    rng = random.Random(seed)
    while True:
        request: dict[str, Any] = {"user": text(rng), **target(rng), "state": json_value(rng)}
        if "resource" not in request and rng.random() < 0.8:
            request["arguments"] = {
                text(rng, 1, 8): json_value(rng, 1, bindable=True) for _ in range(rng.randint(0, 4))
            }
        yield request


def request_of(case: dict[str, Any]) -> dict[str, Any]:
    return {k: case[k] for k in ("user", "tool", "prompt", "resource", "arguments") if k in case}


RINGS = {alg: Keyring.generate(alg) for alg in ("HS256", "EdDSA")}


def verifier_jwks(alg: str) -> dict[str, Any]:
    """What a replica holds: the HS256 secret, or only the Ed25519 public key."""
    ring = RINGS[alg]
    return ring.private_jwks() if alg == "HS256" else ring.public_jwks()


def python_sealer(alg: str, now: int) -> StateSealer:
    return StateSealer(RINGS[alg], issuer=ISSUER, clock=lambda: now)


def python_verdict(sealer: StateSealer, token: str, case: dict[str, Any]) -> dict[str, Any]:
    try:
        state = sealer.open(token, **{"arguments": {}, **request_of(case)})
    except InvalidRequestState as refusal:
        return {"valid": False, "reason": refusal.reason}
    return {"valid": True, "state": state}


#: The request every "another user, tool, request, issuer and time" test seals its token for.
CONTEXT_CASE = {"user": "alice", "tool": "deploy", "arguments": {"env": "prod"}, "state": {"step": 2}}
#: CONTEXT_CASE's token presented in another context: the request, the verifier's clock, the reason. The
#: tests add one more job, the right request at NOW under another issuer: `wrong_issuer`.
OTHER_CONTEXTS = [
    ({**CONTEXT_CASE, "user": "mallory"}, NOW, "wrong_user"),
    ({**CONTEXT_CASE, "tool": "delete_repo"}, NOW, "wrong_tool"),
    ({k: v for k, v in CONTEXT_CASE.items() if k != "tool"} | {"prompt": "deploy"}, NOW, "wrong_tool"),
    ({**CONTEXT_CASE, "arguments": {"env": "staging"}}, NOW, "wrong_request"),
    (CONTEXT_CASE, NOW + 600, "expired"),
    (CONTEXT_CASE, NOW - 1, "issued_in_future"),
]


def verify_job(alg: str, token: str, case: dict[str, Any], now: int) -> dict[str, Any]:
    job = {"keys": verifier_jwks(alg), "token": token, "issuer": ISSUER, "now": now, **request_of(case)}
    job.pop("state", None)
    return job


def mutations(token: str, rng: random.Random) -> list[str]:
    """Ways a client could change a token: every one is refused by the Python library."""
    header, payload, signature = token.split(".")
    i = rng.randrange(len(payload))
    other = "A" if payload[i] != "A" else "B"
    return [
        f"{header}.{payload[:i]}{other}{payload[i + 1 :]}.{signature}",
        f"{header}.{payload}.{signature[:-4]}{'AAAA' if signature[-4:] != 'AAAA' else 'BBBB'}",
        f"{header}.{payload}",
        f"{payload}.{header}.{signature}",
        f"{header}.{payload}.{signature}.",
        f"{header}.{payload}={'.'}{signature}",
        token[:-1],
        token + "A",
        f"{header[:-2]}xx.{payload}.{signature}",
    ]


# --- the tests ------------------------------------------------------------------------------------


def test_all_four_languages_have_an_example() -> None:
    assert {p.name for p in PROGRAMS} >= EXPECTED_LANGUAGES


def test_every_vector_passes(program: harness.Program) -> None:
    result = harness.run(program, "vectors", str(VECTORS))
    lines = result.stdout.strip().splitlines()
    total = sum(
        len(json.loads((VECTORS / name).read_text(encoding="utf-8"))["vectors"])
        for name in ("tokens.json", "encrypted.json", "arguments.json", "invalid-keys.json")
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert lines, "the vectors command printed nothing"
    assert re.fullmatch(rf"{total} passed, 0 failed", lines[-1]), lines[-3:]


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_each_language_opens_what_python_mints_to_exactly_the_state(
    program: harness.Program, alg: str
) -> None:
    source = cases(f"{program.name}-{alg}-python-mints")
    batch, expected = [], []
    for i in range(CASES_PER_ALGORITHM):
        case = next(source)
        now = NOW + i
        token = python_sealer(alg, now).seal(case["state"], **request_of(case))
        batch.append(verify_job(alg, token, case, now + 1))
        expected.append({"valid": True, "state": case["state"]})
    assert harness.jobs(program, "verify", batch) == expected


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_each_language_refuses_tampered_tokens_for_the_reason_python_gives(
    program: harness.Program, alg: str
) -> None:
    rng = random.Random(f"{program.name}-{alg}-tamper")
    source = cases(f"{program.name}-{alg}-tampered")
    batch, expected = [], []
    for _ in range(12):
        case = next(source)
        sealer = python_sealer(alg, NOW)
        token = sealer.seal(case["state"], **request_of(case))
        for changed in mutations(token, rng):
            verdict = python_verdict(sealer, changed, case)
            assert not verdict["valid"], "the Python library accepted a changed token"
            batch.append(verify_job(alg, changed, case, NOW))
            expected.append(verdict)
    assert harness.jobs(program, "verify", batch) == expected


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_each_language_refuses_another_user_tool_request_issuer_and_time(
    program: harness.Program, alg: str
) -> None:
    token = python_sealer(alg, NOW).seal(CONTEXT_CASE["state"], **request_of(CONTEXT_CASE))
    batch = [verify_job(alg, token, c, now) for c, now, _ in OTHER_CONTEXTS]
    batch.append({**verify_job(alg, token, CONTEXT_CASE, NOW), "issuer": "https://other.example.com"})
    reasons = [r.get("reason") for r in harness.jobs(program, "verify", batch)]
    assert reasons == [reason for _, _, reason in OTHER_CONTEXTS] + ["wrong_issuer"]


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_python_opens_what_each_language_mints_and_refuses_its_tampered_copies(
    program: harness.Program, alg: str
) -> None:
    source = cases(f"{program.name}-{alg}-language-mints")
    key = RINGS[alg].signing_key
    batch, chosen = [], []
    for i in range(CASES_PER_ALGORITHM):
        case = next(source)
        chosen.append((case, NOW + i))
        batch.append({"key": key.private_jwk(), "issuer": ISSUER, "now": NOW + i, "ttl": 600, **case})
    results = harness.jobs(program, "mint", batch)
    rng = random.Random(f"{program.name}-{alg}-minted")
    for (case, now), result in zip(chosen, results, strict=True):
        sealer = python_sealer(alg, now + 1)
        assert python_verdict(sealer, result["token"], case) == {"valid": True, "state": case["state"]}
        for changed in mutations(result["token"], rng):
            assert not python_verdict(sealer, changed, case)["valid"]


def test_tokens_each_language_mints_follow_the_profile_header_and_claims(program: harness.Program) -> None:
    key: Key = RINGS["EdDSA"].signing_key
    case = {"user": "alice", "tool": "deploy", "arguments": {"b": 2, "a": [1.0, "x"]}, "state": {"k": "v"}}
    (result,) = harness.jobs(
        program,
        "mint",
        [
            {
                "key": key.private_jwk(),
                "issuer": ISSUER,
                "now": NOW,
                "ttl": 600,
                "jti": "AAAAAAAAAAAAAAAAAAAAAA",
                **case,
            }
        ],
    )
    header, claims = decode_unverified(result["token"])
    assert header == {"alg": "EdDSA", "typ": "mrtr-state+jwt", "kid": key.kid}
    assert claims == {
        "iss": ISSUER,
        "sub": "alice",
        "aud": "tools/call:deploy",
        "iat": NOW,
        "exp": NOW + 600,
        "jti": "AAAAAAAAAAAAAAAAAAAAAA",
        "args_sha256": arguments_digest(case["arguments"]),
        "state": {"k": "v"},
    }


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_each_language_refuses_a_missing_binding_when_the_verifier_requires_it(
    program: harness.Program, alg: str
) -> None:
    sealer = python_sealer(alg, NOW)
    tool = {"user": "alice", "tool": "deploy", "arguments": {"env": "prod"}}
    resource = {"user": "alice", "resource": "file:///reports/q3.csv"}
    unbound_tool = sealer.seal({"step": 1}, user="alice", tool="deploy")
    bound_tool = sealer.seal({"step": 1}, **tool)
    unbound_resource = sealer.seal({"step": 1}, **resource)
    cases = [
        (unbound_tool, tool, True, "wrong_request"),
        (unbound_tool, tool, False, None),
        (bound_tool, tool, True, None),
        (unbound_resource, resource, True, None),  # a resource read has no arguments to bind
    ]
    batch = [
        {**verify_job(alg, t, case, NOW), "require_arguments": required} for t, case, required, _ in cases
    ]
    reasons = [result.get("reason") for result in harness.jobs(program, "verify", batch)]
    assert reasons == [reason for *_, reason in cases]


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_each_language_refuses_bound_tokens_for_arguments_with_integers_beyond_2_53(
    program: harness.Program, alg: str
) -> None:
    sealer = python_sealer(alg, NOW)
    token = sealer.seal({"step": 1}, user="alice", tool="delete", arguments={"id": 2**53 - 1})
    unbound = sealer.seal({"step": 1}, user="alice", tool="delete")
    retries: list[Any] = [2**53, 2**53 + 1, -(2**53), 2**60, 1e23, 1.152921504606847e18, [2**64]]
    batch = [
        verify_job(alg, token, {"user": "alice", "tool": "delete", "arguments": {"id": r}}, NOW)
        for r in retries
    ]
    batch.append(
        verify_job(alg, unbound, {"user": "alice", "tool": "delete", "arguments": {"id": 2**60}}, NOW)
    )
    results = harness.jobs(program, "verify", batch)
    assert results == [{"valid": False, "reason": "wrong_request"}] * len(retries) + [
        {"valid": True, "state": {"step": 1}}
    ]


def test_each_language_refuses_to_mint_for_unbindable_arguments(program: harness.Program) -> None:
    key = RINGS["HS256"].signing_key
    job = {
        "key": key.private_jwk(),
        "issuer": ISSUER,
        "user": "alice",
        "tool": "delete",
        "arguments": {"id": 2**60 + 1},
        "now": NOW,
        "ttl": 600,
        "state": {},
    }
    with pytest.raises(ValueError, match="strings"):
        python_sealer("HS256", NOW).seal({}, user="alice", tool="delete", arguments=job["arguments"])
    result = harness.run(program, "mint", stdin=json.dumps({"jobs": [job]}))
    assert result.returncode == 2, result.stdout
    assert "strings" in result.stderr
