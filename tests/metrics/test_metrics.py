"""Refusal metrics: read back through the OpenTelemetry SDK's in-memory reader, and a plain callback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from mrtr_state import (
    InvalidRequestState,
    Keyring,
    KeyringError,
    MemoryReplayStore,
    ReplayStoreError,
    StateSealer,
)
from mrtr_state.keys.reloading import ReloadingKeyring
from mrtr_state.metrics import EVENTS, INSTRUMENTS, OpenTelemetryMetrics, default_metrics
from tests.conftest import ISSUER, Clock

ARGS = {"repo": "web", "branch": "old"}
Point = tuple[str, frozenset[tuple[str, Any]]]


class Telemetry:
    """An SDK meter provider whose counters the test reads back in memory."""

    def __init__(self) -> None:
        self.reader = InMemoryMetricReader()
        self.provider = MeterProvider(metric_readers=[self.reader])
        self.metrics = OpenTelemetryMetrics(meter_provider=self.provider)

    def points(self) -> dict[Point, int]:
        """Every counter value: (instrument name, attributes) -> count."""
        data = self.reader.get_metrics_data()
        found: dict[Point, int] = {}
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                assert scope.scope.name == "mrtr_state"
                for metric in scope.metrics:
                    for point in metric.data.data_points:  # type: ignore[union-attr]
                        found[(metric.name, frozenset(point.attributes.items()))] = point.value  # type: ignore[union-attr]
        return found


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    running = Telemetry()
    yield running
    running.provider.shutdown()


def point(name: str, **attributes: str) -> Point:
    return name, frozenset(attributes.items())


class DownStore:
    """A replay store that cannot be reached."""

    def redeem(self, key: str, *, expires_at: int) -> bool:
        raise ReplayStoreError("the replay store is unreachable")


def test_refusals_are_counted_by_reason_and_method_through_opentelemetry(
    telemetry: Telemetry, clock: Clock
) -> None:
    ring = Keyring.generate("HS256")
    metrics = telemetry.metrics
    sealer = StateSealer(
        ring, issuer=ISSUER, clock=clock, metrics=metrics, replay_store=MemoryReplayStore(clock=clock)
    )
    token = sealer.seal({"head": "abc"}, user="alice", tool="delete_branch", arguments=ARGS)
    prompt = sealer.seal({}, user="alice", prompt="summary")
    assert sealer.open(token, user="alice", tool="delete_branch", arguments=ARGS) == {"head": "abc"}
    assert sealer.open(token, user="alice", tool="delete_branch", arguments=ARGS, consume=True)
    refused: list[dict[str, Any]] = [
        {"user": "bob", "tool": "delete_branch", "arguments": ARGS},
        {"user": "bob", "tool": "delete_branch", "arguments": ARGS},
        {"user": "alice", "tool": "delete_branch", "arguments": {**ARGS, "branch": "main"}},
        {"user": "alice", "tool": "delete_branch", "arguments": ARGS, "consume": True},
    ]
    for attempt in refused:
        with pytest.raises(InvalidRequestState):
            sealer.open(token, **attempt)
    with pytest.raises(InvalidRequestState):
        sealer.open(token[:-2] + "AA", user="alice", tool="delete_branch", arguments=ARGS)
    with pytest.raises(InvalidRequestState):
        sealer.open(prompt, user="bob", prompt="summary")
    down = StateSealer(ring, issuer=ISSUER, clock=clock, metrics=metrics, replay_store=DownStore())
    with pytest.raises(InvalidRequestState):
        down.open(token, user="alice", tool="delete_branch", arguments=ARGS, consume=True)

    call, get = "tools/call", "prompts/get"
    assert telemetry.points() == {
        point("mrtr_state.seals", method=call): 1,
        point("mrtr_state.seals", method=get): 1,
        point("mrtr_state.opens", method=call, outcome="accepted"): 2,
        point("mrtr_state.opens", method=call, outcome="refused"): 6,
        point("mrtr_state.opens", method=get, outcome="refused"): 1,
        point("mrtr_state.refusals", method=call, reason="wrong_user"): 2,
        point("mrtr_state.refusals", method=call, reason="wrong_request"): 1,
        point("mrtr_state.refusals", method=call, reason="replayed"): 1,
        point("mrtr_state.refusals", method=call, reason="bad_signature"): 1,
        point("mrtr_state.refusals", method=call, reason="store_unavailable"): 1,
        point("mrtr_state.refusals", method=get, reason="wrong_user"): 1,
        point("mrtr_state.redemptions", method=call): 1,
        point("mrtr_state.store_outages", method=call): 1,
    }


def test_async_opens_are_counted_the_same_way(telemetry: Telemetry, clock: Clock) -> None:
    sealer = StateSealer(Keyring.generate("EdDSA"), issuer=ISSUER, clock=clock, metrics=telemetry.metrics)
    token = sealer.seal({}, user="alice", resource="file:///a")

    async def run() -> None:
        await sealer.open_async(token, user="alice", resource="file:///a")
        clock.advance(601)
        with pytest.raises(InvalidRequestState):
            await sealer.open_async(token, user="alice", resource="file:///a")

    asyncio.run(run())
    found = telemetry.points()
    assert found[point("mrtr_state.opens", method="resources/read", outcome="accepted")] == 1
    assert found[point("mrtr_state.refusals", method="resources/read", reason="expired")] == 1


def test_no_label_ever_holds_a_token_a_claim_value_or_a_key(telemetry: Telemetry, clock: Clock) -> None:
    ring = Keyring.generate("HS256")
    sealer = StateSealer(ring, issuer=ISSUER, clock=clock, metrics=telemetry.metrics)
    token = sealer.seal({"secret-ish": "s3"}, user="user-7f3a", tool="tool-9c1e", arguments={"x": "arg-55d0"})
    for user in ("user-7f3a", "other-user-2b"):
        with contextlib.suppress(InvalidRequestState):
            sealer.open(token, user=user, tool="tool-9c1e", arguments={"x": "arg-55d0"})
    allowed = {"tools/call", "accepted", "refused", "wrong_user"}
    values = {value for _, attributes in telemetry.points() for _, value in attributes}
    assert values <= allowed
    for name, attributes in telemetry.points():
        event = next(e for e, (instrument, _, _) in INSTRUMENTS.items() if instrument == name)
        assert {label for label, _ in attributes} == set(EVENTS[event])


def test_a_plain_callback_gets_the_same_events() -> None:
    seen: list[tuple[str, dict[str, str]]] = []

    def callback(event: str, attributes: Mapping[str, str]) -> None:
        seen.append((event, dict(attributes)))

    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, metrics=callback)
    token = sealer.seal({}, user="alice", tool="deploy")
    with pytest.raises(InvalidRequestState):
        sealer.open(token, user="bob", tool="deploy")
    assert seen == [
        ("seal", {"method": "tools/call"}),
        ("open", {"method": "tools/call", "outcome": "refused"}),
        ("refusal", {"method": "tools/call", "reason": "wrong_user"}),
    ]


def test_a_metrics_callback_that_raises_never_breaks_an_open(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: str, attributes: Mapping[str, str]) -> None:
        raise RuntimeError("exporter down")

    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, metrics=broken)
    with caplog.at_level(logging.ERROR, logger="mrtr_state.metrics"):
        token = sealer.seal({}, user="alice", tool="deploy")
        assert sealer.open(token, user="alice", tool="deploy") == {}
        with pytest.raises(InvalidRequestState) as refused:
            sealer.open(token, user="bob", tool="deploy")
    assert refused.value.reason == "wrong_user"
    assert len([r for r in caplog.records if "metrics callable" in r.getMessage()]) == 1


def test_default_metrics_is_opentelemetry_when_it_is_installed() -> None:
    assert isinstance(default_metrics(), OpenTelemetryMetrics)


def test_without_opentelemetry_default_metrics_is_the_callback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import opentelemetry -> ImportError

    def callback(event: str, attributes: Mapping[str, str]) -> None:
        pass

    assert default_metrics(callback) is callback
    assert default_metrics() is None
    with pytest.raises(ImportError, match="opentelemetry-api"):
        OpenTelemetryMetrics()


def test_metrics_must_be_callable() -> None:
    with pytest.raises(TypeError, match="metrics must be a callable"):
        StateSealer(Keyring.generate("HS256"), issuer=ISSUER, metrics="prometheus")  # type: ignore[arg-type]


def test_key_sources_count_their_refreshes(telemetry: Telemetry, tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(Keyring.generate("HS256").private_jwks()), encoding="utf-8")
    source = ReloadingKeyring.from_file(path, metrics=telemetry.metrics)
    path.write_text(json.dumps(Keyring.generate("HS256").private_jwks()), encoding="utf-8")
    assert source.reload() is True
    assert source.reload() is False
    path.write_text("broken", encoding="utf-8")
    with pytest.raises(KeyringError):
        source.reload()
    assert telemetry.points() == {
        point("mrtr_state.key_refreshes", source="key_file", outcome="updated"): 1,
        point("mrtr_state.key_refreshes", source="key_file", outcome="unchanged"): 1,
        point("mrtr_state.key_refreshes", source="key_file", outcome="failed"): 1,
    }


def test_the_events_and_instruments_are_those_of_the_one_contract_file() -> None:
    """spec/metrics.json is the counters contract every language checks its instruments against."""
    contract = json.loads((Path(__file__).resolve().parents[2] / "spec" / "metrics.json").read_text())
    assert contract["scope"] == "mrtr_state"
    assert set(EVENTS) == set(contract["events"])
    for event, spec in contract["events"].items():
        assert INSTRUMENTS[event] == (spec["instrument"], spec["unit"], spec["description"])
        assert EVENTS[event] == tuple(spec["attributes"])
        for values in spec["attributes"].values():
            assert values in contract["attributes"]
    reasons = set(contract["attributes"]["reason"])
    profile = (Path(__file__).resolve().parents[2] / "spec" / "profile.md").read_text()
    table = profile.split("## 6. Reason codes", 1)[1].split("## 7. Keys", 1)[0]
    assert reasons == {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
