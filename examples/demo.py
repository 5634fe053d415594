"""The mrtr-state demo: a real MCP server and the SDK's client, one round trip, then every refusal.

Run it with ``scripts/demo`` (which sets everything up). It starts the example
server (``examples/server``) on a free loopback port with an ephemeral
development key and a 3-second lifetime for states, talks to it over Streamable
HTTP with the official MCP Python SDK as two bearer-token users, alice and bob,
prints what was sent and what came back, and stops the server. It exits 0 when
every step behaved as the rule asks, 1 when one did not, 2 when the server could
not be started.

It runs twice by default (``--form both``): first with a signing key, where the
client can read the state but not change it, then with an A256GCM key, where the
state is the profile's encrypted form and the client cannot read it either; every
refusal happens the same way in both passes. ``--form signed`` or ``--form
encrypted`` runs one pass.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult

from mrtr_state import InvalidRequestState, decode_unverified
from mrtr_state.mcp import REASON_META_KEY

EXAMPLES = Path(__file__).resolve().parent
sys.path.insert(0, str(EXAMPLES))
from server.accounts import EXAMPLE_TOKENS  # noqa: E402  (the example's users, after the path is set)
from server.launch import RunningServer, ServerStartError, running_server  # noqa: E402

TTL = 3
#: The rule this demo checks, named wherever it reports.
RULE = "rule AGT-18"
TOKEN_OF = {user: token for token, user in EXAMPLE_TOKENS.items()}
YES = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
WIDTH = 100


def say(text: str = "", indent: int = 0) -> None:
    prefix = " " * indent
    for line in text.splitlines() or [""]:
        print(
            textwrap.fill(line, WIDTH, initial_indent=prefix, subsequent_indent=prefix + "   ")
            if line
            else ""
        )


def short(token: str) -> str:
    return f"{token[:28]}...{token[-10:]} ({len(token)} characters)"


def arguments_text(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, separators=(", ", ": "))


def describe(result: Any) -> str:
    """What came back, in one line."""
    if isinstance(result, MCPError):
        return f"JSON-RPC error {result.code}: {result.message!r} data={json.dumps(result.data)}"
    if isinstance(result, InputRequiredResult):
        asked = ", ".join(
            f"{key}: {getattr(request.params, 'message', request.method)!r}"
            for key, request in (result.input_requests or {}).items()
        )
        return f"input_required, asking {asked}"
    text = " ".join(getattr(block, "text", "") for block in result.content)
    if result.is_error:
        reason = (result.meta or {}).get(REASON_META_KEY)
        return f"tool error (isError: true): {text!r}, _meta reason {reason!r}"
    return f"result: {text!r}"


@contextlib.asynccontextmanager
async def as_user(url: str, user: str, **options: Any) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP with ``user``'s bearer token."""
    options.setdefault("elicitation_callback", answer_nothing)
    headers = {"Authorization": f"Bearer {TOKEN_OF[user]}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), **options) as client,
    ):
        yield client


async def answer_nothing(context: Any, params: Any) -> ElicitResult:
    raise AssertionError("the manual rounds answer by hand")


class Demo:
    def __init__(self, url: str) -> None:
        self.url = url
        self.failures: list[str] = []
        self.checks: list[str] = []

    def check(self, label: str, ok: bool, why: str = "") -> None:
        self.checks.append(label)
        say(f"{'ok' if ok else 'NOT OK'}: {label}{'' if ok else ' (' + why + ')'}", 3)
        if not ok:
            self.failures.append(label)

    async def call(
        self,
        user: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        state: str | None = None,
        responses: Any = None,
    ) -> Any:
        sent = f"-> {user}: tools/call {tool} {arguments_text(arguments)}"
        if responses:
            answers = (f"{key}: {r.action} {json.dumps(r.content)}" for key, r in responses.items())
            sent += " inputResponses {" + ", ".join(answers) + "}"
        if state is not None:
            sent += f" requestState {short(state)}"
        say(sent, 3)
        async with as_user(self.url, user) as client:
            result: Any
            try:
                result = await client.session.call_tool(
                    tool, arguments, allow_input_required=True, request_state=state, input_responses=responses
                )
            except MCPError as error:
                result = error
        say(f"<- {describe(result)}", 3)
        return result

    async def ask(self, user: str, tool: str, arguments: dict[str, Any]) -> str:
        asked = await self.call(user, tool, arguments)
        if not isinstance(asked, InputRequiredResult) or asked.request_state is None:
            raise RuntimeError(f"{tool} did not ask for input: {describe(asked)}")
        return asked.request_state

    async def refused(
        self, label: str, reason: str, user: str, tool: str, arguments: dict[str, Any], state: str
    ) -> None:
        result = await self.call(user, tool, arguments, state=state, responses=YES)
        got = (result.meta or {}).get(REASON_META_KEY) if isinstance(result, CallToolResult) else None
        ok = isinstance(result, CallToolResult) and result.is_error and got == reason
        self.check(f"{label}: refused as a tool error, reason {reason}", ok, f"got {describe(result)}")


def one_byte_changed(token: str) -> tuple[str, str]:
    """Change one character in the middle of the claims: the payload, or the ciphertext when encrypted."""
    segments = token.split(".")
    n = 3 if len(segments) == 5 else 1
    body = segments[n]
    i = len(body) // 2
    new = "A" if body[i] != "A" else "B"
    segments[n] = f"{body[:i]}{new}{body[i + 1 :]}"
    position = sum(len(segment) + 1 for segment in segments[:n]) + i
    return ".".join(segments), f"character {position} of {len(token)}: {body[i]!r} -> {new!r}"


def show_signed(state: str) -> None:
    header, claims = decode_unverified(state)
    say("The requestState is a JWT of the profile: the client can read it, never change it.", 3)
    say(f"header {json.dumps(header)}", 6)
    say(f"claims {json.dumps(claims)}", 6)


def show_encrypted(demo: Demo, state: str, arguments: dict[str, Any]) -> None:
    header_segment, _, iv, ciphertext, tag = state.split(".")
    header = json.loads(base64.urlsafe_b64decode(header_segment + "=" * (-len(header_segment) % 4)))
    say(
        "The requestState is the profile's encrypted form (a JWE): "
        "the client can neither read nor change it.",
        3,
    )
    say(f"header     {json.dumps(header)}", 6)
    say(f"ciphertext {ciphertext[:40]}... ({len(ciphertext)} characters), IV {iv}, tag {tag}", 6)
    try:
        decode_unverified(state)
        readable = True
    except InvalidRequestState:
        readable = False
    visible = [
        text
        for text in ("alice", "tools/call:delete_branch", *arguments.values())
        if text in state or text.encode() in _decoded(state)
    ]
    demo.check(
        "the client cannot read the state: no claim, user, tool or argument is visible in it",
        not readable and not visible,
        f"readable as a JWT: {readable}; visible: {visible}",
    )


def _decoded(token: str) -> bytes:
    return b"".join(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)) for s in token.split(".") if s)


async def run(demo: Demo, encrypted: bool = False) -> None:
    release = {"repo": "acme/api", "branch": "release-1.0"}

    say("1. A complete round trip: alice deletes branch old-feature of acme/api, confirming it.")
    old_feature = {"repo": "acme/api", "branch": "old-feature"}
    state = await demo.ask("alice", "delete_branch", old_feature)
    if encrypted:
        show_encrypted(demo, state, old_feature)
    else:
        show_signed(state)
    done = await demo.call("alice", "delete_branch", old_feature, state=state, responses=YES)
    demo.check(
        "the confirmed delete completed",
        isinstance(done, CallToolResult)
        and not done.is_error
        and "Deleted branch 'old-feature'" in describe(done),
        describe(done),
    )

    say()
    say("2. The SDK's own driver: bob books a trip, a form in two rounds (dates, then a seat).")
    questions: list[str] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        questions.append(params.message)
        reply: dict[str, str | int | float | bool | list[str] | None]
        if "When do you want to fly" in params.message:
            reply = {"depart": "2026-12-12", "return": "2026-12-19"}
        else:
            reply = {"seat": "1A"}
        say(f"the person is asked {params.message!r} and answers {json.dumps(reply)}", 3)
        return ElicitResult(action="accept", content=reply)

    say('-> bob: client.call_tool("book_trip", {"destination": "Reykjavik"})', 3)
    async with as_user(demo.url, "bob", elicitation_callback=person) as client:
        booked = await client.call_tool("book_trip", {"destination": "Reykjavik"})
    say(f"<- {describe(booked)}", 3)
    demo.check("the two-round form completed", not booked.is_error and len(questions) == 2, describe(booked))

    say()
    say("Now each refusal the rule asks for. Each starts from a fresh state alice gets for release-1.0.")
    say()
    if encrypted:
        say(
            "3. The requestState with one byte of its ciphertext changed: AES-GCM's authentication tag no "
            "longer verifies (the profile reports that as bad_signature in both forms)."
        )
    else:
        say("3. The requestState with one byte of its claims changed: the signature no longer verifies.")
    state = await demo.ask("alice", "delete_branch", release)
    tampered, change = one_byte_changed(state)
    say(f"(changed {change})", 3)
    await demo.refused("one byte changed", "bad_signature", "alice", "delete_branch", release, tampered)

    say()
    say("4. The same state presented by another user: bob.")
    state = await demo.ask("alice", "delete_branch", release)
    await demo.refused("another user", "wrong_user", "bob", "delete_branch", release, state)

    say()
    say("5. The same state presented to another tool: book_trip.")
    state = await demo.ask("alice", "delete_branch", release)
    await demo.refused("another tool", "wrong_tool", "alice", "book_trip", {"destination": "Lisbon"}, state)

    say()
    say("6. The same state with other arguments: alice's yes for release-1.0 cannot delete main.")
    state = await demo.ask("alice", "delete_branch", release)
    main = {"repo": "acme/api", "branch": "main"}
    await demo.refused("other arguments", "wrong_request", "alice", "delete_branch", main, state)

    say()
    say("7. A confirmed state presented again: delete_branch states are single use.")
    spike = {"repo": "acme/api", "branch": "spike/cache"}
    state = await demo.ask("alice", "delete_branch", spike)
    first = await demo.call("alice", "delete_branch", spike, state=state, responses=YES)
    demo.check("the first use deleted the branch", "Deleted branch" in describe(first), describe(first))
    await demo.refused("replayed", "replayed", "alice", "delete_branch", spike, state)

    say()
    say(f"8. The state presented after it expired (states live {TTL} s on this server; the rule says 600).")
    state = await demo.ask("alice", "delete_branch", release)
    # An encrypted state hides exp too; it was minted before now, so it has expired by now + TTL.
    wait = TTL + 0.5 if encrypted else decode_unverified(state)[1]["exp"] - time.time() + 0.5
    say(f"(waiting {wait:.1f} s)", 3)
    await anyio.sleep(max(wait, 0))
    await demo.refused("expired", "expired", "alice", "delete_branch", release, state)


def report(server: RunningServer, *, encrypted: bool = False) -> int:
    say(f"listening on {server.url}", 3)
    say()
    demo = Demo(server.url)
    try:
        anyio.run(run, demo, encrypted)
    except Exception as exc:  # a step that broke off is a failure of the demo, reported as one
        demo.failures.append(f"the demo broke off: {type(exc).__name__}: {exc}")
    say()
    log = server.log_path.read_text().splitlines()
    say("The server warned at start-up:")
    for line in log:
        if "EPHEMERAL" in line:
            say(line, 3)
    say("and logged each refusal with its reason code and detail, never the token:")
    for line in log:
        if "requestState refused" in line:
            say(line, 3)
    say()
    if demo.failures:
        say(f"{len(demo.failures)} step(s) did not behave as {RULE} asks: {'; '.join(demo.failures)}")
        return 1
    form = "encrypted" if encrypted else "signed"
    say(f"All {len(demo.checks)} checks of this pass behaved as {RULE} asks ({form} states):")
    for label in demo.checks:
        say(f"- {label}", 3)
    say("Stopping the server.")
    return 0


PASSES = {
    "signed": ("EdDSA", "A. Signed states (EdDSA): the client can read the state, never change it."),
    "encrypted": (
        "A256GCM",
        "B. Encrypted states (A256GCM): the same server with an encryption key; the client can neither "
        "read nor change the state, and every refusal happens as before.",
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The mrtr-state demo against the example MCP server.")
    parser.add_argument(
        "--form",
        choices=("both", "signed", "encrypted"),
        default="both",
        help="run the signed pass, the encrypted pass, or both (the default)",
    )
    forms = ["signed", "encrypted"] if (form := parser.parse_args(argv).form) == "both" else [form]
    say("mrtr-state demo: an MCP server that seals requestState as a token of the profile, bound to the")
    say("user, the tool and the arguments, and the MCP Python SDK's client talking to it over HTTP.")
    say(
        "It checks rule AGT-18 (Agent Wranglers playbook): sign the state with a server key, bind it to the "
        "user and the tool, let it expire after 10 minutes, and refuse with a tool error a state with one "
        "byte changed, one presented by another user, and one presented after it expired."
    )
    statuses = []
    for name in forms:
        alg, title = PASSES[name]
        say()
        say(title)
        say()
        say(f"Starting the example server: python examples/server --dev-key --dev-key-alg {alg} --ttl {TTL}")
        try:
            with running_server("--dev-key", "--dev-key-alg", alg, "--ttl", str(TTL)) as server:
                statuses.append(report(server, encrypted=name == "encrypted"))
        except ServerStartError as exc:
            say(f"could not start the example server: {exc}")
            return 2
    if len(forms) > 1:
        say()
        failed = [name for name, status in zip(forms, statuses, strict=True) if status != 0]
        say(
            f"Passes that did not behave as {RULE} asks: {', '.join(failed)}."
            if failed
            else f"Both passes behaved as {RULE} asks (the encrypted pass has one check more: that the "
            "client cannot read the state)."
        )
    return max(statuses)


if __name__ == "__main__":
    sys.exit(main())
