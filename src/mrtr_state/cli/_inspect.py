"""``mrtr-state inspect``: what a token says, decoded without verifying it.

For the operator's question "why was this refused?": it shows the header and
every claim, the times as UTC dates with how long until or since expiry, the
bound issuer, user, target and argument digest, and the first refusal any
verifier would give without needing a key. Its first line says that nothing
was verified.

A token of the encrypted form (a compact JWE, profile section 3.6) shows its
header and says that its claims are encrypted; with ``--keys`` they are
decrypted (the tag is then checked, the bindings still are not).
"""

from __future__ import annotations

import argparse
from typing import Any

from mrtr_state.cli._io import load_ring, read_token
from mrtr_state.cli._parsing import Parser, epoch_seconds
from mrtr_state.cli._text import duration, iso_time, json_block, json_line, printable, quoted
from mrtr_state.cli._token import (
    clock_now,
    decode,
    decode_header,
    decrypt_claims,
    is_encrypted,
    is_time,
    key_free_problem,
    target_of,
)
from mrtr_state.errors import REASONS, InvalidRequestState
from mrtr_state.keys.keys import DEFAULT_KEYS_VARIABLE
from mrtr_state.sealer import DEFAULT_LEEWAY, DEFAULT_MAX_LIFETIME
from mrtr_state.token.claims import ALL_CLAIMS

__all__ = ["DECRYPTED_NOT_VERIFIED", "NOT_VERIFIED", "register"]

#: The first line of every human-readable inspection.
NOT_VERIFIED = (
    "NOT VERIFIED: decoded without a key; the signature and the bindings are unchecked "
    "(use `mrtr-state verify` to check them)"
)

#: The first line when an encrypted token was decrypted with ``--keys``.
DECRYPTED_NOT_VERIFIED = (
    "NOT VERIFIED: decrypted with --keys (its tag verified); the bindings are unchecked "
    "(use `mrtr-state verify` to check them)"
)

_ENCRYPTED_FORM = "encrypted (a JWE with dir and A256GCM)"

_EPILOG = """\
examples:
  mrtr-state inspect eyJhbGciOiJFZERTQSIs...
  pbpaste | mrtr-state inspect -
  mrtr-state inspect --json - < token.txt | jq .expires_in
  mrtr-state inspect "$ENCRYPTED_TOKEN" --keys ring.json

The output is read from the token alone, which anyone can write: trust nothing
in it until `mrtr-state verify` accepts the token.
"""


def register(commands: argparse._SubParsersAction[Parser]) -> None:
    """Add the ``inspect`` command to the parser."""
    inspect = commands.add_parser(
        "inspect",
        help="decode a requestState token WITHOUT verifying it, to see why it was refused",
        description="Decode a requestState token without verifying it and show what it says.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inspect.add_argument("token", metavar="TOKEN", help="the token; '-' reads it from standard input")
    inspect.add_argument("--json", action="store_true", help="print one JSON object, for machines")
    inspect.add_argument(
        "--keys",
        metavar="FILE",
        help="a key ring (JWKS) to decrypt an encrypted token with; a signed token is decoded without "
        f"keys (${DEFAULT_KEYS_VARIABLE} is never read here)",
    )
    inspect.add_argument(
        "--now",
        type=epoch_seconds,
        metavar="SECONDS",
        help="the time to compare expiry with, in seconds since the epoch (default: the clock)",
    )
    inspect.set_defaults(run=_inspect)


def _inspect(args: argparse.Namespace) -> int:
    token = read_token(args.token)
    now = clock_now(args.now)
    if is_encrypted(token):
        return _inspect_encrypted(token, args, now)
    header, claims = decode(token)
    problem = key_free_problem(header, claims, now=now)
    _report(header, claims, now, problem, as_json=args.json)
    return 0


def _inspect_encrypted(token: str, args: argparse.Namespace, now: int) -> int:
    header = decode_header(token)  # text that is not a JWE at all is bad input
    ring = None if args.keys is None else load_ring(args.keys)
    claims: dict[str, Any] | None = None
    problem = key_free_problem(header, None, now=now, encrypted=True)
    if ring is not None and problem is None:
        try:
            claims = decrypt_claims(token, ring)
        except InvalidRequestState as refusal:
            problem = refusal
        else:
            problem = key_free_problem(header, claims, now=now, encrypted=True)
    ciphertext_bytes = len(token.split(".")[3]) * 3 // 4
    _report(header, claims, now, problem, as_json=args.json, ciphertext_bytes=ciphertext_bytes)
    return 0


def _report(
    header: dict[str, Any],
    claims: dict[str, Any] | None,
    now: int,
    problem: InvalidRequestState | None,
    *,
    as_json: bool,
    ciphertext_bytes: int | None = None,
) -> None:
    """Print the inspection; ``ciphertext_bytes`` is given for an encrypted token only."""
    encrypted = ciphertext_bytes is not None
    if as_json:
        shown_claims = {} if claims is None else claims
        iat, exp = shown_claims.get("iat"), shown_claims.get("exp")
        target = target_of(shown_claims.get("aud"))
        report: dict[str, Any] = {
            "verified": False,
            "form": "encrypted" if encrypted else "signed",
            "decrypted": encrypted and claims is not None,
            "header": header,
            "claims": claims,
            "target": None if target is None else {"kind": target[0], "name": target[1]},
            "issued_at": iso_time(iat) if is_time(iat) else None,
            "expires_at": iso_time(exp) if is_time(exp) else None,
            "now": iso_time(now),
            "expires_in": exp - now if is_time(exp) else None,
            "problem": None
            if problem is None
            else {"reason": problem.reason, "message": str(problem), "detail": problem.detail},
        }
        print(json_line(report))
    elif not encrypted:
        print("\n".join(_lines(header, claims or {}, now, problem)))
    else:
        print("\n".join(_encrypted_lines(header, claims, now, problem, ciphertext_bytes or 0)))


def _header_line(header: dict[str, Any]) -> str:
    members = (f"{printable(name)} {quoted(value)}" for name, value in header.items())
    return "header:     " + ", ".join(members)


def _encrypted_lines(
    header: dict[str, Any],
    claims: dict[str, Any] | None,
    now: int,
    problem: InvalidRequestState | None,
    ciphertext_bytes: int,
) -> list[str]:
    if claims is not None:
        lines = _lines(header, claims, now, problem, first=DECRYPTED_NOT_VERIFIED)
        lines.insert(2, f"form:       {_ENCRYPTED_FORM}, decrypted with --keys")
        return lines
    lines = [NOT_VERIFIED, _header_line(header), f"form:       {_ENCRYPTED_FORM}"]
    lines.append(
        f"claims:     encrypted ({ciphertext_bytes} bytes): the issuer, user, target, times and state "
        "cannot be read without the key; give --keys FILE to decrypt them"
    )
    if problem is None:
        lines.append("check:      no refusal found in the header (the claims are encrypted)")
    else:
        lines.extend(_problem_lines(problem))
    return lines


def _problem_lines(problem: InvalidRequestState) -> list[str]:
    detail = f" ({printable(problem.detail)})" if problem.detail else ""
    return [
        f"check:      a verifier with default settings would refuse it: {problem.reason}{detail}",
        f"            {REASONS[problem.reason]}",
    ]


def _lines(
    header: dict[str, Any],
    claims: dict[str, Any],
    now: int,
    problem: InvalidRequestState | None,
    *,
    first: str = NOT_VERIFIED,
) -> list[str]:
    lines = [first, _header_line(header)]
    lines.append(f"issuer:     {_claim(claims, 'iss')}")
    lines.append(f"user:       {_claim(claims, 'sub')}")
    target = target_of(claims.get("aud"))
    if target is not None:
        lines.append(f"target:     {target[0]} {quoted(target[1])} (aud {quoted(claims['aud'])})")
    else:
        lines.append(f"target:     {_claim(claims, 'aud')}")
    lines.append(f"issued:     {_time(claims, 'iat', now)}")
    lines.append(f"expires:    {_time(claims, 'exp', now)}")
    lines.append(f"token id:   {_claim(claims, 'jti')}")
    if "args_sha256" in claims:
        lines.append(f"arguments:  bound to the digest {quoted(claims['args_sha256'])} (args_sha256)")
    else:
        lines.append("arguments:  not bound (no args_sha256 claim)")
    if "state" in claims:
        lines.append("state:")
        lines.extend("  " + line for line in json_block(claims["state"]).split("\n"))
    else:
        lines.append("state:      (missing)")
    others = [name for name in claims if name not in ALL_CLAIMS]
    if others:
        lines.append("other claims (the profile allows none):")
        lines.extend(f"  {quoted(name)}: {quoted(claims[name])}" for name in others)
    if problem is None:
        lines.append(
            "check:      no refusal found without the key "
            f"(default settings: leeway {DEFAULT_LEEWAY} s, max lifetime {DEFAULT_MAX_LIFETIME} s)"
        )
    else:
        lines.extend(_problem_lines(problem))
    return lines


def _claim(claims: dict[str, Any], name: str) -> str:
    if name not in claims:
        return f"(missing: no {name} claim)"
    return f"{quoted(claims[name])} ({name})"


def _time(claims: dict[str, Any], name: str, now: int) -> str:
    if name not in claims:
        return f"(missing: no {name} claim)"
    value = claims[name]
    if not is_time(value):
        return f"{quoted(value)} ({name}; not an integer time the profile allows)"
    date = iso_time(value)
    if date is None:
        return f"{value} ({name}; beyond the dates this tool can show)"
    if name == "exp" and value > now:
        when = f"expires in {duration(value - now)}"
    elif name == "exp":
        when = f"expired {duration(now - value)} ago"
    elif value > now:
        when = f"{duration(value - now)} in the future"
    else:
        when = f"{duration(now - value)} ago"
    return f"{date}, {when} ({name} {value})"
