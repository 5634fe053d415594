"""The edge inputs of profile 8.2 as raw JSON-RPC (over Streamable HTTP or stdio), and the answer each gets.

An answer is reduced to what every language must agree on: a JSON-RPC error code and its ``data.reason``,
or a tool result's ``isError`` and its reason code (``_meta``), or ``input_required``/``complete``; an
HTTP status other than 200 is added to it (``"HTTP 400"``): MCP 2026-07-28 (SEP-2575) says a -32602 goes
out with HTTP 400 on Streamable HTTP, in every language. The Python example server's answers are the
reference: ``EXPECTED`` by refusal mode (over stdio, where there is no status), ``EXPECTED_HTTP`` over
Streamable HTTP. Used by tests/crosslang/test_edge_inputs.py (every example server) and
tests/java/test_server_java_example.py (the Java one, with its own checks).
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
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
_IDS = itertools.count(1)

#: Sends one JSON-RPC request and gives back the HTTP status (200 over stdio) and the JSON-RPC answer.
Send = Callable[[dict[str, Any]], tuple[int, dict[str, Any] | None]]


def body(
    tool: str,
    arguments: Any = MISSING,
    state: Any = MISSING,
    responses: Any = MISSING,
    *,
    method: str = "tools/call",
) -> dict[str, Any]:
    """A tools/call request (or ``method``'s: prompts/get) with the members given (MISSING: absent)."""
    return _request(method, {"name": tool}, arguments, state, responses)


def prompt_body(
    prompt: str, arguments: Any = MISSING, state: Any = MISSING, responses: Any = MISSING
) -> dict[str, Any]:
    """A prompts/get request with the members given (MISSING: the member is absent)."""
    return body(prompt, arguments, state, responses, method="prompts/get")


def resource_body(
    uri: str, state: Any = MISSING, responses: Any = MISSING, *, arguments: Any = MISSING
) -> dict[str, Any]:
    """A resources/read request with the members given (MISSING: the member is absent); ``arguments`` is
    a member MCP's ReadResourceRequest does not have (the URI is the whole target)."""
    return _request("resources/read", {"uri": uri}, arguments, state, responses)


def _request(
    method: str, target: dict[str, str], arguments: Any, state: Any, responses: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {
        **target,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    }
    for key, value in (("arguments", arguments), ("requestState", state), ("inputResponses", responses)):
        if value is not MISSING:
            params[key] = value
    return {"jsonrpc": "2.0", "id": next(_IDS), "method": method, "params": params}


def http(url: str, token: str = ALICE) -> Send:
    """Send requests as alice's POSTs to ``url`` (Streamable HTTP), with the bearer ``token``.

    The requests share one client, whose connection is kept alive between them (a new connection for each
    costs about as much as the request itself); it is closed when the sender is dropped.
    """
    client = httpx2.Client(timeout=30)

    def send(request: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        return post(url, request, token, client=client)

    weakref.finalize(send, client.close)
    return send


def stdio(process: subprocess.Popen[str], timeout: float = 30) -> Send:
    """Send requests as lines to a stdio server, reading lines until the answer with the request's id.

    A thread reads the server's lines as they come (so that two lines arriving together are never left
    in a buffer unseen). No answer within ``timeout`` seconds, or the server's output ended: status 0,
    no answer.
    """
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put("")  # the end of the output

    threading.Thread(target=pump, daemon=True).start()

    def send(request: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        assert process.stdin is not None
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return 0, None
            if not line:
                lines.put("")  # still the end for the next request
                return 0, None
            message = json.loads(line)
            if message.get("id") == request["id"]:
                return 200, message

    return send


def post(
    url: str, request: dict[str, Any], token: str = ALICE, *, client: httpx2.Client | None = None
) -> tuple[int, dict[str, Any] | None]:
    """POST one request with the bearer ``token`` (on ``client``, else on a connection of its own); the HTTP
    status and the JSON-RPC answer (from JSON or the first SSE event)."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": request["method"],
        "Mcp-Name": str(request["params"].get("name", request["params"].get("uri", ""))),
    }
    if client is None:
        response = httpx2.post(url, content=json.dumps(request), headers=headers, timeout=30)
    else:
        response = client.post(url, content=json.dumps(request), headers=headers)
    text = response.text
    if not text.strip():
        return response.status_code, None
    if text.lstrip().startswith("{"):
        return response.status_code, json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return response.status_code, json.loads(line[5:])
    return response.status_code, None


def answer(send: Send, request: dict[str, Any]) -> tuple[Any, ...]:
    """The answer, reduced: ("error", code, reason), ("tool_error", reason) or (result type,), then
    ``"HTTP <status>"`` when the status was not 200; ("no answer",) when none came (stdio)."""
    status, message = send(request)
    if message is None:
        return ("no answer",) if status == 0 else ("http", status)
    return (*_reduced(message), *(() if status == 200 else (f"HTTP {status}",)))


def _reduced(message: dict[str, Any]) -> tuple[Any, ...]:
    if "error" in message:
        data = message["error"].get("data")
        return ("error", message["error"]["code"], data.get("reason") if isinstance(data, dict) else None)
    result = message["result"]
    if result.get("isError"):
        return ("tool_error", (result.get("_meta") or {}).get(REASON_META_KEY))
    if result.get("resultType") == "input_required" or "inputRequests" in result:
        return ("input_required",)
    return ("complete",)


def valid_state(send: Send, arguments: Any = BRANCH) -> str:
    """A fresh state from a first round of delete_branch."""
    reply = send(body("delete_branch", arguments))[1]
    assert reply is not None
    assert "result" in reply, reply
    state = reply["result"].get("requestState")
    assert isinstance(state, str), reply
    return state


def edge_answers(send: Send) -> dict[str, tuple[Any, ...]]:
    """Every edge input sent to one server (tools/call, prompts/get, resources/read), with its answer."""
    return {**tool_edge_answers(send), **prompt_edge_answers(send), **resource_edge_answers(send)}


def _argument_cases(*, nested: object) -> tuple[tuple[str, object], ...]:
    """The arguments members every server must answer alike: absent, null, not an object, unbindable.

    ``nested`` is the 300-level case: the retry sends it as the arguments, the first round
    inside a valid object.
    """
    return (
        ("absent", MISSING),
        ("null", None),
        ("empty object", {}),
        ("string", "x"),
        ("array", [1]),
        ("2**60", {**BRANCH, "n": 2**60}),
        ("nested 300", nested),
    )


def tool_edge_answers(send: Send) -> dict[str, tuple[Any, ...]]:
    """The edge inputs of profile 8.2 on tools/call (``delete_branch``), each with its reduced answer."""
    answers: dict[str, tuple[Any, ...]] = {}
    for name, state in (
        ("absent", MISSING),
        ("null", None),
        ("empty", ""),
        ("int", 42),
        ("float", 1.5),
        ("true", True),
        ("object", {}),
        ("array", []),
    ):
        answers[f"requestState {name}"] = answer(send, body("delete_branch", BRANCH, state))
    for name, arguments in _argument_cases(nested=DEEP):
        answers[f"retry with arguments {name}"] = answer(
            send, body("delete_branch", arguments, valid_state(send))
        )
    for name, arguments in _argument_cases(nested={**BRANCH, "deep": DEEP}):
        answers[f"first round with arguments {name}"] = answer(send, body("delete_branch", arguments))
    answers["state to an unknown tool"] = answer(send, body("no_such_tool", BRANCH, valid_state(send)))
    answers["inputResponses entry not an object"] = answer(
        send, body("delete_branch", BRANCH, valid_state(send), {"confirm": "yes"})
    )
    answers["inputResponses entry not an object, refused state"] = answer(
        send, body("delete_branch", BRANCH, "abc.def.ghi", {"confirm": "yes"})
    )
    answers["inputResponses entry not an object, first round"] = answer(
        send, body("delete_branch", BRANCH, MISSING, {"confirm": "yes"})
    )
    answers["inputResponses on a first round"] = answer(
        send,
        body(
            "delete_branch", BRANCH, MISSING, {"confirm": {"action": "accept", "content": {"confirm": True}}}
        ),
    )
    return answers


#: The prompt and the resource every example server has that ask once (examples/server/asking.py).
PROMPT = "review_branch"
RESOURCE = "trips://fares/Lisbon"
#: The answers that complete them.
FOCUS = {"focus": {"action": "accept", "content": {"focus": "error handling"}}}
WEEKEND = {"weekend": {"action": "accept", "content": {"weekend": True}}}


def _state_of(send: Send, request: dict[str, Any]) -> str:
    reply = send(request)[1]
    assert reply is not None
    assert "result" in reply, reply
    state = reply["result"].get("requestState")
    assert isinstance(state, str), reply
    return state


def prompt_edge_answers(send: Send) -> dict[str, tuple[Any, ...]]:
    """The edge inputs of profile 8.2 on prompts/get (``review_branch``), each with its reduced answer."""
    answers: dict[str, tuple[Any, ...]] = {}

    def prompt_state(arguments: Any = BRANCH) -> str:
        return _state_of(send, prompt_body(PROMPT, arguments))

    for name, state in (
        ("absent", MISSING),
        ("null", None),
        ("empty", ""),
        ("int", 42),
        ("float", 1.5),
        ("true", True),
        ("object", {}),
        ("array", []),
    ):
        answers[f"prompts/get: requestState {name}"] = answer(send, prompt_body(PROMPT, BRANCH, state))
    for name, arguments in _argument_cases(nested={**BRANCH, "deep": DEEP}):
        answers[f"prompts/get: first round with arguments {name}"] = answer(
            send, prompt_body(PROMPT, arguments)
        )
    for name, arguments in _argument_cases(nested={**BRANCH, "deep": DEEP}):
        answers[f"prompts/get: retry with arguments {name}"] = answer(
            send, prompt_body(PROMPT, arguments, prompt_state(), FOCUS)
        )
    answers["prompts/get: retry with the answer"] = answer(
        send, prompt_body(PROMPT, BRANCH, prompt_state(), FOCUS)
    )
    unbound = prompt_state(MISSING)  # minted with arguments absent: bound to {}
    answers["prompts/get: retry with arguments {}, state minted without arguments"] = answer(
        send, prompt_body(PROMPT, {}, unbound, FOCUS)
    )
    answers["prompts/get: retry with arguments null, state minted without arguments"] = answer(
        send, prompt_body(PROMPT, None, unbound, FOCUS)
    )
    answers["prompts/get: state to another prompt"] = answer(
        send, prompt_body("no_such_prompt", BRANCH, prompt_state(), FOCUS)
    )
    answers["prompts/get: a tool's state"] = answer(
        send, prompt_body(PROMPT, BRANCH, valid_state(send), FOCUS)
    )
    return answers


def resource_edge_answers(send: Send) -> dict[str, tuple[Any, ...]]:
    """The edge inputs of profile 8.2 on resources/read (``trips://fares/Lisbon``), with their answers."""
    answers: dict[str, tuple[Any, ...]] = {}
    for name, state in (
        ("absent", MISSING),
        ("null", None),
        ("empty", ""),
        ("int", 42),
        ("float", 1.5),
        ("true", True),
        ("object", {}),
        ("array", []),
    ):
        answers[f"resources/read: requestState {name}"] = answer(send, resource_body(RESOURCE, state))
    for name, arguments in (
        ("null", None),
        ("empty object", {}),
        ("string", "x"),
        ("array", [1]),
    ):
        answers[f"resources/read: first round with an arguments member {name}"] = answer(
            send, resource_body(RESOURCE, arguments=arguments)
        )

    def resource_state() -> str:
        return _state_of(send, resource_body(RESOURCE))

    answers["resources/read: retry with the answer"] = answer(
        send, resource_body(RESOURCE, resource_state(), WEEKEND)
    )
    answers["resources/read: state to another URI"] = answer(
        send, resource_body("trips://fares/Kyoto", resource_state(), WEEKEND)
    )
    answers["resources/read: a tool's state"] = answer(
        send, resource_body(RESOURCE, valid_state(send), WEEKEND)
    )
    answers["resources/read: a prompt's state"] = answer(
        send, resource_body(RESOURCE, _state_of(send, prompt_body(PROMPT, BRANCH)), WEEKEND)
    )
    return answers


#: The value of a no-result inputResponses entry in ``no_result_message``: it must never be shown.
SECRET_ANSWER = "yes-secret-answer"


def no_result_message(send: Send) -> str:
    """The error message for a verified retry whose ``inputResponses`` entry ``confirm`` is no result."""
    _, reply = send(body("delete_branch", BRANCH, valid_state(send), {"confirm": SECRET_ANSWER}))
    assert reply is not None
    assert reply.get("error", {}).get("code") == -32602, reply
    return str(reply["error"]["message"])


MALFORMED = "malformed"
_FIRST_ROUND = ("input_required",)
_COMPLETE = ("complete",)
#: Arguments that cannot be bound on a first round: -32602 whose message says why; no reason code, since
#: no state was refused.
_NOT_BINDABLE = ("error", -32602, None)
#: A first round of delete_branch without repo and branch (arguments absent, {}, or null, which every
#: SDK reads as absent on tools/call): the tool's own input check answers with a tool error, in both refusal
#: modes, and no reason code (no state was refused); the handler never asks, so nothing is bound (null,
#: unbindable, never is: a handler that asks on it gets -32602, as each library's own tests check).
_INPUT_CHECK = ("tool_error", None)


def _expected(refused: Callable[[str], tuple[Any, ...]]) -> dict[str, tuple[Any, ...]]:
    return {
        "requestState absent": _FIRST_ROUND,
        "requestState null": _FIRST_ROUND,
        **{
            f"requestState {name}": refused(MALFORMED)
            for name in ("empty", "int", "float", "true", "object", "array")
        },
        **{
            f"retry with arguments {name}": refused("wrong_request")
            for name in ("absent", "null", "empty object", "string", "array", "2**60", "nested 300")
        },
        **{f"first round with arguments {name}": _INPUT_CHECK for name in ("absent", "null", "empty object")},
        # Arguments that are not an object: MCP allows only an object, and every language answers -32602
        # before the handler runs (the SDK's check in Python, TypeScript and Java; the library's in Go and
        # Rust).
        "first round with arguments string": _NOT_BINDABLE,
        "first round with arguments array": _NOT_BINDABLE,
        "first round with arguments 2**60": _NOT_BINDABLE,
        "first round with arguments nested 300": _NOT_BINDABLE,
        "state to an unknown tool": refused("wrong_tool"),
        "inputResponses entry not an object": ("error", -32602, None),
        "inputResponses entry not an object, refused state": refused(MALFORMED),  # the state is refused first
        "inputResponses entry not an object, first round": _FIRST_ROUND,  # dropped, as any answers are
        "inputResponses on a first round": _FIRST_ROUND,  # dropped: the handler asks
        **_expected_prompt(),
        **_expected_resource(),
    }


def _expected_prompt() -> dict[str, tuple[Any, ...]]:
    """prompts/get: a refusal is always a JSON-RPC -32602 (profile 8.3), whatever the tool refusal mode."""
    refused: Callable[[str], tuple[Any, ...]] = lambda reason: ("error", -32602, reason)  # noqa: E731
    unbindable = ("null", "string", "array", "2**60", "nested 300")
    return {
        "prompts/get: requestState absent": _FIRST_ROUND,
        "prompts/get: requestState null": _FIRST_ROUND,
        **{
            f"prompts/get: requestState {name}": refused(MALFORMED)
            for name in ("empty", "int", "float", "true", "object", "array")
        },
        # Absent arguments are {} (bindable: the prompt asks); present ones that are not an object, or not
        # I-JSON, are unbindable: no state is minted, the -32602 says why (profile 3.4, 8.2).
        "prompts/get: first round with arguments absent": _FIRST_ROUND,
        "prompts/get: first round with arguments empty object": _FIRST_ROUND,
        **{f"prompts/get: first round with arguments {name}": _NOT_BINDABLE for name in unbindable},
        **{
            f"prompts/get: retry with arguments {name}": refused("wrong_request")
            for name in ("absent", "empty object", *unbindable)
        },
        "prompts/get: retry with the answer": _COMPLETE,
        "prompts/get: retry with arguments {}, state minted without arguments": _COMPLETE,
        "prompts/get: retry with arguments null, state minted without arguments": refused("wrong_request"),
        "prompts/get: state to another prompt": refused("wrong_tool"),
        "prompts/get: a tool's state": refused("wrong_tool"),
    }


def _expected_resource() -> dict[str, tuple[Any, ...]]:
    """resources/read: a refusal is always a JSON-RPC -32602 (profile 8.3); the URI is the whole target."""
    refused: Callable[[str], tuple[Any, ...]] = lambda reason: ("error", -32602, reason)  # noqa: E731
    return {
        "resources/read: requestState absent": _FIRST_ROUND,
        "resources/read: requestState null": _FIRST_ROUND,
        **{
            f"resources/read: requestState {name}": refused(MALFORMED)
            for name in ("empty", "int", "float", "true", "object", "array")
        },
        # A resource has no arguments: an arguments member is no part of the request bound, whatever it
        # holds, and the resource asks.
        **{
            f"resources/read: first round with an arguments member {name}": _FIRST_ROUND
            for name in ("null", "empty object", "string", "array")
        },
        "resources/read: retry with the answer": _COMPLETE,
        "resources/read: state to another URI": refused("wrong_tool"),
        "resources/read: a tool's state": refused("wrong_tool"),
        "resources/read: a prompt's state": refused("wrong_tool"),
    }


#: Python's answers (``python examples/server --dev-key --tool-refusal MODE``), by refusal mode
#: (``tool_error`` or ``jsonrpc``, as every example server spells the option).
EXPECTED = {
    "tool_error": _expected(lambda reason: ("tool_error", reason)),
    "jsonrpc": _expected(lambda reason: ("error", -32602, reason)),
}


def _over_http(answer: tuple[Any, ...]) -> tuple[Any, ...]:
    """An answer as it comes over Streamable HTTP: a -32602 with HTTP 400 (SEP-2575), all else with 200."""
    return (*answer, "HTTP 400") if answer[:2] == ("error", -32602) else answer


#: Python's answers over Streamable HTTP: ``EXPECTED`` with every -32602 sent with HTTP 400.
EXPECTED_HTTP = {
    mode: {edge: _over_http(answer) for edge, answer in answers.items()} for mode, answers in EXPECTED.items()
}
