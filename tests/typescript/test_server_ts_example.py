"""``examples/server-ts`` at its HTTP edge (issue 24 item 2): the Host check and the bearer check come
before the body is read, and the body is read only up to a limit.

Each test talks raw HTTP/1.1 over a socket so that it controls how much of a body is ever sent: a server
that read the body before the bearer check would wait for bytes that never come, and the test would time
out instead of seeing 401.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.crosslang import fleet

ANSWER_TIMEOUT = 10.0
BIG = 24 * 1024 * 1024  # announced, never sent in full
LIMIT = 4 * 1024 * 1024  # the SDK's default request body cap, which the example applies


@pytest.fixture(scope="module")
def address() -> Iterator[tuple[str, int]]:
    fleet.build("typescript")
    with fleet.replica("typescript", "--dev-key", env={}) as url:
        parts = urlsplit(url)
        assert parts.hostname is not None
        assert parts.port is not None
        yield parts.hostname, parts.port


def exchange(address: tuple[str, int], head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send a request head and (part of) a body; return the status and what came back, within the timeout."""
    with socket.create_connection(address, timeout=ANSWER_TIMEOUT) as sock:
        sock.sendall(head.encode("latin-1") + b"\r\n" + body)
        received = b""
        try:
            while b"\r\n\r\n" not in received:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        except TimeoutError:
            pytest.fail(f"no answer within {ANSWER_TIMEOUT} s: the server waits for the rest of the body")
    status_line = received.split(b"\r\n", 1)[0].decode("latin-1")
    assert status_line.startswith("HTTP/1.1 "), received[:200]
    return int(status_line.split()[1]), received


def head(host: str, *lines: str, length: int | None = None) -> str:
    fields = [
        "POST /mcp HTTP/1.1",
        f"Host: {host}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ]
    if length is not None:
        fields.append(f"Content-Length: {length}")
    return "\r\n".join([*fields, *lines]) + "\r\n"


def test_an_unauthenticated_post_is_answered_401_before_its_body_is_read(address: tuple[str, int]) -> None:
    status, _ = exchange(address, head(f"127.0.0.1:{address[1]}", length=BIG), b"{" + b" " * 65536)
    assert status == 401


def test_an_unauthenticated_chunked_post_is_answered_401_before_its_body_ends(
    address: tuple[str, int],
) -> None:
    status, _ = exchange(
        address,
        head(f"127.0.0.1:{address[1]}", "Transfer-Encoding: chunked"),
        b"10000\r\n" + b" " * 0x10000 + b"\r\n",
    )
    assert status == 401


def test_a_foreign_host_header_is_answered_421(address: tuple[str, int]) -> None:
    for host in ("evil.example.com", f"evil.example.com:{address[1]}", "127.0.0.1.nip.io"):
        status, _ = exchange(
            address, head(host, "Authorization: Bearer alice-example-token", length=BIG), b"{"
        )
        assert status == 421, host


def test_an_authenticated_body_over_the_limit_is_answered_413_unread(address: tuple[str, int]) -> None:
    host = f"localhost:{address[1]}"
    status, _ = exchange(address, head(host, "Authorization: Bearer alice-example-token", length=BIG), b"{")
    assert status == 413
    chunk = b" " * 0x100000
    chunked = b"".join(b"100000\r\n" + chunk + b"\r\n" for _ in range(LIMIT // len(chunk) + 1))
    status, _ = exchange(
        address,
        head(host, "Authorization: Bearer alice-example-token", "Transfer-Encoding: chunked"),
        chunked,
    )
    assert status == 413


def test_an_authenticated_request_within_the_limit_is_served(address: tuple[str, int]) -> None:
    """tools/list builds the server (the boundary's install included) and answers with the tools."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "edge-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    body = json.dumps(request).encode()
    lines = (
        "Authorization: Bearer alice-example-token",
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/list",
        "Connection: close",
    )
    with socket.create_connection(address, timeout=ANSWER_TIMEOUT) as sock:
        sock.sendall(head(f"127.0.0.1:{address[1]}", *lines, length=len(body)).encode() + b"\r\n" + body)
        answer = b""
        while chunk := sock.recv(65536):  # Connection: close: the server ends the answer by closing
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:500]
    assert b"delete_branch" in answer, answer[:500]
