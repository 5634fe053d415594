"""The shapes of the profile's values, as types for callers' type checkers.

:data:`~mrtr_state.errors.Reason` types a refusal's reason code; :class:`Claims`
types a token's claim set (profile, section 3.2) as a verifier has checked it: the
closed set of claims, each of its type. Types only: the rules themselves are
checked at run time by :mod:`mrtr_state.token.claims`.
"""

from __future__ import annotations

from typing import Any, TypedDict

from mrtr_state.errors import Reason

__all__ = ["Claims", "Reason"]


class _RequiredClaims(TypedDict):
    iss: str
    sub: str
    aud: str
    iat: int
    exp: int
    jti: str
    state: Any


class Claims(_RequiredClaims, total=False):
    """A claim set of the profile (section 3.2): every required claim, and ``args_sha256`` when bound.

    ``iss``, ``sub`` and ``aud`` are non-empty strings (``aud`` is the target, such
    as ``"tools/call:deploy"``); ``iat`` and ``exp`` are integer NumericDates;
    ``jti`` is the token's unique id in base64url; ``args_sha256`` is the 43-character
    argument digest; ``state`` is the sealed JSON value.
    """

    args_sha256: str
