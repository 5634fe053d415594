"""Publish the server's Ed25519 public keys, so that verify-only replicas can follow its rotations.

``GET /.well-known/mrtr-state-jwks.json`` answers the public JWKS of the keys the
server holds right now (profile, section 7.5: ``kty``, ``crv``, ``x``, ``kid``,
``alg``, ``use``; never ``d``). A ring that reloads (``MRTR_STATE_KEYS_FILE``) is
published as it is after each reload. HS256 secrets are never published: a ring
without an Ed25519 key answers 404, and says why.

A replica started with ``--jwks-url http(s)://.../.well-known/mrtr-state-jwks.json``
reads it through :class:`mrtr_state.keys.remote_jwks.RemoteJWKS`.
"""

from __future__ import annotations

from typing import Final

from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mrtr_state.keys.key_source import KeySource

#: Where the example server publishes its public JWKS.
JWKS_PATH: Final = "/.well-known/mrtr-state-jwks.json"
#: How long a client may cache the answer, in seconds (a replica fetches on its own schedule).
MAX_AGE: Final = 60


def public_jwks(source: KeySource) -> dict[str, list[dict[str, str]]]:
    """The public JWKS of the Ed25519 keys ``source`` holds now (signing key first)."""
    return {"keys": [key.public_jwk() for key in source.keys if key.alg == "EdDSA"]}


def publish_jwks(server: MCPServer, source: KeySource) -> None:
    """Serve :func:`public_jwks` of ``source`` at :data:`JWKS_PATH` (no authentication: it is public)."""

    @server.custom_route(JWKS_PATH, methods=["GET"], include_in_schema=False)
    async def jwks(request: Request) -> Response:
        document = public_jwks(source)
        if not document["keys"]:
            return JSONResponse(
                {"error": "this server signs with HS256 secrets, which are never published"}, status_code=404
            )
        return JSONResponse(
            document,
            media_type="application/jwk-set+json",
            headers={"Cache-Control": f"public, max-age={MAX_AGE}"},
        )
