"""Counters of seals, opens, refusals, redemptions and store outages.

A sealer made with ``StateSealer(..., metrics=...)`` reports every outcome to a
:class:`StateMetrics`: a callable taking an event name and its attributes. Two
come with the library:

- :class:`OpenTelemetryMetrics`: OpenTelemetry counters (the ``opentelemetry-api``
  package, which the MCP SDK already depends on), exported by whatever meter
  provider the application configured (Prometheus, OTLP, ...);
- any plain function ``callback(event, attributes)``, for a server without
  OpenTelemetry (:func:`default_metrics` picks OpenTelemetry when it is
  installed and the callback otherwise).

The events and their attributes are fixed (:data:`EVENTS`). An attribute value
is always one of a small, fixed set: the target method (``tools/call``,
``prompts/get``, ``resources/read``), a reason code of the profile, an outcome
word, or the kind of key source. Never a token, a claim value (user, tool name,
``jti``, ...), a ``kid`` or key material: the counters are safe to export and
cheap to store (a bounded number of series).

A metrics callable that raises never breaks a seal or an open: the error is
logged once and the counter is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

__all__ = [
    "EVENTS",
    "INSTRUMENTS",
    "OpenTelemetryMetrics",
    "StateMetrics",
    "default_metrics",
    "record",
]

logger = logging.getLogger(__name__)

#: Every event a sealer or key source reports, with the attribute names it carries.
#:
#: - ``seal``: a token was minted (``method``).
#: - ``open``: a token was presented (``method``; ``outcome`` ``accepted`` or ``refused``).
#: - ``refusal``: a token was refused (``method``; ``reason``, a code of the profile).
#: - ``redemption``: a single-use token was redeemed for the first time (``method``).
#: - ``store_outage``: the replay store could not answer, so the token was refused
#:   as ``store_unavailable`` (``method``).
#: - ``key_refresh``: a key source looked for new keys (``source``: ``remote_jwks`` or
#:   ``key_file``; ``outcome``: ``updated``, ``unchanged`` or ``failed``).
EVENTS: Final[Mapping[str, tuple[str, ...]]] = {
    "seal": ("method",),
    "open": ("method", "outcome"),
    "refusal": ("method", "reason"),
    "redemption": ("method",),
    "store_outage": ("method",),
    "key_refresh": ("source", "outcome"),
}

#: The OpenTelemetry counter of each event: name, unit, description. A Prometheus
#: exporter shows ``mrtr_state.refusals`` as ``mrtr_state_refusals_total``.
INSTRUMENTS: Final[Mapping[str, tuple[str, str, str]]] = {
    "seal": ("mrtr_state.seals", "{token}", "requestState tokens minted"),
    "open": ("mrtr_state.opens", "{token}", "requestState tokens presented, by outcome"),
    "refusal": ("mrtr_state.refusals", "{token}", "requestState tokens refused, by reason code"),
    "redemption": ("mrtr_state.redemptions", "{token}", "single-use requestState tokens redeemed"),
    "store_outage": (
        "mrtr_state.store_outages",
        "{token}",
        "requestState tokens refused because the replay store could not answer",
    ),
    "key_refresh": ("mrtr_state.key_refreshes", "{refresh}", "key source refreshes, by outcome"),
}


class StateMetrics(Protocol):
    """Receives one event: its name (a key of :data:`EVENTS`) and its attributes."""

    def __call__(self, event: str, attributes: Mapping[str, str], /) -> None:
        """Count one ``event``; ``attributes`` hold only the names :data:`EVENTS` lists."""
        ...


class OpenTelemetryMetrics:
    """:class:`StateMetrics` as OpenTelemetry counters (:data:`INSTRUMENTS`).

    Args:
        meter_provider: where the counters are made; by default the global one
            (``opentelemetry.metrics.get_meter_provider()``), which the
            application configures with its exporter.

    Raises:
        ImportError: ``opentelemetry-api`` is not installed (it comes with
            ``pip install 'mrtr-state[mcp]'``).
    """

    __slots__ = ("_counters",)

    def __init__(self, *, meter_provider: Any = None) -> None:
        try:
            from opentelemetry import metrics
        except ImportError as exc:
            raise ImportError(
                "OpenTelemetryMetrics needs the opentelemetry-api package "
                "(pip install opentelemetry-api, or mrtr-state[mcp]); or give StateSealer(metrics=) "
                "a plain function"
            ) from exc
        from mrtr_state import __version__

        provider = metrics.get_meter_provider() if meter_provider is None else meter_provider
        meter = provider.get_meter("mrtr_state", __version__)
        self._counters = {
            event: meter.create_counter(name, unit=unit, description=description)
            for event, (name, unit, description) in INSTRUMENTS.items()
        }

    def __repr__(self) -> str:
        return "OpenTelemetryMetrics()"

    def __call__(self, event: str, attributes: Mapping[str, str], /) -> None:
        """Add 1 to the counter of ``event`` with ``attributes``."""
        self._counters[event].add(1, dict(attributes))


def default_metrics(
    callback: Callable[[str, Mapping[str, str]], None] | None = None,
) -> StateMetrics | None:
    """OpenTelemetry counters when ``opentelemetry-api`` is installed, else ``callback``."""
    try:
        return OpenTelemetryMetrics()
    except ImportError:
        return callback


_FAILED: set[int] = set()


def record(metrics: StateMetrics | None, event: str, **attributes: str) -> None:
    """Report ``event`` to ``metrics`` (if any); a failing callable is logged once, never raised."""
    if metrics is None:
        return
    try:
        metrics(event, attributes)
    except Exception:  # a counter must never break a seal or an open
        if id(metrics) not in _FAILED:
            _FAILED.add(id(metrics))
            logger.exception("the metrics callable %r raised on %r; counters are being lost", metrics, event)
