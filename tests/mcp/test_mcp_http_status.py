"""invalid_params_as_200: a JSON-RPC -32602 answer goes out with HTTP 200; any other answer unchanged."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send

from mrtr_state.mcp import invalid_params_as_200

_JSON = [(b"content-type", b"application/json"), (b"content-length", b"0")]


def _app(status: int, body: bytes, headers: list[tuple[bytes, bytes]], chunks: int = 1) -> Any:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        step = max(1, len(body) // chunks)
        pieces = [body[i : i + step] for i in range(0, len(body), step)] or [b""]
        for index, piece in enumerate(pieces):
            await send({"type": "http.response.body", "body": piece, "more_body": index < len(pieces) - 1})

    return app


def _run(app: Any, scope_type: str = "http") -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    anyio.run(invalid_params_as_200(app), {"type": scope_type}, receive, send)
    return sent


def _error(code: int, request_id: Any = 7) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": "m"}}).encode()


@pytest.mark.parametrize("chunks", [1, 3])
def test_an_invalid_params_answer_goes_out_with_200_and_its_body_and_headers_unchanged(chunks: int) -> None:
    body = _error(-32602)
    sent = _run(_app(400, body, _JSON, chunks))
    assert sent[0] == {"type": "http.response.start", "status": 200, "headers": _JSON}
    assert b"".join(m.get("body", b"") for m in sent[1:]) == body
    assert sent[-1].get("more_body", False) is False


@pytest.mark.parametrize(
    ("status", "body", "headers"),
    [
        (400, _error(-32001), _JSON),  # HeaderMismatch: 400 is the transport's MUST
        (400, _error(-32600), _JSON),
        (400, _error(-32602, None), _JSON),  # no request id: the request itself was unreadable
        (400, b"not json", _JSON),
        (400, _error(-32602), [(b"content-type", b"text/plain")]),
        (404, _error(-32601), _JSON),
        (200, _error(-32602), _JSON),
    ],
)
def test_every_other_answer_keeps_its_status(status: int, body: bytes, headers: list[Any]) -> None:
    sent = _run(_app(status, body, headers))
    assert sent[0]["status"] == status
    assert b"".join(m.get("body", b"") for m in sent[1:]) == body


def test_other_scopes_pass_through() -> None:
    sent = _run(_app(400, _error(-32602), _JSON), scope_type="websocket")
    assert sent[0]["status"] == 400
