"""Where a :class:`~mrtr_state.StateSealer` finds its keys: a fixed ring, or one that changes.

A sealer takes a :data:`KeyProvider`: a :class:`~mrtr_state.Keyring`, a
:class:`KeySource`, or a function that returns the current
:class:`~mrtr_state.Keyring` (for keys an application manages itself).

A :class:`KeySource` is anything with a ``keys`` property: the current keys, the
signing key first. :class:`~mrtr_state.Keyring` is one (it never changes). The
sources that change, :class:`~mrtr_state.keys.remote_jwks.RemoteJWKS` (a published
JWKS read over HTTPS) and :class:`~mrtr_state.keys.reloading.ReloadingKeyring` (a key
file that is rotated in place), return a new tuple when their keys change; the
sealer notices by identity and rebuilds what it derives from the keys.

A source may also offer a way to look again when a token names a ``kid`` it does
not hold (:class:`RefreshingKeySource`): the sealer then asks it once, and opens
the token again if the keys changed. The source decides how often it really
looks (a cooldown), so tokens with random ``kid`` values cannot make it fetch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Protocol, TypeAlias, runtime_checkable

from mrtr_state.keys.keys import Key, Keyring

__all__ = [
    "KeyProvider",
    "KeySource",
    "RefreshingKeySource",
    "is_key_source",
    "keys_of",
    "refresh_for_unknown_key",
    "refresh_for_unknown_key_async",
]


class KeySource(Protocol):
    """The current keys of a sealer: the first signs, every one verifies.

    ``keys`` must return the same tuple object for as long as the keys stay the
    same, and a new one when they change, and must never raise or block for
    long: it is read on every ``seal`` and ``open``.
    """

    @property
    def keys(self) -> tuple[Key, ...]:
        """The current keys, signing key first (never empty)."""
        ...


@runtime_checkable
class RefreshingKeySource(KeySource, Protocol):
    """A key source that can look for new keys when a token names an unknown ``kid``."""

    def refresh_for_unknown_key(self) -> bool:
        """Look for new keys now, unless the cooldown forbids it; ``True`` if they changed."""
        ...

    async def refresh_for_unknown_key_async(self) -> bool:
        """:meth:`refresh_for_unknown_key` without blocking the event loop."""
        ...


def is_key_source(source: object) -> bool:
    """Whether ``source`` is a :class:`~mrtr_state.Keyring` or has a ``keys`` property.

    Looked up statically: reading a source's ``keys`` may load keys, which a type
    check must not do. A ``keys`` method (a mapping's) does not count.
    """
    if isinstance(source, Keyring):
        return True
    attribute = inspect.getattr_static(source, "keys", None)
    return attribute is not None and not callable(attribute)


#: What a sealer takes its keys from: a ring, a key source, or a function returning the current ring.
#: The function, like a source's ``keys``, is called on every ``seal`` and ``open``: it must be cheap,
#: never block for long, and return the same :class:`~mrtr_state.Keyring` while the keys stay the same.
KeyProvider: TypeAlias = "Keyring | KeySource | Callable[[], Keyring]"


def keys_of(provider: object) -> Callable[[], tuple[Key, ...]]:
    """A function that reads ``provider``'s current keys, signing key first.

    Raises:
        TypeError: ``provider`` is neither a key source nor a function (the
            function's result is checked on each read: anything but a
            :class:`~mrtr_state.Keyring` raises :class:`TypeError` then).
    """
    if is_key_source(provider):
        source: KeySource = provider  # type: ignore[assignment]
        return lambda: source.keys
    if callable(provider):
        function: Callable[[], object] = provider

        def read() -> tuple[Key, ...]:
            ring = function()
            if not isinstance(ring, Keyring):
                raise TypeError(f"the key provider returned a {type(ring).__name__}, not a Keyring")
            return ring.keys

        return read
    raise TypeError(
        "ring must be a Keyring or a key source (or a function returning a Keyring), "
        f"not {type(provider).__name__}"
    )


def refresh_for_unknown_key(source: object) -> bool:
    """Ask ``source`` to look for new keys, if it can; ``True`` if its keys changed."""
    refresh = getattr(source, "refresh_for_unknown_key", None)
    return bool(refresh()) if callable(refresh) else False


async def refresh_for_unknown_key_async(source: object) -> bool:
    """:func:`refresh_for_unknown_key` for async callers."""
    refresh = getattr(source, "refresh_for_unknown_key_async", None)
    return bool(await refresh()) if callable(refresh) else False
