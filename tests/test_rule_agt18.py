"""Rule AGT-18's own check, and the other bindings, for both algorithms.

"A test takes a requestState from an input_required result and changes one byte, then
retries. The server refuses it with a tool error. Using it after 10 minutes, or as another
user, is refused the same way." The tool-error form is tested in tests/mcp; here the
sealer itself refuses, with the reason code the profile gives.
"""

from __future__ import annotations

import pytest

from mrtr_state import InvalidRequestState, Keyring, StateSealer
from tests.conftest import ISSUER, ONE_CHANGE_REASONS, Clock, SealerFactory, one_character_changes

REQUEST = {"user": "alice", "tool": "deploy", "arguments": {"env": "prod", "replicas": 3}}
STATE = {"step": "confirm", "plan": ["build", "push", "restart"]}


def refusal(sealer: StateSealer, token: str, **request: object) -> str:
    with pytest.raises(InvalidRequestState) as caught:
        sealer.open(token, **{**REQUEST, **request})  # type: ignore[arg-type]
    return caught.value.reason


def test_the_retry_with_the_untouched_state_opens(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, **REQUEST)
    assert sealer.open(token, **REQUEST) == STATE


def test_a_state_with_any_one_byte_changed_is_refused(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, **REQUEST)
    for i, changed in one_character_changes(token):
        assert refusal(sealer, changed) in ONE_CHANGE_REASONS, f"position {i}"


def test_a_state_presented_ten_minutes_later_is_refused(sealer: StateSealer, clock: Clock) -> None:
    token = sealer.seal(STATE, **REQUEST)
    clock.advance(599)
    assert sealer.open(token, **REQUEST) == STATE
    clock.advance(1)
    assert refusal(sealer, token) == "expired"


def test_a_state_presented_by_another_user_is_refused(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, **REQUEST)
    assert refusal(sealer, token, user="mallory") == "wrong_user"


def test_a_state_presented_to_another_tool_is_refused(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, **REQUEST)
    assert refusal(sealer, token, tool="delete_repo") == "wrong_tool"


def test_a_tool_state_presented_to_a_prompt_or_resource_of_the_same_name_is_refused(
    sealer: StateSealer,
) -> None:
    token = sealer.seal(STATE, **REQUEST)
    for other in ({"prompt": "deploy"}, {"resource": "deploy"}):
        with pytest.raises(InvalidRequestState) as caught:
            sealer.open(token, user="alice", arguments=REQUEST["arguments"], **other)  # type: ignore[arg-type]
        assert caught.value.reason == "wrong_tool"


def test_a_state_retried_with_other_arguments_is_refused(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, **REQUEST)
    assert refusal(sealer, token, arguments={"env": "staging", "replicas": 3}) == "wrong_request"
    assert refusal(sealer, token, arguments={"env": "prod"}) == "wrong_request"
    assert refusal(sealer, token, arguments=None) == "wrong_request"


def test_argument_order_and_number_spelling_do_not_matter(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, **REQUEST)
    assert sealer.open(token, **{**REQUEST, "arguments": {"replicas": 3.0, "env": "prod"}}) == STATE


def test_a_state_minted_by_another_server_is_refused(make_sealer: SealerFactory) -> None:
    token = make_sealer(issuer="https://other.example.com").seal(STATE, **REQUEST)
    assert refusal(make_sealer(), token) == "wrong_issuer"


def test_a_state_signed_with_a_key_not_in_the_ring_is_refused(sealer: StateSealer, clock: Clock) -> None:
    stranger = StateSealer(Keyring.generate(sealer.ring.keys[0].alg), issuer=ISSUER, clock=clock)
    token = stranger.seal(STATE, **REQUEST)
    assert refusal(sealer, token) == "unknown_key"


def test_a_state_without_argument_binding_opens_with_any_arguments(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, user="alice", tool="deploy")
    assert sealer.open(token, **REQUEST) == STATE
    assert sealer.open(token, user="alice", tool="deploy") == STATE


def test_prompt_and_resource_targets_round_trip(sealer: StateSealer) -> None:
    token = sealer.seal(STATE, user="alice", prompt="summarize", arguments={"topic": "q3"})
    assert sealer.open(token, user="alice", prompt="summarize", arguments={"topic": "q3"}) == STATE
    token = sealer.seal(STATE, user="alice", resource="file:///reports/q3.csv")
    assert sealer.open(token, user="alice", resource="file:///reports/q3.csv") == STATE
    with pytest.raises(InvalidRequestState) as caught:
        sealer.open(token, user="alice", resource="file:///reports/q4.csv")
    assert caught.value.reason == "wrong_tool"
