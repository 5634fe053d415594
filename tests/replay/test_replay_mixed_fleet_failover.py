"""A mixed fleet under a Redis Cluster failover (issues 31, 34): every language's store, one cluster.

One Redis Cluster (three primaries, three replicas, ``cluster-node-timeout 1000``) from the harness;
five long-lived redeemers, each with a Cluster store that waits for one replica (``WAIT 1``): Python's
in this process, npm's ``typescript/runtimes/redeem-lines.mjs`` (the built package), Go's
``go/internal/cmd/redeemlines``, Java's ``RedeemLines`` (run from the built classpath in Java's
source-file mode) and Rust's ``mrtr-state-redeem-lines`` (``cargo build``, into ``rust/target`` as
scripts/check-rust builds). Each jti is offered to all five at about the same moment, one every ``PACE_S`` per
language; a primary (never the seed node Java's store starts from) is killed with SIGKILL mid-run and
never restarted. Then:

- no jti is accepted twice across the fleet (``WAIT 1`` on every store);
- no jti's first redemption is refused as ``replayed``: a jti answered ``replayed`` was accepted by a
  store or met an error (an attempt whose answer was an error may have recorded it, which fails closed);
- a jti that met no error anywhere was accepted exactly once;
- each language's store serves again within ``RECOVERY_BOUND_S`` of the kill: it reaches the promoted
  primary, and it refuses no jti of the other primaries' slots after that bound.

"Reaches the promoted primary" is measured with probe keys in the killed primary's slots, each offered
to one language only, one every ``PROBE_EVERY_S`` from the kill until it served: a probe served when it
was accepted or when its key is on the promoted replica afterwards (its SET reached the new primary).
With ``WAIT 1`` the promoted replica, which has no replica of its own, cannot confirm a write, so every
store refuses those slots ``store_unavailable`` (fail closed) until a replica joins it. Only one in
``VICTIM_SHARE`` of the killed primary's jtis is offered, as each costs a WAIT timeout after the kill.
The run ends ``AFTER_RECOVERY_S`` after the last store served again. Each language's figures, and its
refusals by cause, are printed (``pytest -s``); docs/operations.md has them.

The builds are each language's own and cheap when already done: ``go build`` (cached), ``npm ci`` and
``npm run build`` only when ``typescript/dist`` is missing or older than the sources, Maven only when
``java/target`` lacks the classes or their classpath (or they are older than the sources), ``cargo build``
(with every feature, as scripts/check-rust builds, so nothing is rebuilt after it). With the builds
done, the test takes 23 to 44 s on two shared cores (9 to 15 s to start the cluster and the five stores, the
run about 11 s); a missing tool skips, or fails under CI=true.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from tests.ci import missing_tool
from tests.interop.harness import ROOT
from tests.replay.line_redeemer import LineRedeemer
from tests.replay.redis_harness import RedisClusterDeployment, RedisServer, require_redis_client
from tests.replay.rust_redeemer import rust_redeemer_command

require_redis_client()

import redis  # noqa: E402
from redis.crc import key_slot  # noqa: E402

from mrtr_state import ReplayStoreError  # noqa: E402
from mrtr_state.replay import replay_key  # noqa: E402
from mrtr_state.replay.replay_redis import RedisReplayStore  # noqa: E402

ISSUER = "https://mcp.example.com"
LANGUAGES = ("python", "npm", "go", "java", "rust")
#: The most any language's store may take, from the kill, to serve again. Measured on two shared cores
#: (docs/operations.md): Python 2.5 to 3.1 s, Go 2.6 to 3.4 s, Java 2.6 to 3.9 s (thirteen runs), npm 2.7 to
#: 4.0 s (four runs), Rust 2.6 to 3.2 s (six runs); the bound leaves room for a loaded CI machine.
RECOVERY_BOUND_S = 15.0
#: Every store: the command timeout, and WAIT 1 with its own (shorter) timeout.
TIMEOUT_MS = 500
WAIT_TIMEOUT_MS = 100
#: One jti per language every PACE_S (all of them offered it at about the same moment).
PACE_S = 0.02
#: The fleet runs this long before the kill, and this long after the last store served again.
BEFORE_KILL_S = 2.0
AFTER_RECOVERY_S = 2.0
#: One in this many of the killed primary's jtis is offered (each costs a WAIT timeout after the kill).
VICTIM_SHARE = 4
#: After the kill, each language redeems a probe of its own in the killed primary's slots this often.
PROBE_EVERY_S = 0.2
#: After the run, each language redeems this many fresh jtis of its own on the surviving primaries' slots.
AFTERWARDS = 5
#: The jtis made for the run (it ends long before they run out).
JTIS = 2000
#: How long a redeemer may take to start and connect (a cold JVM on a busy machine).
START_TIMEOUT_S = 90.0
BUILD_TIMEOUT_S = 900

TS_PACKAGE = ROOT / "typescript"
JAVA = ROOT / "java"
JAVA_REDEEMER = JAVA / "src" / "test" / "java" / "dev" / "mrtrstate" / "replay" / "redis" / "RedeemLines.java"

Answer = dict[str, Any]


def _run(command: list[str], cwd: Path, what: str) -> None:
    """Run one build step; fail the test with its output if it fails."""
    result = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
    )
    if result.returncode != 0:
        pytest.fail(f"{what} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")


def _newest(directory: Path, suffix: str) -> float:
    return max((path.stat().st_mtime for path in directory.rglob(f"*{suffix}")), default=0.0)


def _need(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        missing_tool(f"{', '.join(missing)} not found on PATH; the mixed-fleet failover test needs it")


@pytest.fixture(scope="module")
def go_command(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Go's redeemer, built from the module (the build cache makes a rebuild cheap)."""
    _need("go")
    binary = tmp_path_factory.mktemp("go-redeemlines") / "redeemlines"
    _run(
        ["go", "build", "-mod=readonly", "-o", str(binary), "./internal/cmd/redeemlines"],
        ROOT / "go",
        "go build ./internal/cmd/redeemlines",
    )
    return [str(binary)]


@pytest.fixture(scope="module")
def npm_command() -> list[str]:
    """npm's redeemer on the built package: ``npm ci`` and ``npm run build`` only when needed."""
    _need("node", "npm")
    if not (TS_PACKAGE / "node_modules" / "redis").is_dir():
        _run(["npm", "ci", "--no-audit", "--no-fund"], TS_PACKAGE, "npm ci")
    built = TS_PACKAGE / "dist" / "replay" / "redis.js"
    if not built.is_file() or built.stat().st_mtime < _newest(TS_PACKAGE / "src", ".ts"):
        _run(["npm", "run", "build"], TS_PACKAGE, "npm run build")
    return ["node", str(TS_PACKAGE / "runtimes" / "redeem-lines.mjs")]


@pytest.fixture(scope="module")
def java_command() -> list[str]:
    """Java's redeemer on the built classes and their classpath (as java/conformance.sh builds them)."""
    _need("java", "mvn")
    classpath = JAVA / "target" / "classpath.txt"
    store = JAVA / "target" / "classes" / "dev" / "mrtrstate" / "replay" / "redis" / "RedisReplayStore.class"
    newest = max(_newest(JAVA / "src" / "main", ".java"), (JAVA / "pom.xml").stat().st_mtime)
    if not classpath.is_file() or not store.is_file() or store.stat().st_mtime < newest:
        _run(
            [
                "mvn", "-q", "-B", "compile", "dependency:build-classpath",
                "-Dmdep.outputFile=target/classpath.txt", "-DincludeScope=runtime",
            ],
            JAVA,
            "mvn compile dependency:build-classpath",
        )  # fmt: skip
    path = f"{JAVA / 'target' / 'classes'}{os.pathsep}{classpath.read_text(encoding='utf-8').strip()}"
    return ["java", "-cp", path, str(JAVA_REDEEMER)]


@pytest.fixture(scope="module")
def rust_command() -> list[str]:
    """Rust's redeemer, built with every feature into rust/target (as scripts/check-rust builds it)."""
    return rust_redeemer_command()


class Redeemer(Protocol):
    """One language's long-lived store: a key in, its answer out."""

    def redeem(self, key: str) -> Answer: ...

    def close(self) -> None: ...


class PythonRedeemer:
    """Python's store, in this process, answering as the line redeemers do."""

    def __init__(self, urls: list[str]) -> None:
        self.store = RedisReplayStore.from_cluster(
            urls, timeout=TIMEOUT_MS / 1000, wait_replicas=1, wait_timeout=WAIT_TIMEOUT_MS / 1000
        )

    def redeem(self, key: str) -> Answer:
        try:
            return {"first": self.store.redeem(key, expires_at=int(time.time()) + 600)}
        except ReplayStoreError as exc:
            return {"error": str(exc)}

    def close(self) -> None:
        self.store.close()


@dataclass
class Lane:
    """What one language's thread did: its answers by jti (and when each came), its probes (key, answer,
    when) after the kill, until the watcher found it served again."""

    answers: dict[str, Answer] = field(default_factory=dict)
    answered_at: dict[str, float] = field(default_factory=dict)
    took: dict[str, float] = field(default_factory=dict)
    probes: list[tuple[str, Answer, float]] = field(default_factory=list)
    served_again: bool = False
    failure: BaseException | None = None


def slot_owners(node: RedisServer) -> dict[int, int]:
    """The port of the primary that owns each slot, as ``node`` says now."""
    owners: dict[int, int] = {}
    with node.admin() as admin:
        for start, end, primary, *_replicas in admin.execute_command("CLUSTER SLOTS"):
            for slot in range(int(start), int(end) + 1):
                owners[slot] = int(primary[1])
    return owners


@pytest.fixture
def redeemers(
    redis_cluster: RedisClusterDeployment,
    go_command: list[str],
    npm_command: list[str],
    java_command: list[str],
    rust_command: list[str],
    tmp_path: Path,
) -> Iterator[dict[str, Redeemer]]:
    """The five redeemers, each connected to the cluster with WAIT 1; all stopped after the test."""
    hosts = [f"127.0.0.1:{node.port}" for node in redis_cluster.nodes]
    urls = [f"redis://{host}" for host in hosts]
    timeouts = {"ms": f"{TIMEOUT_MS}ms", "wait_ms": f"{WAIT_TIMEOUT_MS}ms"}
    commands = {
        "npm": [*npm_command, "--cluster", ",".join(urls), "--timeout", str(TIMEOUT_MS / 1000),
                "--wait", "1", "--wait-timeout", str(WAIT_TIMEOUT_MS / 1000)],
        "go": [*go_command, "-cluster", ",".join(hosts), "-timeout", timeouts["ms"],
               "-wait", "1", "-wait-timeout", timeouts["wait_ms"]],
        # Lettuce learns the cluster from one seed; the test never kills nodes[0].
        "java": [*java_command, "--cluster", urls[0], "--timeout-ms", str(TIMEOUT_MS),
                 "--wait", "1", "--wait-timeout-ms", str(WAIT_TIMEOUT_MS)],
        "rust": [*rust_command, "--cluster", ",".join(urls), "--timeout-ms", str(TIMEOUT_MS),
                 "--wait", "1", "--wait-timeout-ms", str(WAIT_TIMEOUT_MS)],
    }  # fmt: skip
    started: dict[str, Redeemer] = {}
    try:
        for name, command in commands.items():
            started[name] = LineRedeemer(command, tmp_path / f"{name}.log")
        started["python"] = PythonRedeemer(urls)
        # Each answers one key of its own before the run: it has started and connected.
        for name, redeemer in started.items():
            key = replay_key(ISSUER, f"ready-{name}")
            answer = (
                redeemer.redeem(key, timeout=START_TIMEOUT_S)
                if isinstance(redeemer, LineRedeemer)
                else redeemer.redeem(key)
            )
            assert answer == {"first": True}, f"{name} did not start: {answer}"
        yield {name: started[name] for name in LANGUAGES}
    finally:
        for redeemer in started.values():
            redeemer.close()


def run_lane(
    redeemer: Redeemer,
    lane: Lane,
    keys: list[str],
    probes: Iterator[str],
    start: float,
    limit: Callable[[], int],
    killed: Callable[[], float | None],
) -> None:
    """Offer ``keys[i]`` at ``start + i * PACE_S`` (at once when behind) until ``limit()``; after the kill,
    a probe of this language's own before the next key whenever ``PROBE_EVERY_S`` has passed."""
    try:
        last_probe = 0.0
        i = 0
        while i < limit():
            delay = start + i * PACE_S - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            probing = killed() is not None and not lane.served_again
            if probing and time.monotonic() - last_probe >= PROBE_EVERY_S:
                probe = next(probes)
                answer = redeemer.redeem(probe)
                last_probe = time.monotonic()
                lane.probes.append((probe, answer, last_probe))
            sent = time.monotonic()
            lane.answers[keys[i]] = redeemer.redeem(keys[i])
            lane.answered_at[keys[i]] = time.monotonic()
            lane.took[keys[i]] = lane.answered_at[keys[i]] - sent
            i += 1
    except BaseException as exc:  # reported by the test, which joins the thread
        lane.failure = exc


def test_a_mixed_fleet_redeems_each_jti_at_most_once_through_a_cluster_failover_and_every_store_serves_again(
    redis_cluster: RedisClusterDeployment, redeemers: dict[str, Redeemer]
) -> None:
    seed = redis_cluster.nodes[0]
    owners = slot_owners(seed)
    victim = next(node for node in redis_cluster.primaries() if node is not seed)
    survivor = next(node for node in redis_cluster.nodes if node is not victim)

    python = redeemers["python"]
    assert isinstance(python, PythonRedeemer)
    name_of = python.store.redis_key  # every language's store names a key so

    def slot(key: str) -> int:
        return key_slot(name_of(key).encode())

    every = [replay_key(ISSUER, f"fleet-{i:06d}") for i in range(JTIS)]
    on_victim = {key for key in every if owners[slot(key)] == victim.port}
    keys = [key for i, key in enumerate(every) if key not in on_victim or i % VICTIM_SHARE == 0]
    assert 0 < len(on_victim) < len(keys)

    def probe_keys(language: str) -> Iterator[str]:
        n = 0
        while True:
            key = replay_key(ISSUER, f"probe-{language}-{n:06d}")
            n += 1
            if owners[slot(key)] == victim.port:
                yield key

    lanes = {name: Lane() for name in LANGUAGES}
    limit = [len(keys)]
    killed_at: list[float] = []
    start = time.monotonic() + 0.2
    threads = [
        threading.Thread(
            target=run_lane,
            args=(redeemers[name], lanes[name], keys, probe_keys(name), start, lambda: limit[0],
                  lambda: killed_at[0] if killed_at else None),
            name=f"fleet-{name}",
            daemon=True,
        )
        for name in LANGUAGES
    ]  # fmt: skip
    for thread in threads:
        thread.start()

    time.sleep(max(0.0, start + BEFORE_KILL_S - time.monotonic()))
    victim.kill()
    killed = time.monotonic()
    killed_at.append(killed)

    # Watch the probes: a language served again at the answer of its first probe that was accepted
    # or whose key the promoted primary holds.
    recovered: dict[str, float] = {}
    checked = {name: 0 for name in LANGUAGES}
    deadline = killed + RECOVERY_BOUND_S + 1.0
    while len(recovered) < len(LANGUAGES) and time.monotonic() < deadline:
        time.sleep(0.3)
        holder = _holder(survivor, victim.port, owners)
        for name in LANGUAGES:
            if name in recovered:
                continue
            probes = lanes[name].probes
            while checked[name] < len(probes):
                key, answer, when = probes[checked[name]]
                if answer.get("first") is True or (holder is not None and _holds(holder, name_of(key))):
                    recovered[name] = when - killed
                    lanes[name].served_again = True
                    break
                if holder is None:
                    break  # ask again once the cluster names the new primary
                checked[name] += 1
        if any(lane.failure is not None for lane in lanes.values()):
            break
    time.sleep(AFTER_RECOVERY_S)
    limit[0] = min(len(keys), int((time.monotonic() - start) / PACE_S) + 1)
    behind = {name: limit[0] - len(lane.answers) for name, lane in lanes.items()}
    for name, thread in zip(LANGUAGES, threads, strict=True):
        thread.join(timeout=60)
        lane = lanes[name]
        assert not thread.is_alive(), (
            f"the {name} lane did not finish within 60 s: {behind[name]} jtis behind at the end of the run, "
            f"{limit[0] - len(lane.answers)} still; its last answers {list(lane.answers.values())[-3:]}"
        )
    for name, lane in lanes.items():
        if lane.failure is not None:
            raise AssertionError(f"the {name} redeemer failed") from lane.failure

    # After the run, each store accepts first redemptions of its own on the surviving primaries' slots:
    # the failover left those shards whole, so WAIT 1 is confirmed there.
    afterwards: dict[str, list[Answer]] = {}
    for name in LANGUAGES:
        fresh = (replay_key(ISSUER, f"after-{name}-{n:04d}") for n in range(1000))
        mine = [key for key in fresh if owners[slot(key)] != victim.port][:AFTERWARDS]
        afterwards[name] = [redeemers[name].redeem(key) for key in mine]

    # Every jti offered up to the limit, by every language.
    offered = keys[: limit[0]]
    summary = {
        name: {
            "accepted": sum(1 for a in lane.answers.values() if a.get("first") is True),
            "replayed": sum(1 for a in lane.answers.values() if a.get("first") is False),
            "refused": sum(1 for a in lane.answers.values() if "error" in a),
            "probes": len(lane.probes),
        }
        for name, lane in lanes.items()
    }
    # When each store last refused a jti of the other primaries' slots after the kill (0: never).
    elsewhere = {
        name: max(
            (
                lane.answered_at[key] - killed
                for key, a in lane.answers.items()
                if "error" in a and key not in on_victim and lane.answered_at[key] > killed
            ),
            default=0.0,
        )
        for name, lane in lanes.items()
    }
    figures = ", ".join(
        f"{name} {recovered[name]:.1f} s (other slots {elsewhere[name]:.1f} s)"
        for name in LANGUAGES
        if name in recovered
    )
    victims = len(on_victim & set(offered))
    print(f"\nmixed fleet, {len(offered)} jtis ({victims} on the killed primary): {summary}")
    print(f"served again after the kill: {figures}")
    for name, lane in lanes.items():
        causes = Counter(
            re.sub(r"\d+", "N", a["error"])
            for a in [*lane.answers.values(), *(p[1] for p in lane.probes)]
            if "error" in a
        )
        print(f"{name} refusals: {dict(causes.most_common(4))}")
        after = sorted(t - killed for t in lane.answered_at.values() if t > killed)
        if after:
            took = sorted(lane.took[key] * 1000 for key, t in lane.answered_at.items() if t > killed)
            print(
                f"{name}: {len(after)} answers from the kill to {after[-1]:.1f} s after it, each in "
                f"{took[len(took) // 2]:.0f} ms (median), {took[-1]:.0f} ms at most"
            )

    doubles, replayed_first, not_once = [], [], []
    for key in offered:
        answers = [lanes[name].answers[key] for name in LANGUAGES]
        accepted = sum(1 for a in answers if a.get("first") is True)
        errors = sum(1 for a in answers if "error" in a)
        if accepted > 1:
            doubles.append(key)
        if accepted == 0 and errors == 0 and any(a.get("first") is False for a in answers):
            replayed_first.append(key)
        if errors == 0 and accepted != 1:
            not_once.append(key)
    assert doubles == [], f"{len(doubles)} jtis accepted more than once across the fleet"
    assert replayed_first == [], (
        f"{len(replayed_first)} jtis refused as replayed with no acceptance and no error"
    )
    assert not_once == [], f"{len(not_once)} jtis met no error but were not accepted exactly once"
    refused_afterwards = {
        name: [a for a in answers if a != {"first": True}] for name, answers in afterwards.items()
    }
    assert all(not refused for refused in refused_afterwards.values()), (
        f"first redemptions on the surviving primaries' slots refused after the run: {refused_afterwards}"
    )
    slow = {
        name: (recovered.get(name), elsewhere[name])
        for name in LANGUAGES
        if max(recovered.get(name, RECOVERY_BOUND_S), elsewhere[name]) >= RECOVERY_BOUND_S
    }
    assert slow == {}, (
        f"stores that did not serve again within {RECOVERY_BOUND_S} s of the kill: {slow} ({figures})"
    )


def _holder(survivor: RedisServer, victim_port: int, owners: dict[int, int]) -> int | None:
    """The port of the primary that now holds the killed primary's slots, or None while none does."""
    victim_slot = next(s for s, port in owners.items() if port == victim_port)
    try:
        now = slot_owners(survivor)
    except redis.RedisError:
        return None
    port = now.get(victim_slot)
    if port is None or port == victim_port:
        return None
    return port


def _holds(port: int, redis_key: str) -> bool:
    """Whether the primary at ``port`` holds ``redis_key`` (False if it cannot say now)."""
    try:
        with redis.Redis(host="127.0.0.1", port=port, socket_timeout=1) as holder:
            return bool(holder.exists(redis_key))
    except redis.RedisError:
        return False
