"""The target a state is bound to, as the ``aud`` claim (profile, section 3.5).

A ``requestState`` is only valid on a retry of the request that produced it. The
profile writes that request's target into ``aud`` as ``<method>:<name>``:

=================  ====================  ===============================
MCP request        target                ``aud``
=================  ====================  ===============================
``tools/call``     tool name             ``tools/call:deploy``
``prompts/get``    prompt name           ``prompts/get:summary``
``resources/read`` resource URI          ``resources/read:file:///a.txt``
=================  ====================  ===============================

The method never contains ``:``, so the first ``:`` ends it and two different
targets never share an ``aud``: a state minted for a tool never opens on a prompt
or resource of the same name.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

__all__ = [
    "KINDS",
    "METHODS",
    "TargetKind",
    "audience",
    "audience_of",
    "check_name",
    "given",
    "parse_audience",
    "resolve",
]

#: What a state can be bound to: a tool, a prompt or a resource.
TargetKind: TypeAlias = Literal["tool", "prompt", "resource"]

#: The MCP methods that may answer ``input_required``, by target kind.
METHODS: Final[dict[TargetKind, str]] = {
    "tool": "tools/call",
    "prompt": "prompts/get",
    "resource": "resources/read",
}

#: The target kind of each of those methods (:data:`METHODS` the other way round).
KINDS: Final[dict[str, TargetKind]] = {method: kind for kind, method in METHODS.items()}


def given(tool: object, prompt: object, resource: object, /) -> tuple[TargetKind, Any]:
    """Return ``(kind, name)`` for exactly one of ``tool``, ``prompt`` or ``resource``, name unchecked.

    Positional, in that order: it runs on every ``seal`` and ``open``.

    Raises:
        TypeError: when not exactly one target is given.
    """
    kind: TargetKind
    if prompt is None and resource is None:
        kind, name = "tool", tool
    elif tool is None and resource is None:
        kind, name = "prompt", prompt
    elif tool is None and prompt is None:
        kind, name = "resource", resource
    else:
        name = None
    if name is None:
        raise TypeError("give exactly one target: tool=, prompt= or resource=")
    return kind, name


def check_name(kind: TargetKind, name: object) -> str:
    """Return ``name`` if it is a non-empty string; the messages name the target kind.

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: ``name`` is the empty string.
    """
    if not isinstance(name, str):
        raise TypeError(f"{kind} must be a string, not {type(name).__name__}")
    if not name:
        raise ValueError(f"{kind} must not be empty")
    return name


def resolve(
    *, tool: str | None = None, prompt: str | None = None, resource: str | None = None
) -> tuple[TargetKind, str]:
    """Return ``(kind, name)`` for exactly one of ``tool``, ``prompt`` or ``resource``.

    Raises:
        TypeError: when not exactly one target is given, or it is not a string.
        ValueError: when the target is the empty string.
    """
    kind, name = given(tool, prompt, resource)
    return kind, check_name(kind, name)


def audience(*, tool: str | None = None, prompt: str | None = None, resource: str | None = None) -> str:
    """Return the ``aud`` value for exactly one of ``tool``, ``prompt`` or ``resource``.

    Raises:
        TypeError: when not exactly one target is given, or it is not a string.
        ValueError: when the target is the empty string.
    """
    return audience_of(*resolve(tool=tool, prompt=prompt, resource=resource))


def audience_of(kind: TargetKind, name: str) -> str:
    """The ``aud`` value of a target already resolved (:func:`resolve`): ``<method>:<name>``."""
    return f"{METHODS[kind]}:{name}"


def parse_audience(aud: object) -> tuple[TargetKind, str] | None:
    """``("tool", "deploy")`` for ``"tools/call:deploy"``; ``None`` for any other value.

    The inverse of :func:`audience`: the method ends at the first ``:``, and the
    name after it must not be empty.
    """
    if not isinstance(aud, str):
        return None
    method, colon, name = aud.partition(":")
    kind = KINDS.get(method)
    if kind is None or not colon or not name:
        return None
    return kind, name
