"""MCP integration: ``requestState`` as profile JWTs in servers built on the official SDK.

Needs the ``mcp`` extra (the MCP Python SDK, ``mcp>=2.3``, which speaks the
2026-07-28 revision with multi round-trip requests): ``pip install './[mcp]'``
from a clone, ``pip install 'mrtr-state[mcp]'`` once the package is published.

:class:`StateBoundary` is server middleware that takes the place of the SDK's own
``RequestStateBoundary``: every ``requestState`` a handler puts in an
``input_required`` result leaves the server as a token of the profile, bound to
the authenticated user, the target (tool, prompt or resource) and the request's
arguments; every ``requestState`` that comes back is verified before any handler
runs, and a refusal is answered as a tool error (``tools/call``) or a JSON-RPC
``-32602`` error. Handlers build results with :func:`input_required` and read the
verified retry with :func:`read_retry`. See ``docs/mcp.md``.

    >>> from mrtr_state import Keyring, StateSealer
    >>> from mrtr_state.mcp import StateBoundary
    >>> sealer = StateSealer(Keyring.from_env(), issuer="https://git.example.com")  # doctest: +SKIP
    >>> StateBoundary(sealer).install(server)  # an MCPServer or a lowlevel Server  # doctest: +SKIP

Implements rule AGT-18 of the Agent Wranglers agents-as-users playbook
(https://agentwranglers.se/playbook/agents-as-users/mcp-servers/signed-request-state,
CC BY 4.0).
"""

from __future__ import annotations

_INSTALL_HINT = (
    "the mcp extra: pip install './[mcp]' from a clone (pip install 'mrtr-state[mcp]' once published)"
)

try:
    import mcp_types
    from mcp.server import request_state as _sdk_request_state
except ImportError as exc:  # the optional extra is not installed
    raise ImportError(
        "mrtr_state.mcp needs the official MCP Python SDK (mcp>=2.3); install it with "
        f"{_INSTALL_HINT}. The core (import mrtr_state) works without it."
    ) from exc

if not hasattr(mcp_types, "InputRequiredResult") or not hasattr(_sdk_request_state, "RequestStateBoundary"):
    raise ImportError(
        "mrtr_state.mcp needs mcp>=2.3 (multi round-trip requests, protocol 2026-07-28); "
        f"upgrade with {_INSTALL_HINT.replace('install', 'install --upgrade')}"
    )

from mrtr_state.mcp.boundary import StateBoundary, ToolRefusal  # noqa: E402
from mrtr_state.mcp.principal import Principal, authenticated_subject  # noqa: E402
from mrtr_state.mcp.refusal import REASON_META_KEY, jsonrpc_error, tool_error  # noqa: E402
from mrtr_state.mcp.rounds import Retry, input_required, read_retry  # noqa: E402

__all__ = [
    "REASON_META_KEY",
    "Principal",
    "Retry",
    "StateBoundary",
    "ToolRefusal",
    "authenticated_subject",
    "input_required",
    "jsonrpc_error",
    "read_retry",
    "tool_error",
]
