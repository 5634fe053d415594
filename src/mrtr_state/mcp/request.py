"""What a ``requestState`` is bound to in an MCP request: its target and arguments.

The profile writes the target into ``aud`` (``tools/call:<name>``,
``prompts/get:<name>``, ``resources/read:<uri>``) and the digest of the request's
``arguments`` object into ``args_sha256``. This module reads both from a request's
raw ``params``, exactly as they came off the wire, so the minting round and the
retry bind the same values:

=================  ===============  ==================================
method             target           arguments bound
=================  ===============  ==================================
``tools/call``     ``params.name``  ``params.arguments`` (absent: {})
``prompts/get``    ``params.name``  ``params.arguments`` (absent: {})
``resources/read`` ``params.uri``   none: the URI is the whole request
=================  ===============  ==================================

Arguments that are present but not an object (``null``, an array, a string, a
number, a boolean) are unbindable (profile, sections 3.4 and 8.2): no state is
sealed for them, and a state bound to arguments is refused ``wrong_request``.

It knows nothing of the SDK; malformed params raise :class:`ValueError` with a
message that is safe to show the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mrtr_state.binding.binding import Binding
from mrtr_state.binding.canonical import JSON_NULL
from mrtr_state.binding.target import METHODS, TargetKind, audience_of

__all__ = ["TARGET_METHODS", "Target", "target_of", "target_parts"]

#: The MCP methods whose results may be ``input_required`` (:data:`mrtr_state.binding.target.METHODS`),
#: with the parameter naming their target and the keyword of :meth:`~mrtr_state.StateSealer.seal`.
TARGET_METHODS: Final[Mapping[str, tuple[str, TargetKind]]] = {
    method: ("uri" if kind == "resource" else "name", kind) for kind, method in METHODS.items()
}


@dataclass(frozen=True)
class Target:
    """The request a ``requestState`` is minted for or presented on.

    ``kind`` is ``"tool"``, ``"prompt"`` or ``"resource"``; ``arguments`` is
    ``None`` for ``resources/read``, which has none, and otherwise the value the
    request carried (``{}`` when absent, :data:`~mrtr_state.binding.canonical.JSON_NULL`
    for ``null``), which is unbindable unless it is an object.
    """

    method: str
    kind: TargetKind
    name: str
    arguments: Any

    @property
    def binding(self) -> dict[str, str]:
        """The target as keyword arguments of ``seal`` and ``open`` (``{"tool": name}``, ...)."""
        return {self.kind: self.name}

    @property
    def aud(self) -> str:
        """The profile's ``aud`` value for this target."""
        return audience_of(self.kind, self.name)

    def bound_to(self, user: str) -> Binding:
        """The :class:`~mrtr_state.binding.Binding` of this request for ``user``."""
        return Binding(user, self.kind, self.name, self.arguments)


def target_of(method: str, params: Mapping[str, Any] | None) -> Target:
    """Read the target and arguments of one request from its raw ``params``.

    Raises:
        KeyError: ``method`` is not one of :data:`TARGET_METHODS`.
        ValueError: the target is missing or not a non-empty string.
    """
    kind, name, arguments = target_parts(method, params)
    return Target(method, kind, name, arguments)


def target_parts(method: str, params: Mapping[str, Any] | None) -> tuple[TargetKind, str, Any]:
    """:func:`target_of` as ``(kind, name, arguments)``: what a :class:`Binding` is made of.

    The boundary binds every request it serves this way, without a :class:`Target` in between.

    Raises:
        KeyError: ``method`` is not one of :data:`TARGET_METHODS`.
        ValueError: the target is missing or not a non-empty string.
    """
    field, kind = TARGET_METHODS[method]
    raw: Mapping[str, Any] = params or {}
    name = raw.get(field)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{method} needs a non-empty string {field!r}")
    if kind == "resource":
        return kind, name, None
    # Profile 8.2: absent arguments are {}; present ones are bound as they are, and
    # only an object is bindable ("arguments": null is not {}).
    if "arguments" not in raw:
        return kind, name, {}
    arguments = raw["arguments"]
    return kind, name, JSON_NULL if arguments is None else arguments
