"""How a refused ``requestState`` is answered on the wire.

Two shapes, both carrying the fixed, client-safe sentence of the reason
(``str(InvalidRequestState)``) and the profile's reason code:

- a tool error, for ``tools/call`` (the rule's check asks for one)::

    {"content": [{"type": "text", "text": "<sentence>"}], "isError": true,
     "_meta": {"io.github.mrtr-state/reason": "<code>"}}

- a JSON-RPC error, for ``prompts/get`` and ``resources/read`` always, and for
  ``tools/call`` when the boundary is configured so::

    {"code": -32602, "message": "<sentence>", "data": {"reason": "<code>"}}

The reason code sits in ``_meta`` rather than ``structuredContent`` because
``structuredContent`` is the tool's own data: it must match the tool's
``outputSchema``, which the boundary does not know, and it is meant for the
model, while the code is protocol metadata for the client application.
"""

from __future__ import annotations

from typing import Any, Final

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent

from mrtr_state.errors import InvalidRequestState

__all__ = ["REASON_META_KEY", "jsonrpc_error", "tool_error"]

#: The ``_meta`` key of a refused tool call that holds the reason code.
REASON_META_KEY: Final = "io.github.mrtr-state/reason"


def tool_error(refusal: InvalidRequestState) -> CallToolResult:
    """The ``tools/call`` result for a refused ``requestState``: a tool error."""
    meta: dict[str, Any] = {REASON_META_KEY: refusal.reason}
    return CallToolResult(content=[TextContent(text=str(refusal))], is_error=True, _meta=meta)


def jsonrpc_error(refusal: InvalidRequestState) -> MCPError:
    """The JSON-RPC error (``-32602``, invalid params) for a refused ``requestState``."""
    return MCPError(code=INVALID_PARAMS, message=str(refusal), data={"reason": refusal.reason})
