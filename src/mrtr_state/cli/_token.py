"""What a token says, read without a key: shared by ``inspect`` and ``verify``.

Nothing here verifies a signature. :func:`decode` refuses text that is not a
compact JWS at all; :func:`key_free_problem` finds the first refusal a verifier
with default settings would give that needs no key (header rules, the claim set,
lifetime and time), using the core's own validator for the claims.
"""

from __future__ import annotations

import time
from typing import Any, TypeGuard

from mrtr_state import claims as claim_rules
from mrtr_state import jws
from mrtr_state.cli._io import MAX_INPUT_BYTES, CliError
from mrtr_state.errors import InvalidRequestState
from mrtr_state.jws import HEADER_PARAMETERS, TYP, decode_unverified
from mrtr_state.keys import ALGORITHMS
from mrtr_state.sealer import DEFAULT_LEEWAY, DEFAULT_MAX_LIFETIME
from mrtr_state.target import METHODS

__all__ = [
    "clock_now",
    "decode",
    "decode_header",
    "is_time",
    "key_free_problem",
    "readable_claims",
    "target_of",
]


def _not_a_token(exc: InvalidRequestState) -> CliError:
    detail = f": {exc.detail}" if exc.detail else ""
    return CliError(f"this is not a requestState token (a compact JWT){detail}")


def decode(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and claims of ``token``, unverified; :class:`CliError` when it is not a JWS at all."""
    try:
        return decode_unverified(token, max_bytes=MAX_INPUT_BYTES)
    except InvalidRequestState as exc:
        raise _not_a_token(exc) from None


def decode_header(token: str) -> dict[str, Any]:
    """The header of a compact JWS, unverified; :class:`CliError` when ``token`` is not one at all.

    The payload is left alone: a server checks the signature before it reads the
    payload, so a changed payload is a ``bad_signature`` verdict, not bad input.
    """
    try:
        return jws.decode_header(jws.split(token, MAX_INPUT_BYTES)[0])
    except InvalidRequestState as exc:
        raise _not_a_token(exc) from None


def readable_claims(token: str) -> dict[str, Any]:
    """The claims of ``token`` if its payload is a JSON object, else an empty dict (unverified)."""
    try:
        return decode_unverified(token, max_bytes=MAX_INPUT_BYTES)[1]
    except InvalidRequestState:
        return {}


def clock_now(now: float | None) -> int:
    """The time in whole seconds, as a verifier rounds it: ``--now`` or the real clock."""
    return int(time.time() if now is None else now)


def is_time(value: object) -> TypeGuard[int]:
    """Whether a claim is a NumericDate of the profile: an integer (not a bool) in 0..2**53-1."""
    return type(value) is int and 0 <= value <= 2**53 - 1


def target_of(aud: object) -> tuple[str, str] | None:
    """``("tool", "deploy")`` for ``"tools/call:deploy"``; ``None`` for any other ``aud``."""
    if not isinstance(aud, str):
        return None
    method, colon, name = aud.partition(":")
    for kind, known in METHODS.items():
        if colon and name and method == known:
            return kind, name
    return None


def key_free_problem(
    header: dict[str, Any], claims: dict[str, Any], *, now: int
) -> InvalidRequestState | None:
    """The first refusal a default verifier gives this token that needs no key, or ``None``.

    The signature and the issuer, user, target and argument bindings need a key or
    the request, so they are not checked; a ``None`` here proves nothing.
    """
    if not HEADER_PARAMETERS.issuperset(header):
        extra = ", ".join(sorted(repr(name) for name in set(header) - HEADER_PARAMETERS))
        return InvalidRequestState("unsupported_header", f"the header has parameters it may not: {extra}")
    if header.get("alg") not in ALGORITHMS:
        return InvalidRequestState("unsupported_header", "the header's alg is not HS256 or EdDSA")
    if header.get("typ") != TYP:
        return InvalidRequestState("wrong_type", f"the header's typ is not exactly {TYP!r}")
    if not isinstance(header.get("kid"), str):
        return InvalidRequestState("unknown_key", "the header has no kid string")
    # The core's validator, told that issuer, user and target are the token's own:
    # every rule but the bindings applies. Arguments are unknown, so a token bound to
    # arguments always reaches wrong_request, which is no finding.
    bindings = {name: claims.get(name) for name in ("iss", "sub", "aud")}
    try:
        claim_rules.validate(
            claims,
            now=now,
            leeway=DEFAULT_LEEWAY,
            max_lifetime=DEFAULT_MAX_LIFETIME,
            issuer=bindings["iss"] if isinstance(bindings["iss"], str) else "",
            user=bindings["sub"] if isinstance(bindings["sub"], str) else "",
            aud=bindings["aud"] if isinstance(bindings["aud"], str) else "",
            arguments=None,
        )
    except InvalidRequestState as problem:
        return None if problem.reason == "wrong_request" else problem
    return None
