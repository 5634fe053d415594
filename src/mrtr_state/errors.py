"""Exceptions and the profile's reason codes.

Every refusal of a ``requestState`` is an :class:`InvalidRequestState` carrying one
reason code from ``spec/profile.md`` section 6. Callers switch on ``reason``, never
on the message. Configuration mistakes (a bad key, a bad option) are not refusals:
they raise :class:`KeyringError`, :class:`TypeError` or :class:`ValueError` at the
point where the mistake is made.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "REASONS",
    "InvalidRequestState",
    "KeyringError",
    "Reason",
]

#: A reason code of the profile (``spec/profile.md``, section 6), as a type: a
#: caller's type checker catches a misspelt code in ``refusal.reason == "expird"``.
Reason = Literal[
    "too_large",
    "malformed",
    "unsupported_header",
    "wrong_type",
    "unknown_key",
    "algorithm_mismatch",
    "bad_signature",
    "lifetime_too_long",
    "issued_in_future",
    "expired",
    "wrong_issuer",
    "wrong_user",
    "wrong_tool",
    "wrong_request",
    "replayed",
    "store_unavailable",
]

#: Every reason code of the profile, in the order of the validation procedure,
#: with the sentence a client may be shown. The messages name no claim value,
#: no key material and no part of the state.
REASONS: Final[dict[Reason, str]] = {
    "too_large": "The request state is larger than this server accepts.",
    "malformed": "The request state is not a well-formed token of this profile.",
    "unsupported_header": "The request state uses a header parameter or algorithm this profile forbids.",
    "wrong_type": "The request state is not a token of type mrtr-state+jwt.",
    "unknown_key": "The request state was signed with a key this server does not hold.",
    "algorithm_mismatch": "The request state's algorithm is not the algorithm of its key.",
    "bad_signature": "The request state's signature does not verify.",
    "lifetime_too_long": "The request state was issued with a lifetime longer than this server allows.",
    "issued_in_future": "The request state claims to be issued in the future.",
    "expired": "The request state has expired; start the request again.",
    "wrong_issuer": "The request state was issued by another server.",
    "wrong_user": "The request state belongs to another user.",
    "wrong_tool": "The request state was issued for another tool, prompt or resource.",
    "wrong_request": "The request state was issued for a request with other arguments.",
    "replayed": "The request state has already been used.",
    "store_unavailable": "The request state could not be checked for reuse; try again later.",
}


class InvalidRequestState(ValueError):  # noqa: N818  (the public name is fixed by the API)
    """A ``requestState`` token was refused.

    ``reason`` is one of the codes in :data:`REASONS` (``spec/profile.md``, section 6),
    typed :data:`Reason`.
    ``str(error)`` is the fixed sentence for that code and is safe to show to the
    client: it never holds key material, claim values or the state. ``detail`` is a
    short, equally safe note for the server's log saying which rule failed (for
    example ``"claim 'exp' must be an integer"``); it is not part of the profile.
    """

    __slots__ = ("detail", "reason")

    reason: Reason
    detail: str

    def __init__(self, reason: Reason, detail: str = "") -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown reason code {reason!r}")
        super().__init__(REASONS[reason])
        self.reason = reason
        self.detail = detail

    def __repr__(self) -> str:
        return f"InvalidRequestState(reason={self.reason!r}, detail={self.detail!r})"

    def __reduce__(self) -> tuple[type[InvalidRequestState], tuple[Reason, str]]:
        # Pickling (multiprocessing, logging handlers) must rebuild from the code.
        return (type(self), (self.reason, self.detail))


class KeyringError(ValueError):
    """A key or key ring cannot be used: bad JWK, short secret, no signing key, ...

    Raised when keys are loaded or a ring is built, never while opening a token. The
    message explains what is wrong and how to fix it, and never contains key material.
    """
