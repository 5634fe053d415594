"""The edge inputs of profile 8.2 as raw JSON-RPC over Streamable HTTP, and the answer each one gets.

An answer is reduced to what every language must agree on: a JSON-RPC error code and its ``data.reason``,
or a tool result's ``isError`` and its reason code (``_meta``), or ``input_required``/``complete``. The
Python example server's answers are the reference (``EXPECTED`` in test_server_java_example.py).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from mrtr_state.mcp import REASON_META_KEY

PROTOCOL = "2026-07-28"
ALICE = "alice-example-token"
BRANCH = {"repo": "acme/api", "branch": "old-feature"}
#: Nested 300 levels: deeper than the 256 levels arguments may nest (profile 3.4).
DEEP: Any = {"x": 1}
for _ in range(300):
    DEEP = {"x": DEEP}

MISSING = object()


def body(tool: str, arguments: Any = MISSING, state: Any = MISSING, responses: Any = MISSING) -> dict[str, Any]:
    """A tools/call request with the members given (MISSING: the member is absent)."""
    params: dict[str, Any] = {
        "name": tool,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    }
    for key, value in (("arguments", arguments), ("requestState", state), ("inputResponses", responses)):
        if value is not MISSING:
            params[key] = value
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def post(url: str, request: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
    """POST one request; the HTTP status and the JSON-RPC answer (from JSON or the first SSE event)."""
    headers = {
        "Authorization": f"Bearer {ALICE}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": request["method"],
        "Mcp-Name": str(request["params"].get("name", "")),
    }
    response = httpx2.post(url, content=json.dumps(request), headers=headers, timeout=30)
    text = response.text
    if not text.strip():
        return response.status_code, None
    if text.lstrip().startswith("{"):
        return response.status_code, json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return response.status_code, json.loads(line[5:])
    return response.status_code, None


def answer(url: str, request: dict[str, Any]) -> tuple[Any, ...]:
    """What the server answered, reduced: ("error", code, reason) / ("tool_error", reason) / (result type,)."""
    status, message = post(url, request)
    if message is None:
        return ("http", status)
    if "error" in message:
        data = message["error"].get("data")
        return ("error", message["error"]["code"], data.get("reason") if isinstance(data, dict) else None)
    result = message["result"]
    if result.get("isError"):
        return ("tool_error", (result.get("_meta") or {}).get(REASON_META_KEY))
    if result.get("resultType") == "input_required" or "inputRequests" in result:
        return ("input_required",)
    return ("complete",)


def message(url: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """The whole JSON-RPC answer."""
    return post(url, request)[1]


def valid_state(url: str, arguments: Any = BRANCH) -> str:
    """A fresh state from a first round of delete_branch."""
    reply = message(url, body("delete_branch", arguments))
    assert reply is not None and "result" in reply, reply
    state = reply["result"].get("requestState")
    assert isinstance(state, str), reply
    return state


def edge_answers(url: str) -> dict[str, tuple[Any, ...]]:
    """Every edge input sent to the server at ``url``, each with its reduced answer."""
    answers: dict[str, tuple[Any, ...]] = {}
    for name, state in (("absent", MISSING), ("null", None), ("empty", ""), ("int", 42), ("float", 1.5),
                        ("true", True), ("object", {}), ("array", [])):
        answers[f"requestState {name}"] = answer(url, body("delete_branch", BRANCH, state))
    for name, arguments in (("absent", MISSING), ("null", None), ("empty object", {}), ("string", "x"),
                            ("array", [1]), ("2**60", {**BRANCH, "n": 2**60}), ("nested 300", DEEP)):
        answers[f"retry with arguments {name}"] = answer(url, body("delete_branch", arguments, valid_state(url)))
    for name, arguments in (("2**60", {**BRANCH, "n": 2**60}), ("nested 300", {**BRANCH, "deep": DEEP})):
        answers[f"first round with arguments {name}"] = answer(url, body("delete_branch", arguments))
    answers["state to an unknown tool"] = answer(url, body("no_such_tool", BRANCH, valid_state(url)))
    answers["inputResponses entry not an object"] = answer(
        url, body("delete_branch", BRANCH, valid_state(url), {"confirm": "yes"})
    )
    answers["inputResponses on a first round"] = answer(
        url, body("delete_branch", BRANCH, MISSING, {"confirm": {"action": "accept", "content": {"confirm": True}}})
    )
    return answers
