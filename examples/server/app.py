"""The example MCP server: build it, or run it over Streamable HTTP on loopback.

``build_server`` makes an ``MCPServer`` with bearer-token users and two tools that
need a second round (``delete_branch``, ``book_trip``), whose ``requestState`` a
:class:`~mrtr_state.mcp.StateBoundary` carries as profile JWTs.
``build_conformance_server`` makes the server the MCP conformance suite runs
against. ``main`` is the command line (``python examples/server --help``).
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Final

import uvicorn
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl

from mrtr_state import Keyring, KeyringError, MemoryReplayStore, ReplayStore, StateSealer, audience
from mrtr_state.mcp import StateBoundary, ToolRefusal
from server.accounts import EXAMPLE_TOKENS, SCOPE, StaticTokenVerifier
from server.conformance import add_conformance_fixtures
from server.git_tools import GitHost, add_git_tools, example_host
from server.trips import Airline, add_trip_tools

#: The issuer (``iss``) the example seals with unless told otherwise.
DEFAULT_ISSUER: Final = "https://tools.example.com"
#: The one principal of the conformance server: the suite's harness sends no credentials.
CONFORMANCE_PRINCIPAL: Final = "conformance-harness"
#: How many seconds a state lives by default (the rule's ten minutes).
DEFAULT_TTL: Final = 600

logger = logging.getLogger("example-server")


def build_server(
    sealer: StateSealer,
    *,
    tokens: Mapping[str, str] = EXAMPLE_TOKENS,
    tool_refusal: ToolRefusal = "tool_error",
    host: GitHost | None = None,
    airline: Airline | None = None,
) -> MCPServer:
    """The example server: bearer-token users, ``delete_branch`` and ``book_trip``.

    The states of both tools are single use, so ``sealer`` needs a replay store:
    the round that acts (the confirmed delete, the seat that books) must happen
    once per state, or one state would delete or book once per presentation.
    """
    server = MCPServer(
        "mrtr-state-example",
        instructions="Delete branches (after the person confirms) and book trips.",
        token_verifier=StaticTokenVerifier(tokens),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl("https://auth.example.com"),
            resource_server_url=None,
            required_scopes=[SCOPE],
        ),
        log_level="WARNING",
    )
    StateBoundary(
        sealer,
        tool_refusal=tool_refusal,
        # The acting rounds: a confirmed delete, and book_trip's seat round, which
        # books. book_trip's dates round only asks; single use is per target, so
        # it is redeemed too, which costs one store write and nothing else.
        single_use={audience(tool="delete_branch"), audience(tool="book_trip")},
    ).install(server)
    add_git_tools(server, host if host is not None else example_host())
    add_trip_tools(server, airline if airline is not None else Airline())
    return server


def build_conformance_server(sealer: StateSealer) -> MCPServer:
    """The server the conformance suite's ``input-required-result-*`` scenarios run against.

    No authentication (the harness has no credentials), so every state is bound
    to the fixed principal :data:`CONFORMANCE_PRINCIPAL`, chosen here explicitly.
    Refusals are JSON-RPC errors, as the suite's tampered-state scenario expects.
    """
    server = MCPServer("mrtr-state-conformance", log_level="WARNING")
    StateBoundary(sealer, principal=CONFORMANCE_PRINCIPAL, tool_refusal="jsonrpc").install(server)
    add_conformance_fixtures(server)
    return server


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python examples/server",
        description="The mrtr-state example MCP server (Streamable HTTP). Keys come from MRTR_STATE_KEYS.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: 0, a free port)")
    parser.add_argument(
        "--issuer", default=DEFAULT_ISSUER, help=f"the iss of sealed states ({DEFAULT_ISSUER})"
    )
    parser.add_argument("--ttl", type=_positive, default=DEFAULT_TTL, help="seconds a state lives (600)")
    parser.add_argument(
        "--tool-refusal",
        choices=("tool_error", "jsonrpc"),
        default="tool_error",
        help="answer a refused state on tools/call as a tool error (default) or a JSON-RPC -32602 error",
    )
    parser.add_argument(
        "--redis-url",
        default=None,
        help="redeem single-use states in this Redis (shared by every replica, in any language) "
        "instead of in this process's memory",
    )
    parser.add_argument(
        "--dev-key",
        action="store_true",
        help="seal with a key generated at start-up, for development only (states die with the process)",
    )
    parser.add_argument(
        "--conformance",
        action="store_true",
        help="serve the MCP conformance suite's fixtures instead, without authentication",
    )
    return parser


def _keys(dev_key: bool) -> Keyring:
    if dev_key:
        print(
            "example server: WARNING: --dev-key: sealing with an EPHEMERAL key generated now. "
            "Every requestState dies with this process and no other replica can open it. "
            "Development only; set MRTR_STATE_KEYS for anything else.",
            file=sys.stderr,
            flush=True,
        )
        return Keyring.generate("EdDSA")
    return Keyring.from_env()


def _replay_store(redis_url: str | None) -> ReplayStore:
    if redis_url is None:
        return MemoryReplayStore()
    # Imported here: the Redis client is an optional extra, needed only with --redis-url.
    from mrtr_state.replay_redis import RedisReplayStore

    return RedisReplayStore.from_url(redis_url)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the example server until interrupted; print its URL first. Returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        ring = _keys(args.dev_key)
    except KeyringError as exc:
        print(f"example server: {exc}", file=sys.stderr)
        print("example server: or start it with --dev-key for an ephemeral development key", file=sys.stderr)
        return 2
    sealer = StateSealer(
        ring,
        issuer=args.issuer,
        ttl=args.ttl,
        max_lifetime=max(args.ttl, DEFAULT_TTL),
        replay_store=_replay_store(args.redis_url),
    )
    server = (
        build_conformance_server(sealer)
        if args.conformance
        else build_server(sealer, tool_refusal=args.tool_refusal)
    )
    app = server.streamable_http_app(stateless_http=True, host=args.host)
    # Bind and listen before printing the URL: a client that reads it can connect
    # at once (the connection waits in the backlog until uvicorn accepts it).
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        print(f"example server: cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    sock.listen(128)
    port = sock.getsockname()[1]
    shown_host = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    mode = "conformance fixtures" if args.conformance else "delete_branch, book_trip"
    print(
        f"example server: listening on http://{shown_host}:{port}/mcp ({mode}, ttl {args.ttl} s)", flush=True
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
    return 0
