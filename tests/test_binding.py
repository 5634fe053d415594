"""One value for what a request is: user, target, aud and the argument digest computed once."""

from __future__ import annotations

from typing import Any

import pytest

from mrtr_state import StateSealer, arguments_digest, audience
from mrtr_state.binding import Binding
from mrtr_state.binding.target import parse_audience


class CountingArguments(dict[str, Any]):
    """A mapping that counts how often the digest walks its members."""

    reads = 0

    def items(self) -> Any:
        CountingArguments.reads += 1
        return super().items()


@pytest.mark.parametrize(
    ("target", "aud"),
    [
        ({"tool": "deploy"}, "tools/call:deploy"),
        ({"prompt": "summary"}, "prompts/get:summary"),
        ({"resource": "file:///a:b.txt"}, "resources/read:file:///a:b.txt"),
    ],
)
def test_the_binding_writes_aud_as_audience_does_and_parse_audience_reads_it_back(
    target: dict[str, str], aud: str
) -> None:
    binding = Binding.of(user="alice", **target)
    assert binding.aud == aud == audience(**target)
    assert parse_audience(aud) == (binding.kind, binding.name)


@pytest.mark.parametrize("aud", ["tools/call", "tools/call:", "deploy", "tools/list:x", ":x", 7, None])
def test_parse_audience_refuses_anything_audience_never_writes(aud: object) -> None:
    assert parse_audience(aud) is None


def test_the_target_is_checked_before_the_user_as_seal_always_did() -> None:
    with pytest.raises(TypeError, match="exactly one target"):
        Binding.of(user="", tool="a", prompt="b")
    with pytest.raises(ValueError, match="user must not be empty"):
        Binding.of(user="", tool="a")
    with pytest.raises(TypeError, match="user must be a string"):
        Binding.of(user=7, tool="a")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["user", "kind", "name", "arguments", "aud", "digest", "method", "problem"])
def test_a_binding_refuses_every_write_to_what_it_shows(name: str) -> None:
    binding = Binding("alice", "tool", "deploy", {"env": "prod"})
    shown = getattr(binding, name)
    with pytest.raises(AttributeError):
        setattr(binding, name, "mallory")
    with pytest.raises(AttributeError):
        delattr(binding, name)
    assert getattr(binding, name) == shown


def test_a_binding_takes_no_new_attribute_and_shows_what_it_was_made_with() -> None:
    binding = Binding("alice", "prompt", "summary", {"t": "q3"})
    with pytest.raises(AttributeError):
        binding.extra = 1  # type: ignore[attr-defined]
    assert (binding.user, binding.kind, binding.name, binding.arguments, binding.aud) == (
        "alice",
        "prompt",
        "summary",
        {"t": "q3"},
        "prompts/get:summary",
    )
    assert repr(binding) == (
        "Binding(user='alice', kind='prompt', name='summary', arguments={'t': 'q3'}, "
        "aud='prompts/get:summary')"
    )


def test_the_argument_digest_is_computed_at_most_once_per_request(sealer: StateSealer) -> None:
    arguments = CountingArguments(env="prod")
    CountingArguments.reads = 0
    binding = Binding.of(user="alice", tool="deploy", arguments=arguments)
    token = sealer.seal_bound({"step": 1}, binding)
    assert sealer.open_bound(token, binding) == {"step": 1}
    sealer.seal_bound({"step": 2}, binding)
    assert CountingArguments.reads == 1
    assert binding.digest == arguments_digest({"env": "prod"})


def test_unbindable_arguments_are_recorded_when_bound_and_raised_only_when_sealed(
    sealer: StateSealer,
) -> None:
    binding = Binding.of(user="alice", tool="deploy", arguments={"id": 2**60})
    assert binding.digest_or_none is None
    assert binding.problem is not None
    assert "as strings" in binding.problem
    with pytest.raises(ValueError, match="as strings"):
        sealer.seal_bound({"step": 1}, binding)


def test_a_token_sealed_from_keywords_opens_with_the_same_binding(sealer: StateSealer) -> None:
    token = sealer.seal({"n": 1}, user="alice", prompt="summary", arguments={"t": "q3"})
    assert sealer.open_bound(token, Binding("alice", "prompt", "summary", {"t": "q3"})) == {"n": 1}
