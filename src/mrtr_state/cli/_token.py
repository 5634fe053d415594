"""What a token says, read without a key: shared by ``inspect`` and ``verify``.

Nothing here verifies a signature. :func:`decode` refuses text that is not a
compact JWS at all; :func:`key_free_problem` finds the first refusal a verifier
with default settings would give that needs no key (header rules, the claim set,
lifetime and time), using the core's own validator for the claims. A token of the
encrypted form (a compact JWE) shows its header only, unless it is decrypted with
a key ring (:func:`decrypt_claims`).
"""

from __future__ import annotations

import time
from typing import Any

from mrtr_state.binding.target import parse_audience
from mrtr_state.cli._io import MAX_INPUT_BYTES, CliError
from mrtr_state.errors import InvalidRequestState
from mrtr_state.keys.keys import Keyring
from mrtr_state.sealer import DEFAULT_LEEWAY, DEFAULT_MAX_LIFETIME
from mrtr_state.token import claims as claim_rules
from mrtr_state.token import jwe, jws
from mrtr_state.token.jws import HEADER_PARAMETERS, decode_unverified

__all__ = [
    "clock_now",
    "decode",
    "decode_header",
    "decrypt_claims",
    "is_encrypted",
    "is_time",
    "key_free_problem",
    "readable_claims",
    "target_of",
]


def _not_a_token(exc: InvalidRequestState) -> CliError:
    detail = f": {exc.detail}" if exc.detail else ""
    return CliError(f"this is not a requestState token (a compact JWT){detail}")


def is_encrypted(token: str) -> bool:
    """Whether ``token`` has the encrypted form's shape: five segments (profile, 3.6)."""
    return jwe.is_encrypted(token, MAX_INPUT_BYTES)


def decrypt_claims(token: str, ring: Keyring) -> dict[str, Any]:
    """The claims of an encrypted token, decrypted with ``ring`` (steps 2 to 11 of 5.1).

    The tag is checked, the bindings are not. Raises :class:`InvalidRequestState`
    with the step's reason when the token cannot be decrypted.
    """
    header, iv, ciphertext, tag = jwe.split(token, MAX_INPUT_BYTES)
    key = jwe.key_for_header(jws.decode_header(header), ring)
    return jwe.decode_claims(jwe.decrypt(key, header, iv, ciphertext, tag))


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
        if is_encrypted(token):
            return jws.decode_header(jwe.split(token, MAX_INPUT_BYTES)[0])
        return jws.decode_header(jws.split(token, MAX_INPUT_BYTES)[0])
    except InvalidRequestState as exc:
        raise _not_a_token(exc) from None


def readable_claims(token: str, ring: Keyring | None = None) -> dict[str, Any]:
    """The claims of ``token`` if its payload is a JSON object, else an empty dict (unverified).

    An encrypted token's claims are read only by decrypting it with ``ring``.
    """
    try:
        if is_encrypted(token):
            return {} if ring is None else decrypt_claims(token, ring)
        return decode_unverified(token, max_bytes=MAX_INPUT_BYTES)[1]
    except InvalidRequestState:
        return {}


def clock_now(now: float | None) -> int:
    """The time in whole seconds, as a verifier rounds it: ``--now`` or the real clock."""
    return int(time.time() if now is None else now)


#: Whether a claim is a NumericDate of the profile: the verifier's own rule (claims.is_numeric_date).
is_time = claim_rules.is_numeric_date


def target_of(aud: object) -> tuple[str, str] | None:
    """``("tool", "deploy")`` for ``"tools/call:deploy"``; ``None`` for any other ``aud``."""
    return parse_audience(aud)


def key_free_problem(
    header: dict[str, Any], claims: dict[str, Any] | None, *, now: int, encrypted: bool = False
) -> InvalidRequestState | None:
    """The first refusal a default verifier gives this token that needs no key, or ``None``.

    The signature and the issuer, user, target and argument bindings need a key or
    the request, so they are not checked; a ``None`` here proves nothing. For an
    encrypted token, the header rules of the encrypted form apply, and the claims
    (``None`` while they are still encrypted) are checked only once decrypted.
    """
    try:
        (jwe.check_header if encrypted else jws.check_header)(header)
    except InvalidRequestState as problem:
        extra = set(header) - (jwe.HEADER_PARAMETERS if encrypted else HEADER_PARAMETERS)
        if extra:  # name them: inspect is for the operator, who needs to see which
            names = ", ".join(sorted(repr(name) for name in extra))
            return InvalidRequestState(problem.reason, f"the header has parameters it may not: {names}")
        return problem
    if not isinstance(header.get("kid"), str):
        return InvalidRequestState("unknown_key", "the header has no kid string")
    if claims is None:
        return None
    try:
        claim_rules.check(claims, now=now, leeway=DEFAULT_LEEWAY, max_lifetime=DEFAULT_MAX_LIFETIME)
    except InvalidRequestState as problem:
        return problem
    return None
