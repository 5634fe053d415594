"""Python, TypeScript, Go, Java and Rust replicas of one service: each opens the others' states alike.

The Python example server (``examples/server``) and its TypeScript, Go, Java and Rust twins
(``examples/server-ts``, ``examples/server-go``, ``examples/server-java``, ``examples/server-rust``) run
side by side with one key ring, one issuer and one Redis, and are called in turn, as a round-robin load
balancer would, by the official Python, TypeScript and Go SDK clients (the fleet has no Java or Rust
client: those replicas are called by the others): every state minted by one opens on the others, and
each refusal (one byte changed, another user, another tool, other arguments, expired, and replayed
across languages) gets the same reason code and the same sentence on all five.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mrtr_state import Keyring, decode_unverified
from tests.crosslang import fleet
from tests.replay.redis_harness import RedisServer, redis_server_executable, require_redis_client

ISSUER = "https://tools.example.com"
#: Short enough to wait out for the expiry check, long enough for a round on a loaded machine: a refusal is
#: checked on five (server, client) pairs with one token, each TypeScript or Go call a process of its own.
TTL = 20
YES = {"confirm": {"action": "accept", "content": {"confirm": True}}}
LANGUAGES = ("python", "typescript", "go", "java", "rust")
#: The SDK client that calls a replica of each language (the fleet has no Java or Rust client).
CLIENT_OF = {
    "python": "python",
    "typescript": "typescript",
    "go": "go",
    "java": "typescript",
    "rust": "python",
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The five example servers on one key ring and one Redis; their URLs by language."""
    for language in ("typescript", "go", "java", "rust"):
        fleet.build(language)
    require_redis_client()
    redis = RedisServer(redis_server_executable(), Path(tmp_path_factory.mktemp("redis")))
    redis.start()
    ring = Keyring.generate("EdDSA")
    env = {"MRTR_STATE_KEYS": json.dumps(ring.private_jwks())}
    args = ("--issuer", ISSUER, "--ttl", str(TTL), "--redis-url", redis.url)
    try:
        with contextlib.ExitStack() as stack:
            yield {
                language: stack.enter_context(fleet.replica(language, *args, env=env))
                for language in LANGUAGES
            }
    finally:
        redis.stop()


def call(
    client: str,
    servers: dict[str, str],
    server: str,
    user: str,
    tool: str,
    arguments: dict[str, Any],
    **retry: Any,
) -> fleet.Answer:
    return fleet.call(client, servers[server], user, tool, arguments, **retry)


def ask(client: str, servers: dict[str, str], server: str, tool: str, arguments: dict[str, Any]) -> str:
    answer = call(client, servers, server, "alice", tool, arguments)
    assert answer.result_type == "input_required", answer
    assert answer.request_state is not None
    return answer.request_state


def other(language: str) -> str:
    """The next language round the fleet: python, typescript, go, java, rust, python..."""
    return LANGUAGES[(LANGUAGES.index(language) + 1) % len(LANGUAGES)]


def each_server_with_another_client() -> list[tuple[str, str]]:
    """Every server, called by the next language's client (the Rust replica's next is Python's)."""
    return [(server, CLIENT_OF[other(server)]) for server in LANGUAGES]


def assert_refused_everywhere(
    servers: dict[str, str],
    reason: str,
    user: str,
    tool: str,
    arguments: dict[str, Any],
    request_state: str,
    input_responses: dict[str, dict[str, Any]],
) -> None:
    """Every server, called by the next language's client, refuses the retry with ``reason``."""
    for server, client in each_server_with_another_client():
        answer = call(
            client,
            servers,
            server,
            user,
            tool,
            arguments,
            request_state=request_state,
            input_responses=input_responses,
        )
        fleet.assert_refused(answer, reason)


@pytest.mark.parametrize(
    ("minter", "first_client", "repo", "branch", "head"),
    # Each server keeps its own branches: a branch is minted where it exists and deleted on the next
    # server (python -> typescript -> go -> java -> rust -> python), never twice on one server.
    [
        ("python", "python", "acme/api", "old-feature", "4b1d0aa"),
        ("python", "typescript", "acme/api", "release-1.0", "77e0c3b"),
        ("typescript", "typescript", "acme/api", "spike/cache", "c0ffee1"),
        ("typescript", "go", "acme/web", "redesign", "5d6e7f8"),
        ("go", "go", "acme/api", "old-feature", "4b1d0aa"),
        ("go", "python", "acme/api", "release-1.0", "77e0c3b"),
        ("java", "python", "acme/api", "spike/cache", "c0ffee1"),
        ("java", "typescript", "acme/web", "redesign", "5d6e7f8"),
        ("rust", "python", "acme/api", "old-feature", "4b1d0aa"),
        ("rust", "go", "acme/api", "release-1.0", "77e0c3b"),
    ],
)
def test_a_state_minted_by_one_language_opens_on_the_other(
    servers: dict[str, str], minter: str, first_client: str, repo: str, branch: str, head: str
) -> None:
    arguments = {"repo": repo, "branch": branch}
    token = ask(first_client, servers, minter, "delete_branch", arguments)
    header, claims = decode_unverified(token)
    assert header["alg"] == "EdDSA"
    assert (claims["iss"], claims["sub"], claims["aud"]) == (ISSUER, "alice", "tools/call:delete_branch")
    assert claims["state"] == {"head": head}
    done = call(
        CLIENT_OF[other(first_client)],
        servers,
        other(minter),
        "alice",
        "delete_branch",
        arguments,
        request_state=token,
        input_responses=YES,
    )
    assert done.result_type == "complete", done
    assert not done.is_error, done
    assert done.text == f"Deleted branch '{branch}' of {repo} (it was at {head})."


@pytest.mark.parametrize("first", LANGUAGES)
def test_a_three_round_form_alternates_between_the_languages(servers: dict[str, str], first: str) -> None:
    """book_trip: dates on one replica, the seat offer on the next, the booking on the third."""
    arguments = {"destination": "Reykjavik"}
    rounds = itertools.cycle([first, other(first), other(other(first))])
    server = next(rounds)
    token = ask(CLIENT_OF[server], servers, server, "book_trip", arguments)
    assert decode_unverified(token)[1]["state"] == {"step": "dates"}
    server = next(rounds)
    dates = {"dates": {"action": "accept", "content": {"depart": "2026-12-12", "return": "2026-12-19"}}}
    offer = call(
        CLIENT_OF[server],
        servers,
        server,
        "alice",
        "book_trip",
        arguments,
        request_state=token,
        input_responses=dates,
    )
    assert offer.result_type == "input_required", offer
    assert offer.request_state is not None
    state = decode_unverified(offer.request_state)[1]["state"]
    assert state["fare_eur"] == 400  # the weekend fare, a Saturday flight
    assert state["flight"] == "MR126-1212"
    seat = state["seats"][0]
    server = next(rounds)
    booked = call(
        CLIENT_OF[server],
        servers,
        server,
        "alice",
        "book_trip",
        arguments,
        request_state=offer.request_state,
        input_responses={"seat": {"action": "accept", "content": {"seat": seat}}},
    )
    assert booked.result_type == "complete", booked
    assert not booked.is_error, booked
    assert booked.text.startswith(
        f"Booked for alice: Reykjavik, flight MR126-1212, 2026-12-12 to 2026-12-19, seat {seat}, 400 EUR."
    )


REFUSALS = {
    "one byte changed": (
        "bad_signature",
        lambda token: ("alice", "book_trip", {"destination": "Lisbon"}, fleet.one_byte_changed(token)),
    ),
    "another user": ("wrong_user", lambda token: ("bob", "book_trip", {"destination": "Lisbon"}, token)),
    "another tool": (
        "wrong_tool",
        lambda token: ("alice", "delete_branch", {"repo": "acme/api", "branch": "main"}, token),
    ),
    "other arguments": (
        "wrong_request",
        lambda token: ("alice", "book_trip", {"destination": "Kyoto"}, token),
    ),
}


@pytest.mark.parametrize("minter", LANGUAGES)
@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_each_refusal_gets_the_same_reason_on_both_languages(
    servers: dict[str, str], minter: str, refusal: str
) -> None:
    reason, change = REFUSALS[refusal]
    token = ask(CLIENT_OF[minter], servers, minter, "book_trip", {"destination": "Lisbon"})
    user, tool, arguments, state = change(token)
    dates = {"dates": {"action": "accept", "content": {"depart": "2026-12-01", "return": "2026-12-02"}}}
    assert_refused_everywhere(servers, reason, user, tool, arguments, state, dates)


@pytest.mark.parametrize("minter", LANGUAGES)
def test_a_state_redeemed_on_one_language_is_replayed_on_both(servers: dict[str, str], minter: str) -> None:
    """book_trip's states are single use on both servers, redeemed in the one Redis."""
    arguments = {"destination": "Lisbon"}
    token = ask(CLIENT_OF[minter], servers, minter, "book_trip", arguments)
    dates = {"dates": {"action": "accept", "content": {"depart": "2026-12-07", "return": "2026-12-09"}}}
    offer = call(
        CLIENT_OF[other(minter)],
        servers,
        other(minter),
        "alice",
        "book_trip",
        arguments,
        request_state=token,
        input_responses=dates,
    )
    assert offer.result_type == "input_required", offer
    assert_refused_everywhere(servers, "replayed", "alice", "book_trip", arguments, token, dates)


def test_an_expired_state_is_refused_on_both_languages(servers: dict[str, str]) -> None:
    tokens = {
        language: ask(CLIENT_OF[language], servers, language, "book_trip", {"destination": "Kyoto"})
        for language in LANGUAGES
    }
    last_expiry = max(decode_unverified(token)[1]["exp"] for token in tokens.values())
    time.sleep(max(0.0, last_expiry + 1 - time.time()))
    dates = {"dates": {"action": "accept", "content": {"depart": "2026-12-01", "return": "2026-12-02"}}}
    for token in tokens.values():
        assert_refused_everywhere(
            servers, "expired", "alice", "book_trip", {"destination": "Kyoto"}, token, dates
        )


@pytest.mark.parametrize("server", LANGUAGES)
def test_a_yes_without_a_sealed_state_is_not_a_yes_on_either_language(
    servers: dict[str, str], server: str
) -> None:
    """Profile 8.2: a seat chosen with no verified state answers nothing; both servers ask for the dates."""
    asked = call(
        CLIENT_OF[other(server)],
        servers,
        server,
        "alice",
        "book_trip",
        {"destination": "Lisbon"},
        input_responses={"seat": {"action": "accept", "content": {"seat": "1A"}}},
    )
    assert asked.result_type == "input_required", asked
    assert asked.request_state is not None
    assert decode_unverified(asked.request_state)[1]["state"] == {"step": "dates"}
