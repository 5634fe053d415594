"""What a whole MCP multi round-trip costs: the SDK's own requestState protection against StateBoundary.

Run it from the repository root (``scripts/bootstrap`` installs everything it needs):

    .venv/bin/python benchmarks/bench_mcp_round.py            # about a minute
    .venv/bin/python benchmarks/bench_mcp_round.py --quick    # a rough look

One round, as a client lives it: ``tools/call`` of ``deploy`` is answered
``input_required`` (a confirmation request and a ``requestState`` holding the
state), and the client retries with the ``requestState`` and its answer; the tool
reads the verified state and returns its result. Both servers are the official MCP
Python SDK's ``MCPServer`` with the same tool, run in process through the SDK's own
``Client`` (memory streams, no network), as the user ``alice`` that the SDK's
bearer middleware would put in the auth context:

- "MCP SDK protection": the SDK's ``RequestStateBoundary`` with its built-in
  AES-256-GCM codec (``RequestStateSecurity(keys=[...])``): the handler returns the
  state as a JSON string and reads it back with ``json.loads``;
- "StateBoundary HS256": ``mrtr_state.mcp.StateBoundary`` with an HS256 key: the
  handler returns ``input_required(..., state=...)`` and reads ``read_retry(ctx)``;
  the token binds the user, the tool and the argument digest;
- "StateBoundary A256GCM": the same with an A256GCM key, the profile's encrypted
  form (section 3.6), which uses the SDK's own cipher: the like-for-like row.

Both tools are coroutines, so the SDK runs them on the event loop: a plain function
would run in a worker thread, whose instructions ``bench_counted_round.py`` would not
count (callgrind collects in the thread that entered the counted loop), and the SDK's
``json.dumps`` and ``json.loads`` of the state, which its protection needs and
``StateBoundary`` does not, would be left out of the count.

Both bind the user, the tool and the arguments and expire after 600 s. The three
state sizes are those of ``bench_open_seal.py``; every candidate of every size runs
in the same interleaved rounds (``benchmarks/_harness.py``), so the ratio of a size
is the median of same-round ratios. Nothing in the test suite asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from _harness import (
    Candidate,
    add_run_options,
    by_label,
    describe_machine,
    finish,
    make_state,
    measure_async,
    median,
    method_line,
    print_table,
    ratio,
)
from mcp.client import Client
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    InputRequiredResult,
)

from mrtr_state import Key, Keyring, StateSealer
from mrtr_state.mcp import StateBoundary, input_required, read_retry

ISSUER = "https://tools.example.com"
USER = "alice"
TOOL = "deploy"
ARGUMENTS = {"env": "prod", "branch": "release-1.2"}
TTL = 600
SIZES = {"small": 200, "medium": 2048, "near the cap": 5779}
LIBRARIES = ("mrtr-state", "mcp", "cryptography", "pyjwt")
SDK = "MCP SDK protection (AES-GCM)"
MRTR = "StateBoundary (HS256, argument digest)"
ENC = "StateBoundary (A256GCM, argument digest)"

QUESTION = ElicitRequest(
    params=ElicitRequestFormParams(
        message="Deploy release-1.2 to prod?",
        requested_schema={
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Deploy"}},
            "required": ["confirm"],
        },
    )
)
YES = {"confirm": ElicitResult(action="accept", content={"confirm": True})}

# The SDK logs every refusal; none is expected, and a log line would disturb the timing.
logging.getLogger("mcp").setLevel(logging.CRITICAL)


def sdk_server(state: dict[str, Any], secret: bytes) -> MCPServer:
    """The tool behind the SDK's own protection: the state travels as a JSON string."""
    security = RequestStateSecurity(keys=[secret], ttl=TTL, audience=ISSUER)
    server = MCPServer("bench-sdk", request_state_security=security, log_level="WARNING")

    @server.tool(name=TOOL)
    async def deploy(env: str, branch: str, ctx: Context) -> str | InputRequiredResult:
        if ctx.request_state is None:
            text = json.dumps(state, separators=(",", ":"), ensure_ascii=False)
            return InputRequiredResult(input_requests={"confirm": QUESTION}, request_state=text)
        seen = json.loads(ctx.request_state)
        return f"deployed {branch} to {env} after step {seen['step']}"

    return server


def mrtr_server(
    state: dict[str, Any],
    secret: bytes,
    ring: Keyring | None = None,
    entropy: Callable[[int], bytes] = os.urandom,
) -> MCPServer:
    """The same tool behind StateBoundary: the state is a profile token bound to user, tool, arguments.

    The token is HS256 under ``secret``, or made with ``ring`` when given (the encrypted
    form: ``Keyring.generate("A256GCM")``); ``entropy`` makes the ``jti``
    (``bench_counted_round.py`` gives a fixed one, so that its count does not vary with it).
    """
    sealer = StateSealer(ring or Keyring([Key.from_secret(secret)]), issuer=ISSUER, ttl=TTL, entropy=entropy)
    server = MCPServer("bench-mrtr", log_level="WARNING")
    StateBoundary(sealer).install(server)

    @server.tool(name=TOOL)
    async def deploy(env: str, branch: str, ctx: Context) -> str | InputRequiredResult:
        retry = read_retry(ctx)
        if retry.state is None:
            return input_required({"confirm": QUESTION}, state=state)
        return f"deployed {branch} to {env} after step {retry.state['step']}"

    return server


async def never_asked(context: Any, params: ElicitRequestParams) -> ElicitResult:
    """Declares the elicitation capability; manual rounds never call it."""
    raise AssertionError(f"unexpected elicitation: {params}")


def whole_round(client: Client) -> Callable[[], Awaitable[int]]:
    """The first call, answered input_required, then the retry; returns the requestState's length."""

    async def run() -> int:
        asked = await client.session.call_tool(TOOL, ARGUMENTS, allow_input_required=True)
        if not isinstance(asked, InputRequiredResult) or asked.request_state is None:
            raise SystemExit(f"bench: the first call was not answered input_required: {asked!r}")
        done = await client.session.call_tool(
            TOOL,
            ARGUMENTS,
            allow_input_required=True,
            request_state=asked.request_state,
            input_responses=YES,
        )
        if not isinstance(done, CallToolResult) or done.is_error:
            raise SystemExit(f"bench: the retry failed: {done!r}")
        return len(asked.request_state)

    return run


@contextlib.asynccontextmanager
async def as_user(user: str) -> AsyncIterator[None]:
    """Requests as ``user``, as the SDK's bearer middleware would have authenticated them."""
    value = AuthenticatedUser(AccessToken(token=f"{user}-token", client_id="bench", scopes=[], subject=user))
    reset = auth_context_var.set(value)
    try:
        yield
    finally:
        auth_context_var.reset(reset)


async def run(
    rounds: int, batch_s: float, seed: int, clock: str
) -> list[tuple[str, Candidate, Candidate, Candidate]]:
    secret = os.urandom(32)
    pairs: list[tuple[str, Candidate, Candidate, Candidate]] = []
    async with contextlib.AsyncExitStack() as stack:
        for name, size in SIZES.items():
            state = make_state(size)
            sdk = await stack.enter_async_context(
                Client(sdk_server(state, secret), elicitation_callback=never_asked)
            )
            mrtr = await stack.enter_async_context(
                Client(mrtr_server(state, secret), elicitation_callback=never_asked)
            )
            encrypted = await stack.enter_async_context(
                Client(
                    mrtr_server(state, secret, Keyring.generate("A256GCM")), elicitation_callback=never_asked
                )
            )
            mrtr_c = Candidate(f"{MRTR}, {name}", whole_round(mrtr))
            sdk_c = Candidate(f"{SDK}, {name}", whole_round(sdk), ref=mrtr_c.label)
            enc_c = Candidate(f"{ENC}, {name}", whole_round(encrypted), ref=mrtr_c.label)
            pairs.append((f"{name} ({size} B)", sdk_c, mrtr_c, enc_c))
        await stack.enter_async_context(as_user(USER))
        candidates = [c for _, *row in pairs for c in row]
        for c in candidates:
            c.token = await c.fn()  # a round that fails stops the run before any timing
        await measure_async(candidates, rounds=rounds, batch_s=batch_s, seed=seed, clock=clock)
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_options(parser, rounds=60, rounds_help="rounds", batch_ms=20.0, quick_rounds=10)
    args = parser.parse_args(argv)
    rounds = 10 if args.quick else args.rounds
    started = time.time()
    print("mrtr-state benchmark: a whole MCP round (input_required, then the retry), in process")
    machine = describe_machine(LIBRARIES)
    for line in machine:
        print(line)
    print(method_line(rounds, args.batch_ms, args.clock) + "; every size in the same rounds")
    pairs = anyio.run(run, rounds, args.batch_ms / 1000, args.seed, args.clock)
    print_table(
        "== one whole round: first call answered input_required, then the retry",
        [c for _, *row in pairs for c in row],
    )
    print("\n== target: a whole round with StateBoundary no slower than with the SDK's own protection")
    report: dict[str, Any] = {"machine": machine, "rounds": rounds, "clock": args.clock, "sizes": {}}
    met_all = True
    for name, sdk_c, mrtr_c, enc_c in pairs:
        value, like_for_like = ratio(mrtr_c, sdk_c), ratio(enc_c, sdk_c)
        met = value <= 1.0
        met_all &= met
        print(
            f"  {name:<24} {'met' if met else 'NOT MET'} {value:.2f}x (StateBoundary HS256 / SDK); "
            f"A256GCM / SDK {like_for_like:.2f}x"
        )
        rows = by_label([sdk_c, mrtr_c, enc_c])
        report["sizes"][name] = {
            label: {"us": round(median(c.samples) * 1e6, 1)} for label, c in rows.items()
        }
        report["sizes"][name]["ratio"] = round(value, 3)
        report["sizes"][name]["ratio_a256gcm"] = round(like_for_like, 3)
    finish(report, started=started, met_all=met_all, json_path=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
