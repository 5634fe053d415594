"""What :class:`~mrtr_state.StateSealer` does around ``seal`` and ``open``, kept out of it.

Three things, as decorators of the sealer's public methods so that the validation
code itself stays as it is:

- the call runs on the sealer of the keys the key source holds now
  (``StateSealer._current``: the sealer itself for a :class:`~mrtr_state.Keyring`);
- a token refused as ``unknown_key`` by a sealer whose key source can look for
  new keys (:class:`~mrtr_state.key_source.RefreshingKeySource`) is opened once
  more if the source found new keys, or if the keys changed meanwhile anyway
  (another thread's look, a background fetch). Refusing ``unknown_key`` happens
  at step 8, before any replay store is touched, so the second attempt is the
  first one that can have an effect. The source's cooldown bounds how often it
  looks;
- every outcome is reported to the sealer's metrics (:mod:`mrtr_state.metrics`):
  only the target method, the reason code and the outcome, never a value.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from mrtr_state.binding import Binding
from mrtr_state.errors import InvalidRequestState
from mrtr_state.key_source import KeySource, refresh_for_unknown_key, refresh_for_unknown_key_async
from mrtr_state.metrics import StateMetrics, record

__all__ = ["observed_open", "observed_open_async", "observed_seal"]

logger = logging.getLogger("mrtr_state.sealer")

T = TypeVar("T")


class _Observed(Protocol):
    @property
    def ring(self) -> KeySource: ...

    @property
    def metrics(self) -> StateMetrics | None: ...

    def _current(self) -> Any: ...


def _refused(sealer: _Observed, binding: Binding, refusal: InvalidRequestState) -> None:
    metrics = sealer.metrics
    if metrics is None:
        return
    method = binding.method
    record(metrics, "open", method=method, outcome="refused")
    record(metrics, "refusal", method=method, reason=refusal.reason)
    if refusal.reason == "store_unavailable":
        record(metrics, "store_outage", method=method)


def _accepted(sealer: _Observed, binding: Binding, options: Mapping[str, Any]) -> None:
    metrics = sealer.metrics
    if metrics is None:
        return
    method = binding.method
    record(metrics, "open", method=method, outcome="accepted")
    if options.get("consume"):
        record(metrics, "redemption", method=method)


def _safe_refresh(sealer: _Observed) -> bool:
    try:
        return refresh_for_unknown_key(sealer.ring)
    except Exception:  # a key source that raises must not turn a refusal into a crash
        logger.exception("the key source raised while looking for a new key")
        return False


def observed_seal(seal: Callable[..., str]) -> Callable[..., str]:
    """Count every token ``seal`` mints, by target method."""

    @functools.wraps(seal)
    def wrapper(self: _Observed, state: Any, binding: Binding) -> str:
        token = seal(self._current(), state, binding)
        if self.metrics is not None:
            record(self.metrics, "seal", method=binding.method)
        return token

    return wrapper


def observed_open(open_: Callable[..., T]) -> Callable[..., T]:
    """Open again once after new keys were found for ``unknown_key``; count the outcome."""

    @functools.wraps(open_)
    def wrapper(self: _Observed, token: str, binding: Binding, **options: Any) -> T:
        try:
            generation = self._current()
            try:
                state = open_(generation, token, binding, **options)
            except InvalidRequestState as refusal:
                if refusal.reason != "unknown_key":
                    raise
                if not _safe_refresh(self) and self._current() is generation:
                    raise
                state = open_(self._current(), token, binding, **options)
        except InvalidRequestState as refusal:
            _refused(self, binding, refusal)
            raise
        if self.metrics is not None:
            _accepted(self, binding, options)
        return state

    return wrapper


def observed_open_async(open_async: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """:func:`observed_open` for ``open_async``: the key source looks without blocking the loop."""

    @functools.wraps(open_async)
    async def wrapper(self: _Observed, token: str, binding: Binding, **options: Any) -> T:
        try:
            generation = self._current()
            try:
                state = await open_async(generation, token, binding, **options)
            except InvalidRequestState as refusal:
                if refusal.reason != "unknown_key":
                    raise
                try:
                    changed = await refresh_for_unknown_key_async(self.ring)
                except Exception:
                    logger.exception("the key source raised while looking for a new key")
                    changed = False
                if not changed and self._current() is generation:
                    raise
                state = await open_async(self._current(), token, binding, **options)
        except InvalidRequestState as refusal:
            _refused(self, binding, refusal)
            raise
        if self.metrics is not None:
            _accepted(self, binding, options)
        return state

    return wrapper
