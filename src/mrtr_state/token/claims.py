"""The claim set: what a minter writes and every rule a verifier applies to it.

This is the one place where claim rules live (profile, sections 3.2 to 3.4 and
steps 12 to 19 of section 5). It sees decoded JSON only; signatures and encoding
are :mod:`mrtr_state.token.jws`'s.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeGuard

from mrtr_state.binding.binding import Binding
from mrtr_state.errors import InvalidRequestState
from mrtr_state.token import _json

__all__ = [
    "ALL_CLAIMS",
    "REQUIRED_CLAIMS",
    "EncodedState",
    "build",
    "check",
    "check_bindings",
    "encode",
    "is_numeric_date",
    "state_json",
    "validate",
]

#: Claims every token carries.
REQUIRED_CLAIMS: Final = frozenset({"iss", "sub", "aud", "iat", "exp", "jti", "state"})
#: Every claim a token may carry; any other member refuses the token.
ALL_CLAIMS: Final = REQUIRED_CLAIMS | {"args_sha256"}

#: A verifier accepts 22 to 64 base64url characters (profile, 3.2): 22 hold the 128
#: random bits a minter must write (16 bytes), 64 leave room for other minters' forms.
_JTI: Final = re.compile(r"[A-Za-z0-9_-]{22,64}")
_DIGEST: Final = re.compile(r"[A-Za-z0-9_-]{43}")
_STRING_CLAIMS: Final = ("iss", "sub", "aud")
_ABSENT: Final = object()


def build(
    *,
    issuer: str,
    user: str,
    aud: str,
    iat: int,
    ttl: int,
    jti: str,
    state: Any,
    args_sha256: str | None,
) -> dict[str, Any]:
    """The claim set a minter emits (profile, section 4), in a fixed member order."""
    claims: dict[str, Any] = {
        "iss": issuer,
        "sub": user,
        "aud": aud,
        "iat": iat,
        "exp": iat + ttl,
        "jti": jti,
    }
    if args_sha256 is not None:
        claims["args_sha256"] = args_sha256
    claims["state"] = state
    return claims


class EncodedState:
    """A state checked against the profile (section 3.3) and written as compact JSON, once.

    Made from the state value: :func:`~mrtr_state.token._json.check_state`, then the
    compact UTF-8 JSON the token carries as its ``state`` claim (``json``). A
    sealer that is given one neither checks nor writes the state again, so a
    state made into text on its way out of a handler is not walked twice.

    Raises (when made): as :meth:`~mrtr_state.StateSealer.seal` for its state,
    :class:`TypeError` for a value that is not JSON and :class:`ValueError` for
    JSON the profile cannot carry exactly.
    """

    __slots__ = ("json",)

    json: bytes

    def __init__(self, state: Any) -> None:
        written = _json.encode_state(state)
        object.__setattr__(self, "json", _json.dumps(state) if written is None else written)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("EncodedState objects are immutable")

    def __repr__(self) -> str:
        return f"EncodedState(<{len(self.json)} bytes>)"


def encode(
    *,
    issuer: str,
    user: str,
    aud: str,
    iat: int,
    ttl: int,
    jti: str,
    state: Any,
    args_sha256: str | None,
    state_json: bytes | None = None,
) -> bytes:
    """The claims JSON a minter emits: the bytes of ``dumps(build(...))``, the state written once.

    ``state`` is either a state already checked (:func:`~mrtr_state.token._json.check_state`),
    written here with the other claims in one pass of the encoder, or an
    :class:`EncodedState`, whose JSON is put in place of the closing brace of
    the other claims' compact JSON (``state`` is the last member, :func:`build`).
    ``state_json``, when given, is the state's JSON already written by
    :func:`~mrtr_state.token._json.encode_state`, put in place the same way.
    """
    encoded = state_json is not None or isinstance(state, EncodedState)
    claims = build(
        issuer=issuer,
        user=user,
        aud=aud,
        iat=iat,
        ttl=ttl,
        jti=jti,
        state=None if encoded else state,
        args_sha256=args_sha256,
    )
    if not encoded:
        return _json.dumps(claims)
    del claims["state"]
    written = state.json if state_json is None else state_json
    return b"".join((_json.dumps(claims)[:-1], b',"state":', written, b"}"))


#: Where the state's text starts in a payload :func:`encode` wrote: after the other claims.
_STATE_MEMBER: Final = b',"state":'
#: A state whose text is shorter than this is written again, unless reading proved the whole
#: payload as written: below it, writing costs no more than finding the text and proving it.
_SLICE_FROM: Final = 256
#: The types of the claims that may stand before ``state`` for its text to be found by a search.
_FLAT_CLAIMS: Final = frozenset({str, int})


def state_json(
    claims: dict[str, Any], payload: bytes, *, written: bool = False, numbers_as_written: bool = False
) -> bytes:
    """The compact JSON of ``claims["state"]`` (as ``_json.dumps`` writes it), from ``payload`` if there.

    ``payload`` is the JSON text ``claims`` were read from; ``written`` and
    ``numbers_as_written`` say what reading it proved
    (:func:`~mrtr_state.token._json.loads_written`: the whole text, or its
    number literals, byte for byte as writing ``claims`` gives them). When it
    is laid out as :func:`encode` writes it (the other claims, then
    ``,"state":``, the state's text and the closing brace), the state's text is
    sliced from it, and kept if the whole payload is as written (the encoder
    writes a member's value as it writes the value alone), or else if the slice
    is byte for byte what writing the state gives
    (:func:`~mrtr_state.token._json.is_written_as`); otherwise, and for a short
    state in a payload not proved as written, the state is written.

    The layout is confirmed, not assumed. ``state`` is the last member read and
    every other claim is a string or an integer, so before the state's member
    the text holds no array or object. There, a ``,"state":`` can only be a
    member named ``state`` (a quote after a comma opens a string, and a string
    holds no bare quote): the claim's own, if ``"state"`` occurs nowhere before
    it and no backslash does (an escaped spelling of the name). Any other
    spelling of the member leaves a ``"state"`` or a backslash before the first
    ``,"state":`` (which is then nested in the state), and the state is written.
    """
    state = claims["state"]
    at = payload.find(_STATE_MEMBER)
    if (
        at > 0
        and (written or len(payload) - at > _SLICE_FROM)
        and payload.find(b'"state"') == at + 1
        and payload.find(b"\\", 0, at) < 0
        and payload.endswith(b"}")
        and next(reversed(claims)) == "state"
        and {type(value) for name, value in claims.items() if name != "state"} <= _FLAT_CLAIMS
    ):
        text = payload[at + len(_STATE_MEMBER) : -1]
        if written or _json.is_written_as(text, state, numbers_as_written=numbers_as_written):
            return text
    return _json.dumps(state)


def is_numeric_date(value: object) -> TypeGuard[int]:
    """Whether a claim is a NumericDate of the profile (3.2): an integer, not a bool, in 0..2**53-1."""
    # bool is an int in Python; JSON true is not a NumericDate.
    return type(value) is int and 0 <= value <= _json.MAX_SAFE_INTEGER


def validate(
    claims: dict[str, Any],
    *,
    now: int,
    leeway: int,
    max_lifetime: int,
    issuer: str,
    binding: Binding,
    require_arguments: bool = False,
) -> dict[str, Any]:
    """Steps 12 to 19: return the validated claims or raise :class:`InvalidRequestState`."""
    check(claims, now=now, leeway=leeway, max_lifetime=max_lifetime)
    check_bindings(claims, issuer=issuer, binding=binding, require_arguments=require_arguments)
    return claims


def check(claims: dict[str, Any], *, now: int, leeway: int, max_lifetime: int) -> None:
    """Steps 12 to 15, which need no request: the claim set, its types, lifetime and time."""
    # Profile 5, step 12: the claim set is closed, complete and well typed.
    if not ALL_CLAIMS.issuperset(claims):
        raise InvalidRequestState("malformed", "the payload has a claim the profile does not define")
    # keys() >= set: one lookup per required claim, where issubset(dict) would copy the keys.
    if not claims.keys() >= REQUIRED_CLAIMS:
        raise InvalidRequestState("malformed", "the payload lacks a required claim")
    for name in _STRING_CLAIMS:
        value = claims[name]
        if type(value) is not str or not value:
            raise InvalidRequestState("malformed", f"claim {name!r} must be a non-empty string")
    iat, exp = claims["iat"], claims["exp"]
    if not (is_numeric_date(iat) and is_numeric_date(exp)):
        raise InvalidRequestState("malformed", "claims 'iat' and 'exp' must be integers in 0..2**53-1")
    if exp <= iat:
        raise InvalidRequestState("malformed", "claim 'exp' must be after 'iat'")
    jti = claims["jti"]
    if type(jti) is not str or not _JTI.fullmatch(jti):
        raise InvalidRequestState("malformed", "claim 'jti' must be 22 to 64 base64url characters")
    # "args_sha256": null is a malformed binding, not an absent one.
    digest = claims.get("args_sha256", _ABSENT)
    if digest is not _ABSENT and (type(digest) is not str or not _DIGEST.fullmatch(digest)):
        raise InvalidRequestState("malformed", "claim 'args_sha256' must be 43 base64url characters")
    # Profile 5, step 13: the lifetime is at most the verifier's maximum.
    if exp - iat > max_lifetime:
        raise InvalidRequestState("lifetime_too_long", f"the token's lifetime exceeds {max_lifetime} s")
    # Profile 5, step 14: not issued in the future.
    if iat > now + leeway:
        raise InvalidRequestState("issued_in_future", "claim 'iat' is in the future")
    # Profile 5, step 15: not expired (refused from the second exp itself, with leeway 0).
    if now >= exp + leeway:
        raise InvalidRequestState("expired", "claim 'exp' has passed")


def check_bindings(
    claims: dict[str, Any],
    *,
    issuer: str,
    binding: Binding,
    require_arguments: bool = False,
) -> None:
    """Steps 16 to 19: issuer, user, target and request binding, on claims :func:`check` passed.

    ``binding`` is the request being served. With ``require_arguments`` a token
    without ``args_sha256`` is refused (step 19). The argument digest is computed
    only for a token that carries one, and at most once per binding.
    """
    # Profile 5, step 16: the issuer is this verifier.
    if claims["iss"] != issuer:
        raise InvalidRequestState("wrong_issuer", "claim 'iss' is not this server")
    # Profile 5, step 17: the user is the one of the request being served.
    if claims["sub"] != binding.user:
        raise InvalidRequestState("wrong_user", "claim 'sub' is not the requesting user")
    # Profile 5, step 18: the target is the one of the request being served.
    if claims["aud"] != binding.aud:
        raise InvalidRequestState("wrong_tool", "claim 'aud' is not the requested target")
    # Profile 5, step 19: the request binding, required or present.
    digest = claims.get("args_sha256")
    if digest is None and require_arguments:
        raise InvalidRequestState("wrong_request", "the verifier requires claim 'args_sha256'; it is absent")
    if digest is not None:
        if binding.arguments is None:
            raise InvalidRequestState("wrong_request", "claim 'args_sha256' is present, arguments are not")
        # Unbindable arguments (not I-JSON, or an integer beyond 2**53 - 1) have no
        # digest, so they match none (profile, 3.4).
        actual = binding.digest_or_none
        if actual is None:
            raise InvalidRequestState("wrong_request", "the arguments are unbindable: they match no digest")
        if actual != digest:
            raise InvalidRequestState("wrong_request", "claim 'args_sha256' does not match the arguments")
