"""Who a ``requestState`` belongs to: the principal the profile writes into ``sub``.

The rule binds the state to the user. By default that user is the ``subject`` of
the access token the SDK's bearer authentication put in the request's auth
context (``mcp.server.auth.middleware.auth_context.get_access_token``), the
resource owner the token verifier reported. When no principal is available, the
boundary refuses to seal or open rather than bind nothing: a server without
authentication gives a principal explicitly, as a string (every request is that
one user: a deliberate choice, e.g. a single-user stdio server) or as a function
of the request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import ServerRequestContext

__all__ = ["Principal", "authenticated_subject"]

#: How a :class:`~mrtr_state.mcp.StateBoundary` learns the user: a fixed string,
#: or a function of the request returning the user, or ``None`` when there is none.
Principal: TypeAlias = str | Callable[[ServerRequestContext[Any, Any]], str | None]


def authenticated_subject(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The ``subject`` of the request's bearer token, or ``None`` without one.

    This is the default principal. A token verifier must set
    ``AccessToken.subject`` (RFC 9068 ``sub``) for it to bind anything; a token
    without a subject gives ``None``, so the boundary refuses rather than fall
    back to the OAuth client, which several users may share. If the server trusts
    more than one issuer, give a principal that qualifies the subject by issuer.
    """
    token = get_access_token()
    if token is None or not token.subject:
        return None
    return token.subject
