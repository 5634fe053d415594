"""Who is calling: bearer tokens mapped to users.

The example keeps a fixed token-to-user map so it runs anywhere. A real server
verifies tokens from its identity provider (introspection, or a JWT access token)
and reports the resource owner as ``AccessToken.subject``: that subject is the
user ``mrtr_state.mcp.StateBoundary`` binds every ``requestState`` to.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Final

from mcp.server.auth.provider import AccessToken

#: The example's users. The demo calls as alice and, to show a refusal, as bob.
EXAMPLE_TOKENS: Final[Mapping[str, str]] = {
    "alice-example-token": "alice",
    "bob-example-token": "bob",
}

#: The one scope every example user holds.
SCOPE: Final = "tools"


class StaticTokenVerifier:
    """A ``TokenVerifier`` over a fixed token-to-user map (for examples and tests only)."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        if not tokens:
            raise ValueError("give at least one token")
        self._tokens = dict(tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The user of ``token``, as an access token whose subject is that user; ``None`` if unknown."""
        presented = token.encode("utf-8", "surrogatepass")
        user = None
        for known, owner in self._tokens.items():
            # Compare against every entry, in constant time, so timing does not tell tokens apart.
            if hmac.compare_digest(known.encode("utf-8"), presented):
                user = owner
        if user is None:
            return None
        return AccessToken(token=token, client_id="example-client", scopes=[SCOPE], subject=user)
