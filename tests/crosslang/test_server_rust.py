"""``examples/server-rust`` (rmcp and the mrtr-state Rust crates) driven by the official Python MCP client.

The Rust example server runs as a process on loopback, built with cargo (``fleet.build("rust")``). The
Python SDK's client completes ``delete_branch`` and ``book_trip`` through it; a state with one byte
changed, another user's state, a state for other arguments and a redeemed state are refused with the
profile's reason code and sentence, as on every other language's server. Then the Rust server and the
Python example server share one key ring and one Redis: a state minted by either opens on the other, and
once redeemed on one it is refused as replayed on the other.

Without cargo (or, for the shared ring, redis-server and the redis client) the tests skip, except under
``CI=true``, where they fail.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest

from mrtr_state import Keyring, decode_unverified
from tests.crosslang import fleet
from tests.replay.redis_harness import RedisServer, redis_server_executable, require_redis_client

ISSUER = "https://tools.example.com"
YES = {"confirm": {"action": "accept", "content": {"confirm": True}}}


@pytest.fixture(scope="module")
def rust_url() -> Iterator[str]:
    """The Rust example server with an ephemeral EdDSA key; stopped after the module."""
    fleet.build("rust")
    with fleet.replica("rust", "--dev-key", env={}) as url:
        yield url


def ask(url: str, tool: str, arguments: dict[str, Any], user: str = "alice") -> str:
    answer = fleet.python_call(url, user, tool, arguments)
    assert answer.result_type == "input_required", answer
    assert answer.request_state is not None
    return answer.request_state


def test_a_protected_round_trip_through_the_rust_server(rust_url: str) -> None:
    arguments = {"repo": "acme/api", "branch": "old-feature"}
    token = ask(rust_url, "delete_branch", arguments)
    header, claims = decode_unverified(token)
    assert header["alg"] == "EdDSA"
    assert (claims["iss"], claims["sub"], claims["aud"]) == (ISSUER, "alice", "tools/call:delete_branch")
    assert claims["state"] == {"head": "4b1d0aa"}

    def retry(state: str, user: str = "alice", **changed: str) -> fleet.Answer:
        return fleet.python_call(
            rust_url,
            user,
            "delete_branch",
            {**arguments, **changed},
            request_state=state,
            input_responses=YES,
        )

    fleet.assert_refused(retry(fleet.one_byte_changed(token)), "bad_signature")
    fleet.assert_refused(retry(token, user="bob"), "wrong_user")
    fleet.assert_refused(retry(token, branch="release-1.0"), "wrong_request")
    done = retry(token)
    assert done.result_type == "complete", done
    assert not done.is_error, done
    assert done.text == "Deleted branch 'old-feature' of acme/api (it was at 4b1d0aa)."
    fleet.assert_refused(retry(token), "replayed")  # the acting round is single use


def test_a_two_round_form_books_once(rust_url: str) -> None:
    arguments = {"destination": "Reykjavik"}
    token = ask(rust_url, "book_trip", arguments)
    assert decode_unverified(token)[1]["state"] == {"step": "dates"}
    dates = {"dates": {"action": "accept", "content": {"depart": "2026-12-12", "return": "2026-12-19"}}}
    offer = fleet.python_call(
        rust_url, "alice", "book_trip", arguments, request_state=token, input_responses=dates
    )
    assert offer.result_type == "input_required", offer
    assert offer.request_state is not None
    state = decode_unverified(offer.request_state)[1]["state"]
    assert (state["flight"], state["fare_eur"]) == ("MR126-1212", 400)  # a Saturday: the weekend fare
    seat = {"seat": {"action": "accept", "content": {"seat": state["seats"][0]}}}
    booked = fleet.python_call(
        rust_url, "alice", "book_trip", arguments, request_state=offer.request_state, input_responses=seat
    )
    assert booked.result_type == "complete", booked
    assert booked.text.startswith(
        "Booked for alice: Reykjavik, flight MR126-1212, 2026-12-12 to 2026-12-19, "
        f"seat {state['seats'][0]}, 400 EUR."
    ), booked
    again = fleet.python_call(
        rust_url, "alice", "book_trip", arguments, request_state=offer.request_state, input_responses=seat
    )
    fleet.assert_refused(again, "replayed")


def test_a_yes_without_a_sealed_state_is_not_a_yes(rust_url: str) -> None:
    """Profile 8.2: answers on a first round answer nothing; the server asks for the dates."""
    asked = fleet.python_call(
        rust_url,
        "alice",
        "book_trip",
        {"destination": "Lisbon"},
        input_responses={"seat": {"action": "accept", "content": {"seat": "1A"}}},
    )
    assert asked.result_type == "input_required", asked
    assert asked.request_state is not None
    assert decode_unverified(asked.request_state)[1]["state"] == {"step": "dates"}


def raw_status(url: str, host: str, *lines: str, length: int = 2, body: bytes = b"{}") -> int:
    """POST to ``url`` with the Host header ``host``, announcing ``length`` bytes and sending ``body``
    (perhaps less); the HTTP status, which must come within the timeout, whatever was left unsent."""
    parts = urlsplit(url)
    assert parts.hostname is not None
    assert parts.port is not None
    fields = [
        "POST /mcp HTTP/1.1",
        f"Host: {host}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "Connection: close",
        *lines,
    ]
    if not any(line.lower().startswith("transfer-encoding") for line in lines):
        fields.append(f"Content-Length: {length}")
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall("\r\n".join(fields).encode("latin-1") + b"\r\n\r\n" + body)
        try:
            status_line = sock.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
        except TimeoutError:
            pytest.fail("no answer within 10 s: the server waits for the rest of the body")
    return int(status_line.split()[1])


def test_the_http_edge_checks_host_then_bearer(rust_url: str) -> None:
    port = urlsplit(rust_url).port
    bearer = "Authorization: Bearer alice-example-token"
    assert raw_status(rust_url, "evil.example.com", bearer) == 421
    assert raw_status(rust_url, f"127.0.0.1.nip.io:{port}", bearer) == 421
    assert raw_status(rust_url, f"127.0.0.1:{port}") == 401
    assert raw_status(rust_url, f"localhost:{port}", "Authorization: Bearer not-a-token") == 401


def test_a_body_is_read_only_after_the_bearer_check_and_only_up_to_the_limit(rust_url: str) -> None:
    port = urlsplit(rust_url).port
    host = f"127.0.0.1:{port}"
    big = 24 * 1024 * 1024  # announced, never sent in full
    assert raw_status(rust_url, host, length=big, body=b"{" + b" " * 65536) == 401
    bearer = "Authorization: Bearer alice-example-token"
    assert raw_status(rust_url, host, bearer, length=big, body=b"{") == 413
    chunk = b" " * 0x100000
    chunked = b"".join(b"100000\r\n" + chunk + b"\r\n" for _ in range(5))  # 5 MiB, over the 4 MiB limit
    assert raw_status(rust_url, host, bearer, "Transfer-Encoding: chunked", body=chunked) == 413


def test_the_published_jwks_holds_public_keys_only(rust_url: str) -> None:
    parts = urlsplit(rust_url)
    response = httpx2.get(f"{parts.scheme}://{parts.netloc}/.well-known/mrtr-state-jwks.json", timeout=10)
    assert response.status_code == 200
    keys = response.json()["keys"]
    assert keys, keys
    assert all(key["kty"] == "OKP" for key in keys), keys
    assert not any("d" in key for key in keys), keys


@pytest.fixture(scope="module")
def one_ring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The Rust and the Python example servers on one EdDSA ring, one issuer and one Redis."""
    fleet.build("rust")
    require_redis_client()
    redis = RedisServer(redis_server_executable(), Path(tmp_path_factory.mktemp("redis")))
    redis.start()
    env = {"MRTR_STATE_KEYS": json.dumps(Keyring.generate("EdDSA").private_jwks())}
    args = ("--issuer", ISSUER, "--redis-url", redis.url)
    try:
        with contextlib.ExitStack() as stack:
            yield {
                language: stack.enter_context(fleet.replica(language, *args, env=env))
                for language in ("rust", "python")
            }
    finally:
        redis.stop()


@pytest.mark.parametrize(("minter", "opener"), [("rust", "python"), ("python", "rust")])
def test_a_state_minted_by_one_language_opens_on_the_other(
    one_ring: dict[str, str], minter: str, opener: str
) -> None:
    arguments = {"destination": "Kyoto"}
    token = ask(one_ring[minter], "book_trip", arguments)
    dates = {"dates": {"action": "accept", "content": {"depart": "2026-12-07", "return": "2026-12-09"}}}
    offer = fleet.python_call(
        one_ring[opener], "alice", "book_trip", arguments, request_state=token, input_responses=dates
    )
    assert offer.result_type == "input_required", offer
    assert offer.request_state is not None
    assert decode_unverified(offer.request_state)[1]["state"]["flight"] == "MR101-1207"
    # The other user's presentation is refused on the other language too.
    bobs = fleet.python_call(
        one_ring[opener], "bob", "book_trip", arguments, request_state=token, input_responses=dates
    )
    fleet.assert_refused(bobs, "wrong_user")
    # Redeemed on the opener, in the one Redis: the minter refuses it as replayed.
    again = fleet.python_call(
        one_ring[minter], "alice", "book_trip", arguments, request_state=token, input_responses=dates
    )
    assert (again.is_error, again.reason) == (True, "replayed"), again


def test_a_refusal_is_logged_with_its_reason_and_never_the_token() -> None:
    fleet.build("rust")
    command = fleet.SERVER_COMMANDS["rust"]
    with fleet.running_server("--dev-key", env={}, command=command) as server:
        arguments = {"destination": "Lisbon"}
        token = ask(server.url, "book_trip", arguments)
        changed = fleet.one_byte_changed(token)
        answer = fleet.python_call(server.url, "bob", "book_trip", arguments, request_state=changed)
        assert (answer.is_error, answer.reason) == (True, "bad_signature"), answer
        log = server.log()
    assert 'reason="bad_signature"' in log, log
    assert 'method="tools/call"' in log, log
    for secret in (token, changed, token.split(".")[1], token.split(".")[2], "alice-example-token"):
        assert secret not in log, log


def test_the_encrypted_form_round_trips_and_a_ring_of_secrets_publishes_nothing() -> None:
    """--dev-key-alg A256GCM: every state is the profile's encrypted form; HS256: the JWKS is 404."""
    fleet.build("rust")
    arguments = {"repo": "acme/web", "branch": "redesign"}
    with fleet.replica("rust", "--dev-key", "--dev-key-alg", "A256GCM", env={}) as url:
        token = ask(url, "delete_branch", arguments)
        assert token.count(".") == 4, "a compact JWE"
        assert "redesign" not in token
        assert "5d6e7f8" not in token
        parts = token.split(".")
        parts[3] = parts[3][:-2] + ("AA" if parts[3][-2:] != "AA" else "BA")
        changed = fleet.python_call(url, "alice", "delete_branch", arguments, request_state=".".join(parts))
        assert (changed.is_error, changed.reason) == (True, "bad_signature"), changed
        done = fleet.python_call(
            url, "alice", "delete_branch", arguments, request_state=token, input_responses=YES
        )
        assert done.text == "Deleted branch 'redesign' of acme/web (it was at 5d6e7f8).", done
    with fleet.replica("rust", "--dev-key", "--dev-key-alg", "HS256", env={}) as url:
        parts_of_url = urlsplit(url)
        jwks = f"{parts_of_url.scheme}://{parts_of_url.netloc}/.well-known/mrtr-state-jwks.json"
        assert httpx2.get(jwks, timeout=10).status_code == 404


def test_refusals_as_json_rpc_errors() -> None:
    """--tool-refusal jsonrpc: a refused state on tools/call is -32602 with data.reason."""
    fleet.build("rust")
    arguments = {"destination": "Lisbon"}
    with fleet.replica("rust", "--dev-key", "--tool-refusal", "jsonrpc", env={}) as url:
        token = ask(url, "book_trip", arguments)
        answer = fleet.python_call(url, "bob", "book_trip", arguments, request_state=token)
    assert (answer.result_type, answer.error_code, answer.reason) == (None, -32602, "wrong_user"), answer
