"""What a request is, as a ``requestState`` is bound to it: user, target and arguments.

A token binds the user (``sub``), the target (``aud``, :mod:`mrtr_state.binding.target`)
and, optionally, the digest of the request's arguments (``args_sha256``, profile
section 3.4). :class:`Binding` holds all of it for one request, checked once when
it is made, and computes the argument digest at most once, when it is first
needed: a seal needs it, an open needs it only when the token carries a digest,
and an MCP round that opens and then seals again uses the same one.

Arguments that have no digest (unbindable: not an object, not I-JSON, or a number
whose value is an integer beyond 2**53 - 1) are not an error when the binding is made: the
problem is recorded, a seal raises it, and an open refuses with ``wrong_request``
only if the token carries a digest (they match none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from mrtr_state.binding.canonical import arguments_digest
from mrtr_state.binding.target import METHODS, TargetKind, check_name, given

__all__ = ["Binding"]

# (digest, exception type, message) of a binding's arguments: computed once, on first use.
_Digest: TypeAlias = "tuple[str | None, type[Exception] | None, str]"


class Binding:
    """One request a ``requestState`` is sealed for or opened on.

    Make it with :meth:`of` (the keywords of :meth:`~mrtr_state.StateSealer.seal`)
    or directly from a resolved target. ``arguments`` is the request's arguments
    object, or ``None`` for a request without a binding of its arguments (a
    resource read has none). Any other value (a list, a string, a number, a
    boolean, or :data:`~mrtr_state.binding.canonical.JSON_NULL` for arguments sent as
    ``null``) is arguments that are present but not an object: unbindable
    (profile, sections 3.4 and 8.2), so a seal refuses them and an open matches
    them to no digest. ``aud`` is the profile's target value. A binding is
    immutable, and equal only to itself.

    Raises (when made):
        TypeError: ``user`` or the target name is not a string, or ``kind`` is
            not a target kind.
        ValueError: ``user`` or the target name is empty.
    """

    # Read-only properties over private slots: a binding is made on every seal and open
    # (twice per MCP round), and a plain slot store costs a fraction of the
    # object.__setattr__ call that a __setattr__ refusing every write would need
    # (11.4k instructions to make one before, docs/benchmarks.md).
    __slots__ = ("_arguments", "_aud", "_digest", "_kind", "_name", "_user")

    _user: str
    _kind: TargetKind
    _name: str
    _arguments: Any
    _aud: str
    _digest: _Digest | None

    def __init__(self, user: str, kind: TargetKind, name: str, arguments: Any = None) -> None:
        method = METHODS.get(kind) if isinstance(kind, str) else None
        if method is None:
            raise TypeError(f"kind must be one of {', '.join(METHODS)}, not {kind!r}")
        check_name(kind, name)  # the target before the user, as seal always checked them
        if not isinstance(user, str):
            raise TypeError(f"user must be a string, not {type(user).__name__}")
        if not user:
            raise ValueError("user must not be empty")
        self._user = user
        self._kind = kind
        self._name = name
        self._arguments = arguments
        self._aud = f"{method}:{name}"  # audience_of, with the method already looked up
        self._digest = None

    @property
    def user(self) -> str:
        """The user (``sub``) the state is bound to."""
        return self._user

    @property
    def kind(self) -> TargetKind:
        """The target kind: ``"tool"``, ``"prompt"`` or ``"resource"``."""
        return self._kind

    @property
    def name(self) -> str:
        """The target: a tool or prompt name, or a resource URI."""
        return self._name

    @property
    def arguments(self) -> Any:
        """The request's arguments as given, or ``None`` for a request without them bound."""
        return self._arguments

    @property
    def aud(self) -> str:
        """The profile's ``aud`` value of the target (``tools/call:<name>``, ...)."""
        return self._aud

    def __repr__(self) -> str:
        return (
            f"Binding(user={self.user!r}, kind={self.kind!r}, name={self.name!r}, "
            f"arguments={self.arguments!r}, aud={self.aud!r})"
        )

    @classmethod
    def of(
        cls,
        *,
        user: str,
        tool: str | None = None,
        prompt: str | None = None,
        resource: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> Binding:
        """The binding of a request given as ``seal``'s keywords: exactly one target.

        The target is checked before the user, as :meth:`~mrtr_state.StateSealer.seal`
        always has.
        """
        kind, name = given(tool, prompt, resource)
        return cls(user, kind, name, arguments)

    @property
    def method(self) -> str:
        """The MCP method of the target (``tools/call``, ``prompts/get``, ``resources/read``)."""
        return METHODS[self._kind]

    def _digest_outcome(self) -> _Digest:
        # The fields, not their properties: each property read is a Python call.
        outcome = self._digest
        if outcome is None:
            arguments = self._arguments
            if arguments is None:
                outcome = (None, None, "")
            else:
                try:
                    outcome = (arguments_digest(arguments), None, "")
                except (TypeError, ValueError) as exc:  # fixed sentences that name no value
                    outcome = (None, TypeError if isinstance(exc, TypeError) else ValueError, str(exc))
            self._digest = outcome
        return outcome

    @property
    def digest(self) -> str | None:
        """The argument digest (``args_sha256``), or ``None`` without arguments.

        Raises:
            TypeError: the arguments are not a mapping of JSON values.
            ValueError: the arguments are unbindable (profile, section 3.4).
        """
        digest, error, message = self._digest_outcome()
        if error is not None:
            raise error(message)
        return digest

    @property
    def digest_or_none(self) -> str | None:
        """The argument digest, or ``None`` without arguments or for unbindable ones (they match none)."""
        return self._digest_outcome()[0]

    @property
    def problem(self) -> str | None:
        """Why the arguments have no digest (a fixed sentence that names no value), or ``None``."""
        _, error, message = self._digest_outcome()
        return None if error is None else message
