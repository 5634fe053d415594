"""``mrtr-state inspect``: what a token says, clearly marked as not verified."""

from __future__ import annotations

import json

import pytest

from mrtr_state import Key, arguments_digest

from .conftest import ISSUER, NOW, Rings, Run, craft, seal

HEADER = {"alg": "HS256", "typ": "mrtr-state+jwt", "kid": "k1"}
CLAIMS = {
    "iss": ISSUER,
    "sub": "alice",
    "aud": "tools/call:deploy",
    "iat": NOW,
    "exp": NOW + 600,
    "jti": "AAAAAAAAAAAAAAAAAAAAAA",
    "state": {"step": 2},
}
KEY = Key.generate("HS256", kid="k1")


def test_the_first_line_says_the_token_was_not_verified(run: Run, rings: Rings) -> None:
    result = run("inspect", seal(rings.ring(rings.eddsa)), "--now", str(NOW))
    assert result.status == 0
    assert result.stdout.splitlines()[0].startswith("NOT VERIFIED:")


def test_inspect_shows_issuer_user_tool_digest_and_dates_in_utc(run: Run, rings: Rings) -> None:
    ring = rings.ring(rings.eddsa)
    token = seal(ring, {"step": 2, "plan": ["build"]}, arguments={"env": "prod"})
    out = run("inspect", token, "--now", str(NOW + 48)).stdout
    assert f'issuer:     "{ISSUER}" (iss)' in out
    assert 'user:       "alice" (sub)' in out
    assert 'target:     tool "deploy" (aud "tools/call:deploy")' in out
    assert "issued:     2026-01-01T00:00:00Z, 48s ago" in out
    assert "expires:    2026-01-01T00:10:00Z, expires in 9m 12s" in out
    assert arguments_digest({"env": "prod"}) in out
    assert f'kid "{ring.signing_key.kid}"' in out
    assert 'typ "mrtr-state+jwt"' in out
    assert '"plan": [' in out


def test_inspect_says_how_long_ago_a_token_expired_and_that_it_is_refused(run: Run, rings: Rings) -> None:
    out = run("inspect", seal(rings.ring(rings.hs256)), "--now", str(NOW + 780)).stdout
    assert "expired 3m ago" in out
    assert "would refuse it: expired" in out


def test_inspect_shows_prompt_and_resource_targets(run: Run, rings: Rings) -> None:
    ring = rings.ring(rings.hs256)
    assert 'target:     prompt "summary"' in run("inspect", seal(ring, prompt="summary")).stdout
    uri = "file:///reports/q3.csv"
    assert f'target:     resource "{uri}"' in run("inspect", seal(ring, resource=uri)).stdout


def test_inspect_reads_the_token_from_standard_input(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa))
    assert run("inspect", "-", stdin=f"  {token}\n").stdout == run("inspect", token).stdout


def test_inspect_shows_a_token_whose_signature_is_wrong_still_marked_not_verified(
    run: Run, rings: Rings
) -> None:
    token = seal(rings.ring(rings.eddsa))
    forged = token[: token.rindex(".") + 1] + "A" * 86
    result = run("inspect", forged)
    assert result.status == 0
    assert result.stdout.startswith("NOT VERIFIED")


def test_inspect_json_is_one_object_that_says_it_is_not_verified(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.eddsa), arguments={"env": "prod"})
    result = run("inspect", token, "--json", "--now", str(NOW + 780))
    assert len(result.stdout.splitlines()) == 1
    report = json.loads(result.stdout)
    assert next(iter(report)) == "verified"
    assert report["verified"] is False
    assert report["claims"]["sub"] == "alice"
    assert report["claims"]["args_sha256"] == arguments_digest({"env": "prod"})
    assert report["target"] == {"kind": "tool", "name": "deploy"}
    assert report["issued_at"] == "2026-01-01T00:00:00Z"
    assert report["expires_at"] == "2026-01-01T00:10:00Z"
    assert report["expires_in"] == -180
    assert report["problem"]["reason"] == "expired"


def test_inspect_json_of_a_valid_token_finds_no_problem(run: Run, rings: Rings) -> None:
    report = json.loads(run("inspect", seal(rings.ring(rings.eddsa)), "--json", "--now", str(NOW)).stdout)
    assert report["problem"] is None
    assert report["expires_in"] == 600


@pytest.mark.parametrize(
    ("header", "claims", "reason"),
    [
        ({**HEADER, "typ": "JWT"}, CLAIMS, "wrong_type"),
        ({**HEADER, "jku": "https://evil.example"}, CLAIMS, "unsupported_header"),
        ({**HEADER, "alg": "none"}, CLAIMS, "unsupported_header"),
        (HEADER, {**CLAIMS, "nbf": NOW}, "malformed"),
        (HEADER, {k: v for k, v in CLAIMS.items() if k != "jti"}, "malformed"),
        (HEADER, {**CLAIMS, "aud": ["tools/call:deploy"]}, "malformed"),
        (HEADER, {**CLAIMS, "exp": NOW + 3600}, "lifetime_too_long"),
        (HEADER, {**CLAIMS, "iat": NOW + 60, "exp": NOW + 660}, "issued_in_future"),
    ],
)
def test_inspect_names_the_refusal_any_default_verifier_gives_without_a_key(
    run: Run, header: dict[str, object], claims: dict[str, object], reason: str
) -> None:
    token = craft(KEY, header, claims)
    out = run("inspect", token, "--now", str(NOW)).stdout
    assert f"would refuse it: {reason}" in out
    assert (
        json.loads(run("inspect", token, "--json", "--now", str(NOW)).stdout)["problem"]["reason"] == reason
    )


def test_inspect_shows_claims_the_profile_does_not_allow(run: Run) -> None:
    out = run("inspect", craft(KEY, HEADER, {**CLAIMS, "role": "admin"}), "--now", str(NOW)).stdout
    assert '"role": "admin"' in out


def test_inspect_escapes_terminal_control_characters_from_the_token(run: Run) -> None:
    hostile = "\x1b[2J\x1b]0;pwned\x07 \u202egnp.exe \x00"
    token = craft(KEY, HEADER, {**CLAIMS, "sub": hostile, "state": {hostile: hostile}})
    for args in (["inspect", token], ["inspect", token, "--json"]):
        out = run(*args).stdout
        assert not any(ch in out for ch in "\x1b\x07\x00\u202e"), out
    assert "\\u001b[2J" in run("inspect", token).stdout


def test_inspect_says_a_lone_surrogate_makes_the_payload_not_strict_json(run: Run) -> None:
    # Profile, step 11: an escaped lone surrogate is not valid Unicode (I-JSON).
    raw = json.dumps({**CLAIMS, "state": "\ud800"}).encode()  # json writes it as the escape \ud800
    result = run("inspect", craft(KEY, HEADER, None, raw_claims=raw))
    assert result.status == 2
    assert "not strict UTF-8 JSON" in result.stderr


def test_inspect_shows_times_the_profile_does_not_allow_as_they_are(run: Run) -> None:
    out = run("inspect", craft(KEY, HEADER, {**CLAIMS, "iat": "yesterday", "exp": -5})).stdout
    assert '"yesterday" (iat; not an integer time' in out
    assert "would refuse it: malformed" in out


def test_inspect_shows_a_missing_claim_as_missing(run: Run) -> None:
    claims = {k: v for k, v in CLAIMS.items() if k not in ("sub", "state")}
    out = run("inspect", craft(KEY, HEADER, claims)).stdout
    assert "user:       (missing: no sub claim)" in out
    assert "state:      (missing)" in out


def test_inspect_needs_no_keys_and_reads_no_secrets(run: Run, rings: Rings) -> None:
    token = seal(rings.ring(rings.mixed))
    result = run("inspect", token, env={"MRTR_STATE_KEYS": rings.mixed.read_text()}, secrets=rings.secrets)
    for secret in rings.secrets:
        assert secret not in result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "a.b",
        "a.b.c.d",
        "eyJ.eyJ.",
        "a b.c.d",
        "YQ.YQ.YQ",  # base64url of "a": the header is not JSON
        "W10.e30.AA",  # header is [] (not an object)
        "e30=.e30.AA",  # padding
        "\u00e9.e30.AA",
        "A" * (1 << 20) + ".e30.AA",  # longer than any token
    ],
)
def test_inspect_of_text_that_is_not_a_jwt_is_one_line_and_status_2(run: Run, text: str) -> None:
    if len(text) > 100_000:
        line = run("inspect", "-", stdin=text).error_line()
    else:
        line = run("inspect", "--", text).error_line()
    assert line.startswith("mrtr-state: error:")


def test_inspect_of_binary_standard_input_is_bad_input(run: Run) -> None:
    assert "UTF-8" in run("inspect", "-", stdin=b"\xff\xfe\x00").error_line()
