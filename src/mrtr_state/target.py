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

from typing import Final

__all__ = ["METHODS", "audience"]

#: The MCP methods that may answer ``input_required``, by target kind.
METHODS: Final[dict[str, str]] = {
    "tool": "tools/call",
    "prompt": "prompts/get",
    "resource": "resources/read",
}


def audience(*, tool: str | None = None, prompt: str | None = None, resource: str | None = None) -> str:
    """Return the ``aud`` value for exactly one of ``tool``, ``prompt`` or ``resource``.

    Raises:
        TypeError: when not exactly one target is given, or it is not a string.
        ValueError: when the target is the empty string.
    """
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
    if not isinstance(name, str):
        raise TypeError(f"{kind} must be a string, not {type(name).__name__}")
    if not name:
        raise ValueError(f"{kind} must not be empty")
    return f"{METHODS[kind]}:{name}"
