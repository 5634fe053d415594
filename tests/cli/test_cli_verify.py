"""``mrtr-state verify``: the server's verdict on the command line, with the reason for a refusal."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mrtr_state import REASONS, Key, Keyring, StateSealer

from .conftest import ISSUER, NOW, Rings, Run, craft, seal

REQUEST = ["--issuer", ISSUER, "--user", "alice", "--tool", "deploy", "--now", str(NOW + 48)]


def flip_one_character(token: str) -> str:
    """Change one character in the middle of the payload, as a meddling client would."""
    i = len(token) // 2
    return token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]


@pytest.mark.parametrize("ring_file", ["eddsa", "hs256", "mixed"])
def test_verify_prints_the_state_of_a_valid_token_and_exits_0(run: Run, rings: Rings, ring_file: str) -> None:
    ring = rings.ring(getattr(rings, ring_file))
    token = seal(ring, {"step": 2, "plan": ["build", "push"]}, arguments={"env": "prod"})
    result = run(
        "verify",
        token,
        "--keys",
        f"{ring_file}.json",
        *REQUEST,
        "--arguments",
        '{"env": "prod"}',
        secrets=rings.secrets,
    )
    assert result.status == 0, result
    first, _, state = result.stdout.partition("\n")
    assert first.startswith("valid:")
    assert "expires in 9m 12s" in first
    assert json.loads(state) == {"step": 2, "plan": ["build", "push"]}
    for secret in rings.secrets:
        assert secret not in result.stdout


def test_verify_with_the_published_public_keys_only(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa))
    assert run("verify", token, "--keys", "public.json", *REQUEST).status == 0


def test_verify_json_gives_the_state(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa), [1, "two"])
    result = run("verify", token, "--keys", "eddsa.json", *REQUEST, "--json")
    assert result.status == 0
    assert json.loads(result.stdout) == {
        "valid": True,
        "state": [1, "two"],
        "expires_at": "2026-01-01T00:10:00Z",
        "expires_in": 552,
    }


def refusal_cases(rings: Rings) -> dict[str, tuple[str, list[str]]]:
    """For each reason code: a token and the options that make verify refuse it for that reason."""
    ring = rings.ring(rings.hs256)
    hs_key = ring.signing_key
    good = seal(ring, arguments={"env": "prod"})
    args = ["--arguments", '{"env": "prod"}']
    claims = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": "tools/call:deploy",
        "iat": NOW,
        "exp": NOW + 600,
        "jti": "AAAAAAAAAAAAAAAAAAAAAA",
        "state": 1,
    }
    header = {"alg": "HS256", "typ": "mrtr-state+jwt", "kid": hs_key.kid}
    ed_key = Key.generate("EdDSA")
    return {
        "too_large": (
            seal(ring, "x" * 9000, arguments={"env": "prod"}, max_token_bytes=1 << 16),
            [*REQUEST, *args],
        ),
        "malformed": (craft(hs_key, header, {**claims, "nbf": NOW}), REQUEST),
        "unsupported_header": (craft(hs_key, {**header, "x5u": "https://x"}, claims), REQUEST),
        "wrong_type": (craft(hs_key, {**header, "typ": "JWT"}, claims), REQUEST),
        "unknown_key": (seal(rings.ring(rings.other)), REQUEST),
        "algorithm_mismatch": (craft(ed_key, {**header, "alg": "EdDSA"}, claims), REQUEST),
        "bad_signature": (flip_one_character(good), [*REQUEST, *args]),
        "lifetime_too_long": (good, [*REQUEST, *args, "--max-lifetime", "300"]),
        "issued_in_future": (good, [*REQUEST, *args, "--now", str(NOW - 60)]),
        "expired": (good, [*REQUEST, *args, "--now", str(NOW + 780)]),
        "wrong_issuer": (good, [*REQUEST, *args, "--issuer", "https://other.example.com"]),
        "wrong_user": (good, [*REQUEST, *args, "--user", "mallory"]),
        "wrong_tool": (good, [*REQUEST, *args, "--tool", "delete_repo"]),
        "wrong_request": (good, [*REQUEST, "--arguments", '{"env": "staging"}']),
    }


REFUSALS = [
    ("too_large", None),
    ("malformed", "claim the profile does not define"),
    ("unsupported_header", None),
    ("wrong_type", None),
    ("unknown_key", "the ring holds"),
    ("algorithm_mismatch", "but that key is HS256"),
    ("bad_signature", "changed after it was signed"),
    ("lifetime_too_long", "its lifetime is 600 s; this verifier accepts 300 s"),
    ("issued_in_future", "1m ahead of this clock"),
    ("expired", "expired 3m ago, at 2026-01-01T00:10:00Z"),
    ("wrong_issuer", 'issued by "https://files.example.com", not by "https://other.example.com"'),
    ("wrong_user", 'bound to the user "alice", not "mallory"'),
    ("wrong_tool", 'bound to "tools/call:deploy", not "tools/call:delete_repo"'),
    ("wrong_request", "the --arguments given have"),
]


@pytest.mark.parametrize(("reason", "explanation"), REFUSALS)
def test_a_refusal_prints_the_reason_code_and_its_meaning_and_exits_1(
    run: Run, rings: Rings, reason: str, explanation: str | None
) -> None:
    token, options = refusal_cases(rings)[reason]
    result = run("verify", token, "--keys", "hs256.json", *options, secrets=rings.secrets)
    assert result.status == 1, result
    assert result.stdout.splitlines()[0] == f"refused: {reason}: {REASONS[reason]}"
    if explanation is not None:
        assert explanation in result.stdout
    assert result.stderr == ""
    for secret in rings.secrets:
        assert secret not in result.stdout


@pytest.mark.parametrize(("reason", "explanation"), REFUSALS[:3])
def test_a_refusal_in_json_has_the_reason_and_message(
    run: Run, rings: Rings, reason: str, explanation: str | None
) -> None:
    token, options = refusal_cases(rings)[reason]
    result = run("verify", token, "--keys", "hs256.json", *options, "--json")
    assert result.status == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False
    assert report["reason"] == reason
    assert report["message"] == REASONS[reason]


def test_without_arguments_the_request_has_none_as_the_profile_says(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa), arguments={"env": "prod"})
    result = run("verify", token, "--keys", "eddsa.json", *REQUEST)
    assert result.status == 1
    assert "wrong_request" in result.stdout
    assert "without --arguments the request has {}" in result.stdout


@pytest.mark.parametrize(
    ("target", "option"),
    [
        ({"prompt": "summary"}, ["--prompt", "summary"]),
        ({"resource": "file:///q3.csv"}, ["--resource", "file:///q3.csv"]),
    ],
)
def test_verify_binds_prompts_and_resources_as_the_profile_maps_them(
    run: Run, rings: Rings, target: dict[str, str], option: list[str]
) -> None:
    token = seal(rings.ring(rings.eddsa), **target)
    base = ["--issuer", ISSUER, "--user", "alice", "--now", str(NOW)]
    assert run("verify", token, "--keys", "eddsa.json", *base, *option).status == 0
    assert (
        run("verify", token, "--keys", "eddsa.json", *base, "--tool", next(iter(target.values()))).status == 1
    )


def test_leeway_accepts_a_token_a_little_past_its_expiry(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa))
    late = ["--issuer", ISSUER, "--user", "alice", "--tool", "deploy", "--now", str(NOW + 610)]
    assert run("verify", token, "--keys", "eddsa.json", *late).status == 1
    assert run("verify", token, "--keys", "eddsa.json", *late, "--leeway", "30").status == 0


def test_verify_reads_the_token_from_standard_input(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa))
    assert run("verify", "-", "--keys", "eddsa.json", *REQUEST, stdin=token + "\n").status == 0


def test_verify_reads_a_jwks_from_the_environment_variable(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.mixed))
    result = run(
        "verify", token, *REQUEST, env={"MRTR_STATE_KEYS": rings.mixed.read_text()}, secrets=rings.secrets
    )
    assert result.status == 0


def test_verify_reads_an_hs256_secret_from_the_environment_variable(run: Run) -> None:
    secret = bytes(range(100, 132))
    token = seal(Keyring([Key.from_secret(secret)]))
    encoded = base64.urlsafe_b64encode(secret).decode()
    result = run(
        "verify", token, *REQUEST, env={"MRTR_STATE_KEYS": encoded}, secrets=[encoded, encoded.rstrip("=")]
    )
    assert result.status == 0
    assert encoded.rstrip("=") not in result.stdout


def test_a_key_file_wins_over_the_environment_variable(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa))
    env = {"MRTR_STATE_KEYS": rings.other.read_text()}
    assert run("verify", token, "--keys", "eddsa.json", *REQUEST, env=env).status == 0


def test_verify_accepts_a_single_jwk_as_the_key_file(run: Run, rings: Rings, tmp_path: Path) -> None:
    ring = rings.ring(rings.eddsa)
    (tmp_path / "one.json").write_text(json.dumps(ring.signing_key.public_jwk()))
    assert run("verify", seal(ring), "--keys", "one.json", *REQUEST).status == 0


def test_verify_uses_the_real_clock_without_now(run: Run, rings: Rings) -> None:
    ring = rings.ring(rings.eddsa)
    fresh = StateSealer(ring, issuer=ISSUER).seal(None, user="alice", tool="deploy")
    assert (
        run(
            "verify", fresh, "--keys", "eddsa.json", "--issuer", ISSUER, "--user", "alice", "--tool", "deploy"
        ).status
        == 0
    )
    at_2026 = seal(ring)  # valid from 2026-01-01T00:00:00Z for ten minutes, which is not now
    result = run(
        "verify", at_2026, "--keys", "eddsa.json", "--issuer", ISSUER, "--user", "alice", "--tool", "deploy"
    )
    assert result.status == 1
    assert result.stdout.split(":")[1].strip() in ("expired", "issued_in_future")


@pytest.mark.parametrize(
    "text",
    ["", "hello", "a.b.c", "a.b.c.d", "YQ.YQ.YQ", "e30=.e30.AA"],
)
def test_text_that_is_not_a_jwt_is_bad_input_not_a_verdict(run: Run, rings: Rings, text: str) -> None:
    line = run("verify", "--keys", "eddsa.json", *REQUEST, "--", text).error_line()
    assert "not a requestState token" in line


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--arguments", "{"], "--arguments is not JSON"),
        (["--arguments", "[1, 2]"], "--arguments must be a JSON object"),
        (["--arguments", "[" * 100_000], "--arguments"),
        (["--user", ""], "--user must not be empty"),
        (["--tool", ""], "--tool must not be empty"),
        (["--issuer", ""], "--issuer must not be empty"),
        (["--leeway", "301"], "--leeway must be from 0 to 300"),
        (["--leeway", "-1"], "--leeway must be from 0 to 300"),
        (["--max-lifetime", "0"], "--max-lifetime must be at least 1"),
    ],
)
def test_bad_options_are_one_line_and_status_2(
    run: Run, rings: Rings, options: list[str], expected: str
) -> None:
    token = seal(rings.ring(rings.eddsa))
    result = run("verify", token, "--keys", "eddsa.json", *REQUEST, *options)
    assert expected in result.error_line()


def test_a_changed_payload_is_the_servers_bad_signature_verdict_not_bad_input(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa))
    header, payload, signature = token.split(".")
    garbage = f"{header}.{'A' * len(payload)}.{signature}"  # the payload no longer decodes to JSON
    result = run("verify", garbage, "--keys", "eddsa.json", *REQUEST)
    assert result.status == 1
    assert result.stdout.startswith("refused: bad_signature:")


def test_a_token_bound_to_empty_arguments_opens_without_the_option(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa), arguments={})
    assert run("verify", token, "--keys", "eddsa.json", *REQUEST).status == 0


def test_require_arguments_refuses_a_token_without_the_binding(run: Run, rings: Rings) -> None:
    unbound = seal(rings.ring(rings.eddsa))
    bound = seal(rings.ring(rings.eddsa), arguments={})
    assert run("verify", unbound, "--keys", "eddsa.json", *REQUEST).status == 0
    refused = run("verify", unbound, "--keys", "eddsa.json", *REQUEST, "--require-arguments")
    assert refused.status == 1
    assert refused.stdout.startswith("refused: wrong_request:")
    assert "--require-arguments" in refused.stdout
    assert run("verify", bound, "--keys", "eddsa.json", *REQUEST, "--require-arguments").status == 0


def test_unbindable_arguments_are_refused_as_wrong_request_and_explained(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa), arguments={"id": "1152921504606846977"})
    result = run(
        "verify", token, "--keys", "eddsa.json", *REQUEST, "--arguments", '{"id": 1152921504606846977}'
    )
    assert result.status == 1
    assert result.stdout.startswith("refused: wrong_request:")
    assert "unbindable" in result.stdout
    assert "as strings" in result.stdout
