"""The example MCP server: build it, or run it over Streamable HTTP on loopback.

``build_server`` makes an ``MCPServer`` with bearer-token users and two tools that
need a second round (``delete_branch``, ``book_trip``), whose ``requestState`` a
:class:`~mrtr_state.mcp.StateBoundary` carries as profile JWTs.
``build_conformance_server`` makes the server the MCP conformance suite runs
against. ``main`` is the command line (``python examples/server --help``).
"""

from __future__ import annotations

import argparse
import getpass
import logging
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import uvicorn
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl

from mrtr_state import Keyring, KeyringError, MemoryReplayStore, StateSealer, audience
from mrtr_state.keys.key_source import KeySource
from mrtr_state.keys.reloading import DEFAULT_KEYS_FILE_VARIABLE, ReloadingKeyring
from mrtr_state.keys.remote_jwks import RemoteJWKS
from mrtr_state.mcp import Principal, StateBoundary, ToolRefusal, authenticated_subject
from server.accounts import EXAMPLE_TOKENS, SCOPE, StaticTokenVerifier
from server.asking import add_asking_prompt_and_resource
from server.conformance import add_conformance_fixtures
from server.git_tools import GitHost, add_git_tools, example_host
from server.jwks import JWKS_PATH, publish_jwks
from server.trips import Airline, add_trip_tools

if TYPE_CHECKING:
    from mrtr_state.replay.replay_redis import AsyncRedisReplayStore

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
    principal: Principal = authenticated_subject,
) -> MCPServer:
    """The example server: bearer-token users, ``delete_branch`` and ``book_trip``, and the prompt
    ``review_branch`` and the resource template ``trips://fares/{destination}``, which ask once too.

    ``principal`` names whose states they are: the bearer token's user by default; a fixed user
    (a string) for the one person a stdio server serves.

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
        principal=principal,
        tool_refusal=tool_refusal,
        # The acting rounds: a confirmed delete, and book_trip's seat round, which
        # books. book_trip's dates round only asks; single use is per target, so
        # it is redeemed too, which costs one store write and nothing else.
        single_use={audience(tool="delete_branch"), audience(tool="book_trip")},
    ).install(server)
    add_git_tools(server, host if host is not None else example_host())
    add_trip_tools(server, airline if airline is not None else Airline())
    add_asking_prompt_and_resource(server)
    publish_jwks(server, sealer.ring)
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
        description=(
            "The mrtr-state example MCP server (Streamable HTTP). Keys come from the file named by "
            f"{DEFAULT_KEYS_FILE_VARIABLE} (reread when it changes), else from MRTR_STATE_KEYS. "
            f"Its Ed25519 public keys are published at {JWKS_PATH}."
        ),
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
        "--dev-key",
        action="store_true",
        help="seal with a key generated at start-up, for development only (states die with the process)",
    )
    parser.add_argument(
        "--dev-key-alg",
        choices=("EdDSA", "HS256", "A256GCM"),
        default="EdDSA",
        help="the algorithm of the --dev-key: EdDSA (default) or HS256 sign the state, which the client "
        "can read; A256GCM encrypts it (the profile's encrypted form)",
    )
    parser.add_argument(
        "--jwks-url",
        metavar="URL",
        help="a verify-only replica: open states with the public JWKS at URL (another server's "
        f"{JWKS_PATH}); it cannot seal, so it serves the retries that complete a request",
    )
    parser.add_argument(
        "--jwks-refresh",
        type=_positive,
        default=300,
        metavar="SECONDS",
        help="with --jwks-url: fetch the JWKS this often (300); a new kid fetches at once, at most every "
        "min(30, SECONDS) seconds",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("MRTR_STATE_REDIS_URL"),
        help="redeem single-use states in this Redis (shared by every replica, in any language; default: "
        "$MRTR_STATE_REDIS_URL, else in this process's memory). Put a URL holding a password "
        "in the environment, not on the command line",
    )
    parser.add_argument(
        "--load-branches",
        type=_positive,
        default=None,
        metavar="N",
        help="also serve a repository acme/load with N branches load-0 ... (for load tests)",
    )
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="serve the same tools over stdio (JSON-RPC lines on standard input and output) for one user, "
        "--stdio-user, instead of Streamable HTTP",
    )
    parser.add_argument(
        "--stdio-user",
        default=None,
        metavar="USER",
        help="with --stdio: the one user every state is bound to (default: the login name)",
    )
    parser.add_argument(
        "--conformance",
        action="store_true",
        help="serve the MCP conformance suite's fixtures instead, without authentication",
    )
    return parser


def _keys(args: argparse.Namespace) -> KeySource:
    if args.jwks_url:
        return RemoteJWKS.load(args.jwks_url, refresh_interval=args.jwks_refresh)
    if args.dev_key:
        print(
            "example server: WARNING: --dev-key: sealing with an EPHEMERAL key generated now. "
            "Every requestState dies with this process and no other replica can open it. "
            "Development only; set MRTR_STATE_KEYS for anything else.",
            file=sys.stderr,
            flush=True,
        )
        return Keyring.generate(args.dev_key_alg)
    if os.environ.get(DEFAULT_KEYS_FILE_VARIABLE, "").strip():
        ring = ReloadingKeyring.from_env()
        ring.reload_on_signal()  # kill -HUP rereads the file at once
        return ring
    return Keyring.from_env()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the example server until interrupted; print its URL first. Returns the exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        ring = _keys(args)
    except KeyringError as exc:
        print(f"example server: {exc}", file=sys.stderr)
        if not args.jwks_url:
            print("example server: or start it with --dev-key for an ephemeral key", file=sys.stderr)
        return 2
    store: MemoryReplayStore | AsyncRedisReplayStore
    if args.redis_url:
        from mrtr_state.replay.replay_redis import AsyncRedisReplayStore

        try:
            store = AsyncRedisReplayStore.from_url(args.redis_url)
        except ValueError as exc:
            print(f"example server: --redis-url: {exc}", file=sys.stderr)
            return 2
    else:
        store = MemoryReplayStore()
    sealer = StateSealer(
        ring, issuer=args.issuer, ttl=args.ttl, max_lifetime=max(args.ttl, DEFAULT_TTL), replay_store=store
    )
    host = example_host()
    if args.load_branches:
        host = example_host(load_branches=args.load_branches)
    if args.stdio:
        # One person's server: every state is bound to that user, chosen here (no bearer token on stdio).
        user = args.stdio_user or getpass.getuser()
        print(
            f"example server: serving stdio (delete_branch, book_trip, ttl {args.ttl} s) for {user}",
            file=sys.stderr,
            flush=True,
        )
        build_server(sealer, tool_refusal=args.tool_refusal, host=host, principal=user).run("stdio")
        return 0
    server = (
        build_conformance_server(sealer)
        if args.conformance
        else build_server(sealer, tool_refusal=args.tool_refusal, host=host)
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
    if ring.keys[0].alg == "A256GCM":
        mode += ", encrypted states"
    if args.jwks_url:
        mode += f"; verify-only, keys from {args.jwks_url}"
    print(
        f"example server: listening on http://{shown_host}:{port}/mcp ({mode}, ttl {args.ttl} s)", flush=True
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
    return 0
