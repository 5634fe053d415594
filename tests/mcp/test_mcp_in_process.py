"""The example server in process, through the SDK's own client: every rule of the boundary.

The clock is injected, so "ten minutes later" takes no time; the user is the one
the SDK's bearer middleware would have put in the auth context.
"""

from __future__ import annotations

import logging
from datetime import date
from typing import Any

import anyio
import jwt
import pytest
from mcp.client import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from server.app import build_server

from conftest import (
    BROKEN_RETRIES,
    OLD_FEATURE,
    YES,
    Clock,
    as_user,
    never_asked,
    refusal_reason,
    retry_broken,
)
from mrtr_state import Keyring, MemoryReplayStore, StateSealer, decode_unverified
from mrtr_state.mcp import StateBoundary, input_required, read_retry
from mrtr_state.token import _json

ISSUER = "https://tools.example.com"


def make_server(clock: Clock, **options: Any) -> tuple[Any, StateSealer]:
    sealer = StateSealer(
        Keyring.generate("EdDSA"), issuer=ISSUER, clock=clock, replay_store=MemoryReplayStore(clock=clock)
    )
    return build_server(sealer, **options), sealer


async def first_round(client: Client, tool: str, arguments: dict[str, Any]) -> InputRequiredResult:
    result = await client.session.call_tool(tool, arguments, allow_input_required=True)
    assert isinstance(result, InputRequiredResult), result
    assert result.request_state is not None
    return result


async def retry(client: Client, tool: str, arguments: dict[str, Any], state: str, responses: Any) -> Any:
    return await client.session.call_tool(
        tool, arguments, allow_input_required=True, request_state=state, input_responses=responses
    )


def run(scenario: Any) -> None:
    anyio.run(scenario)


def test_a_confirmed_delete_branch_completes_the_round_trip() -> None:
    server, _ = make_server(Clock())

    async def scenario() -> None:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
                assert asked.input_requests is not None
                assert "confirm" in asked.input_requests
                done = await retry(client, "delete_branch", OLD_FEATURE, asked.request_state or "", YES)
        assert isinstance(done, CallToolResult)
        assert not done.is_error
        assert "Deleted branch 'old-feature'" in done.content[0].text  # type: ignore[union-attr]

    run(scenario)


def test_the_state_on_the_wire_is_a_profile_jwt_any_verifier_checks() -> None:
    ring = Keyring.generate("EdDSA")
    sealer = StateSealer(ring, issuer=ISSUER, replay_store=MemoryReplayStore())
    server = build_server(sealer)

    async def scenario() -> str:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
        return asked.request_state or ""

    token = anyio.run(scenario)
    header, claims = decode_unverified(token)
    assert header["typ"] == "mrtr-state+jwt"
    assert header["alg"] == "EdDSA"
    assert claims["sub"] == "alice"
    assert claims["aud"] == "tools/call:delete_branch"
    assert claims["state"] == {"head": "4b1d0aa"}
    # A replica that is not this library: plain PyJWT with the public JWK verifies it.
    public = jwt.PyJWK(ring.public_jwks()["keys"][0]).key
    verified = jwt.decode(
        token, public, algorithms=["EdDSA"], audience="tools/call:delete_branch", issuer=ISSUER
    )
    assert verified["sub"] == "alice"
    # A verify-only replica of this library opens it with the public JWKS alone.
    replica = StateSealer(Keyring.from_jwks(ring.public_jwks()), issuer=ISSUER)
    assert replica.open(token, user="alice", tool="delete_branch", arguments=OLD_FEATURE) == {
        "head": "4b1d0aa"
    }


def test_the_book_trip_form_asks_for_dates_then_a_seat_through_the_sdk_driver() -> None:
    server, _ = make_server(Clock())
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        if "When do you want to fly" in params.message:
            return ElicitResult(action="accept", content={"depart": "2026-12-10", "return": "2026-12-17"})
        return ElicitResult(action="accept", content={"seat": "2C"})

    async def scenario() -> CallToolResult:
        async with Client(server, elicitation_callback=answer) as client:
            with as_user("alice"):
                return await client.call_tool("book_trip", {"destination": "Lisbon"})

    result = anyio.run(scenario)
    assert not result.is_error, result
    assert "Booked for alice: Lisbon" in result.content[0].text  # type: ignore[union-attr]
    assert "seat 2C" in result.content[0].text  # type: ignore[union-attr]
    assert len(asked) == 2
    assert "Which seat?" in asked[1]


@pytest.mark.parametrize(("rule", "reason"), BROKEN_RETRIES)
def test_a_state_is_refused_as_a_tool_error(rule: str, reason: str) -> None:
    clock = Clock()
    server, _ = make_server(clock)

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
            return await retry_broken(client, clock, rule, asked.request_state or "")

    assert refusal_reason(anyio.run(scenario)) == reason


def test_the_refusal_text_is_the_fixed_sentence_of_its_reason() -> None:
    server, _ = make_server(Clock())

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
            with as_user("bob"):
                return await retry(client, "delete_branch", OLD_FEATURE, asked.request_state or "", YES)

    result = anyio.run(scenario)
    assert result.content[0].text == "The request state belongs to another user."
    assert result.structured_content is None


def test_a_refused_state_never_reaches_the_tool_and_deletes_nothing() -> None:
    server, _ = make_server(Clock())

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
            with as_user("bob"):
                await retry(client, "delete_branch", OLD_FEATURE, asked.request_state or "", YES)
            with as_user("alice"):  # the branch is still there: alice can still be asked about it
                return await first_round(client, "delete_branch", OLD_FEATURE)

    assert "old-feature" in anyio.run(scenario).input_requests["confirm"].params.message  # type: ignore[index,union-attr]


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ("one byte changed", "bad_signature"),
        ("presented by another user", "wrong_user"),
        ("retried with other arguments", "wrong_request"),
        ("presented after ten minutes", "expired"),
    ],
)
def test_in_jsonrpc_mode_a_state_is_refused_with_invalid_params(rule: str, reason: str) -> None:
    clock = Clock()
    server, _ = make_server(clock, tool_refusal="jsonrpc")

    async def scenario() -> MCPError:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
            with pytest.raises(MCPError) as refused:
                await retry_broken(client, clock, rule, asked.request_state or "")
            return refused.value

    error = anyio.run(scenario)
    assert error.code == INVALID_PARAMS
    assert error.data == {"reason": reason}


def test_a_retry_without_the_requested_answer_is_asked_again() -> None:
    server, _ = make_server(Clock())

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
                return await retry(client, "delete_branch", OLD_FEATURE, asked.request_state or "", {})

    again = anyio.run(scenario)
    assert isinstance(again, InputRequiredResult)
    assert again.input_requests is not None
    assert "confirm" in again.input_requests


def test_a_book_trip_retry_without_dates_is_asked_again_for_dates() -> None:
    server, _ = make_server(Clock())

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "book_trip", {"destination": "Kyoto"})
                return await retry(
                    client, "book_trip", {"destination": "Kyoto"}, asked.request_state or "", {}
                )

    again = anyio.run(scenario)
    assert isinstance(again, InputRequiredResult)
    assert again.input_requests is not None
    assert list(again.input_requests) == ["dates"]


def test_a_yes_without_a_sealed_state_is_not_a_yes() -> None:
    server, _ = make_server(Clock())

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                return await client.session.call_tool(
                    "delete_branch", OLD_FEATURE, allow_input_required=True, input_responses=YES
                )

    assert isinstance(anyio.run(scenario), InputRequiredResult)


def test_without_an_authenticated_user_nothing_is_sealed() -> None:
    server, _ = make_server(Clock())

    async def scenario() -> MCPError:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user(None), pytest.raises(MCPError) as failed:
                await client.session.call_tool("delete_branch", OLD_FEATURE, allow_input_required=True)
            return failed.value

    error = anyio.run(scenario)
    assert error.code == -32603
    assert "no authenticated principal" in error.message


def test_a_refusal_is_logged_with_its_reason_and_never_the_token(caplog: pytest.LogCaptureFixture) -> None:
    server, _ = make_server(Clock())

    async def scenario() -> str:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
            with as_user("bob"):
                await retry(client, "delete_branch", OLD_FEATURE, asked.request_state or "", YES)
        return asked.request_state or ""

    with caplog.at_level(logging.WARNING, logger="mrtr_state.mcp"):
        token = anyio.run(scenario)
    refusals = [r for r in caplog.records if r.name.startswith("mrtr_state.mcp")]
    assert [r.levelno for r in refusals] == [logging.WARNING]
    assert "wrong_user" in refusals[0].getMessage()
    for part in token.split("."):
        assert part not in caplog.text


def test_the_seat_round_state_of_book_trip_books_once_when_presented_twice() -> None:
    from server.trips import Airline

    airline = Airline()
    server, _ = make_server(Clock(), airline=airline)
    destination = {"destination": "Lisbon"}
    dates = {"dates": ElicitResult(action="accept", content={"depart": "2026-03-03", "return": "2026-03-10"})}

    async def scenario() -> list[Any]:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "book_trip", destination)
                seat_round = await retry(client, "book_trip", destination, asked.request_state or "", dates)
                assert isinstance(seat_round, InputRequiredResult)
                state = seat_round.request_state or ""
                return [
                    await retry(
                        client,
                        "book_trip",
                        destination,
                        state,
                        {"seat": ElicitResult(action="accept", content={"seat": seat})},
                    )
                    for seat in ("1A", "1C", "1A")
                ]

    booked, again, same_again = anyio.run(scenario)
    assert "Booked" in booked.content[0].text
    assert refusal_reason(again) == "replayed"
    assert refusal_reason(same_again) == "replayed"
    flight = Airline.flight("Lisbon", date(2026, 3, 3))
    assert airline.free_seats(flight) == ["1C", "2A", "2C", "3A", "3C"]


def test_a_round_that_asks_checks_and_writes_its_state_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from mrtr_state.token import _json

    server, _ = make_server(Clock())
    calls = {"check_state": 0, "encode_state": 0, "dumps": 0, "loads": 0}

    def counted(name: str) -> Any:
        original = getattr(_json, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return original(*args, **kwargs)

        return wrapper

    async def scenario() -> None:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                for name in calls:
                    monkeypatch.setattr(_json, name, counted(name))
                asked = await first_round(client, "delete_branch", OLD_FEATURE)
                monkeypatch.undo()
        assert decode_unverified(asked.request_state)[1]["state"]

    run(scenario)
    # input_required checks and writes the state once (encode_state: the C encoder
    # writes it, check_state walks a state this small); the boundary parses nothing
    # and seal writes only the claims around the state (one dumps).
    assert calls == {"check_state": 1, "encode_state": 1, "dumps": 1, "loads": 0}


def deploy_server(state: dict[str, Any]) -> Any:
    """An MCPServer whose one tool asks with ``state`` and, on the retry, reads it back."""
    question = ElicitRequest(
        params=ElicitRequestFormParams(
            message="Deploy?",
            requested_schema={"type": "object", "properties": {"confirm": {"type": "boolean"}}},
        )
    )
    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER)
    server = MCPServer("deploy", log_level="WARNING")
    StateBoundary(sealer).install(server)

    @server.tool(name="deploy")
    def deploy(env: str, ctx: Context) -> str | InputRequiredResult:
        verified = read_retry(ctx)
        if verified.state is None:
            return input_required({"confirm": question}, state=state)
        assert verified.state == state
        assert ctx.request_state is not None
        assert ctx.request_state.encode("utf-8") == _json.dumps(state)
        return f"deployed to {env}"

    return server


@pytest.mark.parametrize(("note", "ratio"), [("n" * 600, 5), ("n" * 600, 0.5), ("short", 5), ("short", 0.5)])
def test_a_retry_reads_its_state_once_and_never_writes_it_again(
    monkeypatch: pytest.MonkeyPatch, note: str, ratio: float
) -> None:
    # The twin of the test above for the retry: the boundary reads the payload once
    # (the strict reader, _json.loads_written), and the handler's requestState is the
    # state's text as the verified payload holds it. Reading vouches for a payload this
    # library wrote, a float in it and a short state included, so the boundary never
    # writes the state again. A state written back to text, or read twice, fails this.
    state = {"step": 2, "plan": {"env": "prod", "replicas": 3, "ratio": ratio}, "note": note}
    server = deploy_server(state)
    calls: dict[str, list[Any]] = {
        "check_state": [],
        "encode_state": [],
        "dumps": [],
        "loads": [],
        "loads_written": [],
        "is_written_as": [],
    }

    def recorded(name: str) -> Any:
        original = getattr(_json, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name].append(args[0])
            return original(*args, **kwargs)

        return wrapper

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            with as_user("alice"):
                asked = await first_round(client, "deploy", {"env": "prod"})
                for name in calls:
                    monkeypatch.setattr(_json, name, recorded(name))
                done = await retry(client, "deploy", {"env": "prod"}, asked.request_state or "", YES)
                monkeypatch.undo()
        return done

    done = anyio.run(scenario)
    assert isinstance(done, CallToolResult)
    assert not done.is_error, done
    assert len(calls["loads_written"]) == 1  # the payload, once
    assert calls["loads"] == calls["check_state"] == calls["encode_state"] == calls["is_written_as"] == []
    # dumps: only the handler's own check above.
    assert calls["dumps"] == [state]
