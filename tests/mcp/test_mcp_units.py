"""The pure layers of mrtr_state.mcp: what a request binds, how state text maps to the claim."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult

from mrtr_state import InvalidRequestState, Keyring, StateSealer
from mrtr_state.binding.canonical import JSON_NULL
from mrtr_state.mcp import Retry, input_required
from mrtr_state.mcp.plaintext import claim_of, text_of
from mrtr_state.mcp.request import target_of, target_parts


@pytest.mark.parametrize(
    ("method", "params", "binding", "arguments"),
    [
        ("tools/call", {"name": "deploy", "arguments": {"env": "prod"}}, {"tool": "deploy"}, {"env": "prod"}),
        ("tools/call", {"name": "deploy"}, {"tool": "deploy"}, {}),
        ("tools/call", {"name": "deploy", "arguments": None}, {"tool": "deploy"}, JSON_NULL),
        (
            "tools/call",
            {"name": "x", "arguments": ["not", "an", "object"]},
            {"tool": "x"},
            ["not", "an", "object"],
        ),
        ("prompts/get", {"name": "summary", "arguments": {"t": "q3"}}, {"prompt": "summary"}, {"t": "q3"}),
        ("resources/read", {"uri": "notes://a"}, {"resource": "notes://a"}, None),
    ],
)
def test_a_request_binds_its_target_and_its_arguments_only_absent_meaning_empty(
    method: str, params: dict[str, Any], binding: dict[str, str], arguments: Any
) -> None:
    target = target_of(method, params)
    assert target.binding == binding
    assert target.arguments == arguments
    # What the boundary binds with, without the Target in between.
    assert target_parts(method, params) == (target.kind, target.name, target.arguments)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {}),
        ("tools/call", {"name": ""}),
        ("tools/call", {"name": 7}),
        ("resources/read", {"uri": None}),
    ],
)
def test_a_request_without_a_bindable_target_is_refused(method: str, params: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=method):
        target_of(method, params)
    with pytest.raises(ValueError, match=method):
        target_parts(method, params)


@pytest.mark.parametrize("arguments", [None, ["env", "prod"], "env=prod", 7, True, []])
def test_arguments_that_are_not_an_object_are_unbindable_never_empty(arguments: Any) -> None:
    # Profile 3.4 and 8.2 (issue 24, D2): only absent arguments are {}.
    sealer = StateSealer(Keyring.generate("HS256"), issuer="https://x.example")
    binding = target_of("tools/call", {"name": "deploy", "arguments": arguments}).bound_to("alice")
    assert binding.digest_or_none is None
    assert binding.problem is not None
    assert "must be a JSON object" in binding.problem
    with pytest.raises(TypeError, match="must be a JSON object"):
        sealer.seal_bound({"step": 1}, binding)
    bound_to_empty = sealer.seal({"step": 1}, user="alice", tool="deploy", arguments={})
    with pytest.raises(InvalidRequestState) as refused:
        sealer.open_bound(bound_to_empty, binding)
    assert refused.value.reason == "wrong_request"
    unbound = sealer.seal({"step": 1}, user="alice", tool="deploy")
    with pytest.raises(InvalidRequestState) as required:
        sealer.open_bound(unbound, binding, require_arguments=True)
    assert required.value.reason == "wrong_request"
    assert sealer.open_bound(unbound, binding) == {"step": 1}  # an unbound token binds nothing


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ('{"step": 2, "seats": ["1A"]}', {"step": 2, "seats": ["1A"]}),
        ("[1, 2]", [1, 2]),
        ("abc", "abc"),
        ('"quoted"', '"quoted"'),
        ("42", "42"),
        ("{not json", "{not json"),
        ('{"a": 1, "a": 2}', '{"a": 1, "a": 2}'),
        ('{"big": 9007199254740993}', '{"big": 9007199254740993}'),
        ('{"s": "\\ud800"}', '{"s": "\\ud800"}'),
    ],
)
def test_object_or_array_text_becomes_structured_state_and_any_other_string_stays_verbatim(
    text: str, claim: Any
) -> None:
    assert claim_of(text) == claim


@pytest.mark.parametrize("claim", ["abc", '"quoted"', {"step": 2}, [1, "x"], 5, None])
def test_the_handler_gets_back_what_it_sealed(claim: Any) -> None:
    assert claim_of(text_of(claim)) == claim or not isinstance(claim, (dict, list))
    if isinstance(claim, str):
        assert text_of(claim) == claim


def test_input_required_carries_the_state_as_json_text() -> None:
    question = ElicitRequest(params=ElicitRequestFormParams(message="?", requested_schema={"type": "object"}))
    result = input_required({"q": question}, state={"step": "dates", "n": 1})
    assert result.request_state == '{"step":"dates","n":1}'
    assert result.input_requests == {"q": question}
    assert input_required(state={}).request_state == "{}"


@pytest.mark.parametrize(
    ("state", "error"),
    [
        (None, ValueError),  # neither requests nor state
        (["a", "list"], TypeError),
        ({"n": float("nan")}, ValueError),
        ({"n": 2**60}, ValueError),
        ({"when": object()}, TypeError),
    ],
)
def test_input_required_refuses_state_the_profile_cannot_carry(state: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        input_required(state=state)


def test_a_retry_reads_accepted_and_declined_answers() -> None:
    retry = Retry(
        state={"step": 1},
        responses={
            "yes": ElicitResult(action="accept", content={"confirm": True}),
            "no": ElicitResult(action="decline"),
            "later": ElicitResult(action="cancel"),
        },
    )
    assert retry.accepted("yes") == {"confirm": True}
    assert retry.accepted("no") is None
    assert retry.accepted("missing") is None
    assert retry.declined("no")
    assert retry.declined("later")
    assert not retry.declined("yes")
    assert not retry.declined("missing")


def test_a_round_that_asks_without_a_state_seals_what_it_asked() -> None:
    # Profile 8.2: responses are answers only to a round a verified state records, so a
    # round that asks always carries one, even when the handler keeps nothing else.
    from mcp_types import ListRootsRequest

    result = input_required({"roots": ListRootsRequest(), "name": ListRootsRequest()})
    assert result.request_state == '{"asked":["name","roots"]}'
    assert input_required(state={"n": 1}).request_state == '{"n":1}'
