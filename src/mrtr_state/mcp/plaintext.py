"""The ``requestState`` a handler sees, and the ``state`` claim of the token.

Inside the server, ``requestState`` is what the SDK says it is: a string, the
handler's own. On the wire it is a token whose ``state`` claim is any JSON value.
:class:`~mrtr_state.mcp.StateBoundary` maps one to the other:

- minting: a handler string that is the JSON text of an object or array (which
  the profile can carry exactly) becomes that value in the claim, so a replica in
  another language reads structured state; any other string is carried verbatim
  as a JSON string;
- opening: a string claim is handed back verbatim; any other value as its
  compact JSON text.

So a string round-trips exactly unless it is object or array JSON, which
round-trips as equal JSON (member order kept, white space dropped).
"""

from __future__ import annotations

from typing import Any

from mrtr_state.token import _json
from mrtr_state.token.claims import EncodedState

__all__ = ["claim_of", "encoded_claim_of", "text_of"]

_STRUCTURED_START = ("{", "[")


def claim_of(text: str) -> Any:
    """The ``state`` claim for a handler's ``requestState`` string."""
    if not text.lstrip(" \t\r\n").startswith(_STRUCTURED_START):
        return text
    try:
        value = _json.loads(text.encode("utf-8"), max_depth=_json.MAX_TEXT_DEPTH)
        _json.check_state(value)
        _json.dumps(value)
    except (TypeError, ValueError):  # not JSON, or JSON the profile cannot carry exactly
        return text
    return value


def encoded_claim_of(text: str) -> EncodedState:
    """:func:`claim_of`, checked and written as the token's ``state`` claim in the same pass.

    The text is parsed at most once, and the value it gives is checked and
    serialized once; a sealer given the result does neither again.
    """
    if text.lstrip(" \t\r\n").startswith(_STRUCTURED_START):
        try:
            return EncodedState(_json.loads(text.encode("utf-8"), max_depth=_json.MAX_TEXT_DEPTH))
        except (TypeError, ValueError):  # not JSON, or JSON the profile cannot carry exactly
            pass
    return EncodedState(text)


def text_of(claim: Any, written: bytes | None = None) -> str:
    """The ``requestState`` string a handler sees for a verified ``state`` claim.

    ``written``, when given, is the claim's compact JSON already in hand
    (:meth:`~mrtr_state.StateSealer.open_bound_text_async`: byte for byte what
    writing it gives), used instead of writing the claim again.
    """
    if isinstance(claim, str):
        return claim
    return (_json.dumps(claim) if written is None else written).decode("utf-8")
