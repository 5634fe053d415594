"""Handler helpers: ask for input with :func:`input_required`, read the retry with :func:`read_retry`.

A handler never touches a token. It returns :func:`input_required` with its
``inputRequests`` and its state (a JSON object, readable by the client: never a
secret); :class:`~mrtr_state.mcp.StateBoundary` seals that state on the way out.
On the retry the boundary has verified the token before the handler runs, and
:func:`read_retry` hands the handler that verified state with the client's
``inputResponses``. It refuses to read a state the boundary did not verify for
this very request, so a server that forgot to install the boundary fails loudly
instead of trusting the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from mcp_types import ElicitResult, InputRequest, InputRequiredResult, InputResponse

from mrtr_state.token.claims import EncodedState

__all__ = ["Retry", "VerifiedRound", "input_required", "read_retry"]

_NOT_INSTALLED: Final = (
    "read_retry() found no StateBoundary on this request: install one with "
    "StateBoundary(sealer).install(server), or the requestState would be trusted unverified"
)


# Not frozen: a frozen dataclass sets each field through object.__setattr__, and the
# boundary makes one of these per request (twice per MCP round); only the boundary
# makes them, and nothing sets a field of one after (input_required only adds to
# its encoded list).
@dataclass(slots=True)
class VerifiedRound:
    """What the boundary verified for the request being served (set before the handler runs).

    ``request_state`` is the string the handler sees (``None`` on a first round)
    and ``claim`` the verified ``state`` claim it came from. ``encoded`` holds
    the states :func:`input_required` checked and wrote while the handler ran,
    each with its text, so the boundary seals them without checking and writing
    them again (the text is all it gets back; the same text is the same state).
    """

    request_state: str | None
    claim: Any = None
    encoded: list[tuple[str, EncodedState]] = field(default_factory=list, repr=False, compare=False)

    def encoded_as(self, text: str) -> EncodedState | None:
        """The state :func:`input_required` wrote as ``text`` in this round, or ``None``.

        Found by comparing texts, not by a dict: the text is usually the very
        string :func:`input_required` made (``==`` then answers without reading
        it), where a dict would hash all of it once (17k instructions near the
        size cap, docs/benchmarks.md).
        """
        for written, encoded in self.encoded:
            if written == text:
                return encoded
        return None


#: The round the boundary verified, for the request whose handler runs in this context.
CURRENT_ROUND: ContextVar[VerifiedRound | None] = ContextVar("mrtr_state.mcp.current_round", default=None)


class RetryParams(Protocol):
    """Anything carrying a round's input: an ``MCPServer`` ``Context`` or lowlevel request params."""

    @property
    def input_responses(self) -> Mapping[str, InputResponse] | None:
        """The client's answers to the previous round's ``inputRequests``."""
        ...

    @property
    def request_state(self) -> str | None:
        """The ``requestState`` of this round, as the boundary handed it to the handler."""
        ...


@dataclass(frozen=True)
class Retry:
    """One round of a request, as a handler reads it.

    ``state`` is the verified state the previous round sealed (``None`` on the
    first round); ``responses`` are the client's ``inputResponses``, keyed as the
    previous round's ``inputRequests`` were; on a first round there are none,
    whatever the client sent. The responses are the client's word for this round
    and are not sealed: read them only against what the verified state says was
    asked, and check them as any input. A key the
    handler needs may be missing; ask again rather than fail (the protocol's
    advice).
    """

    state: dict[str, Any] | None
    responses: Mapping[str, InputResponse] = field(default_factory=dict)

    def accepted(self, key: str) -> dict[str, Any] | None:
        """The form content of an accepted elicitation under ``key``, else ``None``."""
        response = self.responses.get(key)
        if isinstance(response, ElicitResult) and response.action == "accept":
            return dict(response.content or {})
        return None

    def declined(self, key: str) -> bool:
        """Whether the person declined or cancelled the elicitation under ``key``."""
        response = self.responses.get(key)
        return isinstance(response, ElicitResult) and response.action in ("decline", "cancel")


def input_required(
    requests: Mapping[str, InputRequest] | None = None, *, state: Mapping[str, Any] | None = None
) -> InputRequiredResult:
    """Build an ``input_required`` result: ``requests`` for the client, ``state`` for the retry.

    ``state`` is a JSON object the boundary seals as the token's ``state`` claim,
    bound to the user, the target and the arguments of the request being served.
    The client can read it: keep secrets out. At least one of the two is needed.

    Without ``state``, the state records what was asked: ``{"asked": [<the keys
    of requests>]}``. A retry's ``inputResponses`` reach the handler only with a
    verified state (profile, section 8.2: responses are answers only to a round a
    verified state says was asked), so every round that asks carries one.

    Raises:
        ValueError: neither is given, or the state is JSON the profile cannot
            carry exactly (a non-finite number, an integer beyond 2**53 - 1, ...).
        TypeError: the state is not a mapping of JSON values.
    """
    if not requests and state is None:
        raise ValueError("input_required() needs requests, a state, or both")
    text = None
    if state is None and requests:
        state = {"asked": sorted(requests)}
    if state is not None:
        if not isinstance(state, Mapping):
            raise TypeError(f"state must be a JSON object (a mapping), not {type(state).__name__}")
        encoded = EncodedState(dict(state))
        text = encoded.json.decode("utf-8")
        verified = CURRENT_ROUND.get()
        if verified is not None:  # the boundary seals this text without a second pass
            verified.encoded.append((text, encoded))
    return InputRequiredResult(input_requests=dict(requests) if requests else None, request_state=text)


def read_retry(params: RetryParams) -> Retry:
    """The verified round of the request being served: its state and the client's responses.

    ``params`` is the handler's ``Context`` (``MCPServer``) or its request params
    (lowlevel ``Server``).

    Raises:
        RuntimeError: no :class:`~mrtr_state.mcp.StateBoundary` verified this
            request, or ``params`` carries a ``requestState`` other than the one
            it verified.
        ValueError: the verified state is not a JSON object (it was not written
            by :func:`input_required`).
    """
    verified = CURRENT_ROUND.get()
    if verified is None:
        raise RuntimeError(_NOT_INSTALLED)
    if params.request_state != verified.request_state:
        raise RuntimeError("read_retry() was given a requestState other than the one StateBoundary verified")
    if verified.request_state is None:
        # A first round: responses without a verified state answer nothing this
        # server asked (profile, 8.2), so none are handed over.
        return Retry(state=None)
    responses = dict(params.input_responses or {})
    if not isinstance(verified.claim, dict):
        raise ValueError(
            "the verified requestState is not a JSON object; it was not written by input_required()"
        )
    return Retry(state=verified.claim, responses=responses)
