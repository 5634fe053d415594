"""The boundary: seal every outgoing ``requestState``, verify every incoming one.

:class:`StateBoundary` is server middleware (the SDK's ``ServerMiddleware``) for
``tools/call``, ``prompts/get`` and ``resources/read``, the only methods that may
answer ``input_required``. It takes the place of the SDK's own
``RequestStateBoundary`` (AES-GCM under an SDK-private envelope) so that the state
on the wire is a token of the profile that any implementation of it verifies.

Inbound, a ``requestState`` is opened with the request's user, target and
arguments before any handler runs; the handler sees the verified state, never
the token. A refusal is answered without calling the handler (see
:mod:`mrtr_state.mcp.refusal`) and logged at WARNING with its reason code and
detail, never the token. Outbound, the ``requestState`` string of an
``input_required`` result is sealed into a token bound to the same three.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any, Final, Literal, TypeAlias, cast

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary as SdkRequestStateBoundary
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    SERVER_INFO_META_KEY,
    Implementation,
    InputRequiredResult,
)
from mcp_types.methods import is_input_required, serialize_server_result
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mrtr_state.binding.binding import Binding
from mrtr_state.binding.target import parse_audience
from mrtr_state.errors import InvalidRequestState
from mrtr_state.mcp.plaintext import encoded_claim_of, text_of
from mrtr_state.mcp.principal import Principal, authenticated_subject
from mrtr_state.mcp.refusal import jsonrpc_error, tool_error
from mrtr_state.mcp.request import TARGET_METHODS, target_parts
from mrtr_state.mcp.rounds import CURRENT_ROUND, VerifiedRound
from mrtr_state.sealer import StateSealer

__all__ = ["StateBoundary", "ToolRefusal"]

logger = logging.getLogger(__name__)

#: How a refused ``requestState`` on ``tools/call`` is answered: a tool error
#: (``isError: true``, the default, as the rule's check asks) or a JSON-RPC
#: ``-32602`` error. ``prompts/get`` and ``resources/read`` always get the latter.
ToolRefusal: TypeAlias = Literal["tool_error", "jsonrpc"]

_NO_PRINCIPAL_LOG: Final = (
    "no authenticated principal to bind requestState to on %s: use bearer authentication whose "
    "token verifier sets AccessToken.subject, or give StateBoundary(principal=...)"
)
_NO_PRINCIPAL_WIRE: Final = "The server cannot bind request state to a user: no authenticated principal."
_BAD_ARGUMENTS_WIRE: Final = (
    "The request's arguments cannot be bound to a request state (they must be I-JSON): {problem}."
)
#: The params member a client answers a round's inputRequests with.
_INPUT_RESPONSES: Final = "inputResponses"
_BAD_RESPONSE_WIRE: Final = (
    "Invalid params: inputResponses[{name}] is not a result of the input request it answers "
    "(an object such as an ElicitResult)."
)


def _first_bad_response(responses: object) -> str | None:
    """The first ``inputResponses`` entry that is not an object, as a quoted key for a message.

    Such an entry is no result of any input request. The key is cut short; the value is never shown.
    """
    if not isinstance(responses, dict):
        return None
    for key, value in responses.items():
        if not isinstance(value, dict):
            name = str(key)
            return json.dumps(name if len(name) <= 64 else name[:64] + "...", ensure_ascii=False)
    return None


def _check_single_use(single_use: object) -> bool | frozenset[str]:
    if isinstance(single_use, bool):
        return single_use
    if isinstance(single_use, str) or not isinstance(single_use, Collection):
        raise TypeError("single_use must be a bool or a collection of aud values such as 'tools/call:delete'")
    targets = frozenset(cast("Collection[object]", single_use))
    for aud in targets:
        if parse_audience(aud) is None:
            raise ValueError(
                f"single_use entries are aud values such as audience(tool='delete_branch') "
                f"('tools/call:delete_branch'), not {aud!r}"
            )
    return cast("frozenset[str]", targets)


def _server_info(server: MCPServer[Any] | Server[Any]) -> dict[str, Any]:
    if isinstance(server, Server):
        return server.server_info_stamp
    info = Implementation(
        name=server.name,
        version=server.version,
        title=server.title,
        description=server.description,
        website_url=server.website_url,
        icons=server.icons,
    )
    return info.model_dump(by_alias=True, mode="json", exclude_none=True)


class StateBoundary:
    """Server middleware that carries ``requestState`` as tokens of the profile.

    Args:
        sealer: seals and opens the tokens (its issuer, keys, lifetime and replay store).
        principal: who the state belongs to; by default the ``subject`` of the
            request's bearer token (:func:`~mrtr_state.mcp.authenticated_subject`).
            A string binds every request to that one user, a deliberate choice for
            servers without authentication. With no principal the boundary
            refuses to seal or open (an internal error, logged at ERROR).
        tool_refusal: ``"tool_error"`` (default) or ``"jsonrpc"``: how a refused
            state on ``tools/call`` is answered.
        single_use: ``True`` to redeem every state once, or the ``aud`` values
            (``audience(tool="delete_branch")``) whose states are single use. Needs
            a sealer made with a ``replay_store``; a second presentation is
            refused as ``replayed``. Give the round that acts (books, pays,
            deletes) single use; rounds that only ask may be (profile, 9.5).
        require_arguments: require the argument binding on ``tools/call`` and
            ``prompts/get`` (default ``True``; profile, section 5, step 19): a
            state without ``args_sha256`` is refused as ``wrong_request``. Every
            state this boundary seals carries the binding; turn this off only
            while tokens minted by a server that does not bind are still live.

    Arguments that cannot be bound (an integer beyond 2**53 - 1, however it is
    written, or anything that is not I-JSON; profile, 3.4) are answered with a
    JSON-RPC ``-32602`` error that says why, instead of a state. ``inputResponses``
    on a first round (no ``requestState``) answer nothing this server asked, so
    they are not handed to the handler (profile, 8.2).

    Install it with :meth:`install` on an ``MCPServer`` or a lowlevel ``Server``;
    one boundary serves one server.
    """

    def __init__(
        self,
        sealer: StateSealer,
        *,
        principal: Principal = authenticated_subject,
        tool_refusal: ToolRefusal = "tool_error",
        single_use: bool | Collection[str] = False,
        require_arguments: bool = True,
    ) -> None:
        if not isinstance(sealer, StateSealer):
            raise TypeError(f"sealer must be a StateSealer, not {type(sealer).__name__}")
        if isinstance(principal, str):
            if not principal:
                raise ValueError("a fixed principal must not be empty")
        elif not callable(principal):
            raise TypeError("principal must be a string or a function of the request context")
        if tool_refusal not in ("tool_error", "jsonrpc"):
            raise ValueError(f"tool_refusal must be 'tool_error' or 'jsonrpc', not {tool_refusal!r}")
        if not isinstance(require_arguments, bool):
            raise TypeError(f"require_arguments must be a bool, not {type(require_arguments).__name__}")
        self._require_arguments = require_arguments
        self._single_use = _check_single_use(single_use)
        if self._single_use and sealer.replay_store is None:
            raise ValueError(
                "single_use needs a StateSealer made with a replay_store, e.g. "
                "StateSealer(ring, issuer=..., replay_store=MemoryReplayStore())"
            )
        self._sealer = sealer
        self._principal = principal
        self._tool_refusal = tool_refusal
        self._server_info: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return (
            f"StateBoundary(sealer={self._sealer!r}, tool_refusal={self._tool_refusal!r}, "
            f"single_use={self._single_use!r}, require_arguments={self._require_arguments!r})"
        )

    def install(self, server: MCPServer[Any] | Server[Any]) -> StateBoundary:
        """Put this boundary in ``server``'s middleware chain and return it.

        It takes the place of the SDK's ``RequestStateBoundary`` (which
        ``MCPServer`` installs by default), keeping its position: inside the
        SDK's OpenTelemetry middleware, outside user middleware. A lowlevel
        ``Server`` without one gets the boundary appended.

        Raises:
            RuntimeError: this boundary is already installed on a server.
            ValueError: ``server`` already has a :class:`StateBoundary`, or more
                than one SDK ``RequestStateBoundary``.
        """
        if self._server_info is not None:
            raise RuntimeError("this StateBoundary is already installed; make one per server")
        chain = server.middleware
        if any(isinstance(middleware, StateBoundary) for middleware in chain):
            raise ValueError("the server already has a StateBoundary")
        sdk = [i for i, middleware in enumerate(chain) if isinstance(middleware, SdkRequestStateBoundary)]
        if len(sdk) > 1:
            raise ValueError("the server has more than one RequestStateBoundary; remove the extra ones")
        if sdk:
            chain[sdk[0]] = self
        else:
            chain.append(self)
        self._server_info = _server_info(server)
        return self

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Verify the request's ``requestState``, run the handler, seal the one it returns."""
        if ctx.method not in TARGET_METHODS or ctx.request_id is None:
            return await call_next(ctx)
        params = ctx.params or {}
        wire = params.get("requestState")
        binding: Binding | None = None
        if wire is None:  # absent, or an explicit null: a first round
            verified = VerifiedRound(None)
            if params.get(_INPUT_RESPONSES) is not None:
                # Answers with no verified state answer nothing this server asked
                # (profile, 8.2): the handler never sees them.
                logger.info(
                    "inputResponses without a requestState on %s were dropped: they answer no round "
                    "a verified state records (a round that asks seals a state: input_required)",
                    ctx.method,
                )
                ctx = replace(ctx, params={k: v for k, v in params.items() if k != _INPUT_RESPONSES})
        else:
            binding = self._binding(ctx)
            try:
                # open_bound_text_async awaits an async replay store (Redis) and calls a
                # synchronous one directly; verification is the same as open's. It also
                # gives the state's JSON text, as the verified payload holds it.
                claim, written = await self._sealer.open_bound_text_async(
                    wire,
                    binding,
                    consume=self._is_single_use(binding),
                    require_arguments=self._require_arguments,
                )
            except InvalidRequestState as refusal:
                logger.warning(
                    "requestState refused on %s: %s (%s)", ctx.method, refusal.reason, refusal.detail
                )
                return self._refuse(ctx, refusal)
            bad = _first_bad_response(params.get(_INPUT_RESPONSES))
            if bad is not None:
                # Answers to a verified round that are no results ("yes" where an
                # ElicitResult belongs): -32602 naming the entry, as the npm, Go and
                # Java boundaries answer it; the SDK would answer without a name.
                logger.warning("an inputResponses entry on %s is not a result", ctx.method)
                raise MCPError(code=INVALID_PARAMS, message=_BAD_RESPONSE_WIRE.format(name=bad))
            verified = VerifiedRound(text_of(claim, written), claim)
            ctx = replace(ctx, params={**params, "requestState": verified.request_state})
        round_token = CURRENT_ROUND.set(verified)
        try:
            result = await call_next(ctx)
        finally:
            CURRENT_ROUND.reset(round_token)
        return self._seal_result(ctx, result, binding, verified)

    def _is_single_use(self, binding: Binding) -> bool:
        single_use = self._single_use
        return single_use if isinstance(single_use, bool) else binding.aud in single_use

    def _binding(self, ctx: ServerRequestContext[Any, Any]) -> Binding:
        """What this request is: its target and arguments, then its user (made once per request)."""
        try:
            kind, name, arguments = target_parts(ctx.method, ctx.params)
        except ValueError as exc:  # the message names the field, never a value
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
        return Binding(self._user(ctx), kind, name, arguments)

    def _user(self, ctx: ServerRequestContext[Any, Any]) -> str:
        principal: str | Callable[[ServerRequestContext[Any, Any]], str | None] = self._principal
        if isinstance(principal, str):
            return principal
        try:
            user = principal(ctx)
        except Exception:  # a failing principal function must fail closed
            logger.exception("the principal function raised on %s", ctx.method)
            raise MCPError(code=INTERNAL_ERROR, message="Internal error") from None
        if isinstance(user, str) and user:
            return user
        logger.error(_NO_PRINCIPAL_LOG, ctx.method)
        raise MCPError(code=INTERNAL_ERROR, message=_NO_PRINCIPAL_WIRE)

    def _refuse(self, ctx: ServerRequestContext[Any, Any], refusal: InvalidRequestState) -> dict[str, Any]:
        if ctx.method != "tools/call" or self._tool_refusal == "jsonrpc":
            raise jsonrpc_error(refusal)
        # The handler does not run, so this result is not shaped by the SDK's
        # runner: give it the same envelope (the version's schema, resultType and
        # the serverInfo stamp on 2026-era connections).
        wire = tool_error(refusal).model_dump(by_alias=True, mode="json", exclude_none=True)
        version = ctx.protocol_version
        if version in KNOWN_PROTOCOL_VERSIONS:
            wire = serialize_server_result(ctx.method, version, wire)
        if version in MODERN_PROTOCOL_VERSIONS:
            wire.setdefault("resultType", "complete")
            if self._server_info is not None:
                wire["_meta"] = {
                    **wire.get("_meta", {}),
                    SERVER_INFO_META_KEY: copy.deepcopy(self._server_info),
                }
        return wire

    def _seal_result(
        self,
        ctx: ServerRequestContext[Any, Any],
        result: HandlerResult,
        binding: Binding | None,
        verified: VerifiedRound,
    ) -> HandlerResult:
        if not is_input_required(result):
            return result
        state = (
            result.request_state if isinstance(result, InputRequiredResult) else result.get("requestState")
        )
        if state is None:
            return result
        if not isinstance(state, str):
            logger.error("an input_required result on %s has a requestState that is not a string", ctx.method)
            raise MCPError(code=INTERNAL_ERROR, message="Internal error")
        if binding is None:  # a first round: the request is bound only now that a state is sealed
            binding = self._binding(ctx)
        try:
            # A state input_required wrote in this round is checked and encoded
            # already; any other text is parsed, checked and written once here.
            encoded = verified.encoded_as(state) or encoded_claim_of(state)
            token = self._sealer.seal_encoded(encoded, binding)
        except (TypeError, ValueError) as exc:
            # Only now find out whose fault it is: the client's arguments (no digest
            # exists for them, recorded in the binding), or the server's (too large,
            # a ring that cannot sign).
            problem = binding.problem
            if problem is not None:
                logger.warning("arguments on %s cannot be bound to requestState: %s", ctx.method, problem)
                raise MCPError(
                    code=INVALID_PARAMS, message=_BAD_ARGUMENTS_WIRE.format(problem=problem)
                ) from None
            logger.error("cannot seal requestState on %s: %s", ctx.method, exc)
            raise MCPError(code=INTERNAL_ERROR, message="Internal error") from None
        if isinstance(result, InputRequiredResult):
            return result.model_copy(update={"request_state": token})
        return {**result, "requestState": token}
