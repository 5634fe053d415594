"""One HTTP status for a JSON-RPC ``-32602`` answer over Streamable HTTP: 200, in every language.

The MCP Python SDK (like the Go SDK) sends a JSON-RPC error whose code is ``-32602`` (Invalid params)
with HTTP 400 on the 2026-07-28 wire; the TypeScript SDK sends it with HTTP 200. A refused
``requestState`` in the JSON-RPC refusal mode is such an error, so the same refusal came back with two
statuses from one fleet. This project answers 200: a JSON-RPC error is the request's response, not a
failure of the transport (the 2026-07-28 Streamable HTTP text asks for 400 only for header mismatches,
an unsupported protocol version and a missing client capability, and 404 for an unknown method; those
keep their status here). :func:`invalid_params_as_200` wraps the SDK's ASGI app to do that.
"""

from __future__ import annotations

import json
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: JSON-RPC's Invalid params code, the one code whose HTTP 400 is turned into 200.
INVALID_PARAMS: Final = -32602
#: A held 400 body longer than this is passed on as it is (an SDK's JSON-RPC error is far shorter).
_MAX_HELD: Final = 1 << 20


def _is_json(start: Message) -> bool:
    for name, value in start.get("headers", ()):
        if name.lower() == b"content-type":
            return bool(value.split(b";")[0].strip().lower() == b"application/json")
    return False


def _is_invalid_params_answer(body: bytes) -> bool:
    """Whether ``body`` is one JSON-RPC error answering a request (an id that is not null) with -32602."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("id") is None:
        return False
    error = message.get("error")
    return isinstance(error, dict) and type(error.get("code")) is int and error["code"] == INVALID_PARAMS


def invalid_params_as_200(app: ASGIApp) -> ASGIApp:
    """``app`` with HTTP 200, not 400, for a JSON-RPC ``-32602`` error answering a request.

    Wrap the SDK's Streamable HTTP app (``server.streamable_http_app(...)``) with it. Only an
    ``application/json`` answer sent with status 400 whose body is one JSON-RPC error with code
    ``-32602`` and a request id is changed, and only its status: the body and every header go out as
    the SDK wrote them. Every other answer (other codes, SSE streams, lifespan events) passes untouched.
    """

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        held: Message | None = None
        chunks: list[bytes] = []
        size = 0

        async def relay(message: Message) -> None:
            nonlocal held, size
            if held is None:
                if (
                    message["type"] == "http.response.start"
                    and message.get("status") == 400
                    and _is_json(message)
                ):
                    held = message
                    return
                await send(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body = message.get("body", b"")
            chunks.append(body)
            size += len(body)
            if message.get("more_body", False) and size <= _MAX_HELD:
                return
            whole = b"".join(chunks)
            start = dict(held)
            if not message.get("more_body", False) and _is_invalid_params_answer(whole):
                start["status"] = 200
            held, chunks[:] = None, []
            await send(start)
            await send({**message, "body": whole})  # any later body chunk goes on as it comes

        await app(scope, receive, relay)

    return wrapped
