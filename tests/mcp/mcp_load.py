"""The MCP example under load: two example server processes share one Redis; SDK clients run rounds.

Shared by the bounded test (``test_mcp_load.py``) and the benchmark
(``benchmarks/bench_mcp_load.py``). Each client is the official MCP Python SDK's
``Client`` over Streamable HTTP with a session to each server. One round is a
complete single-use ``delete_branch``: the first call (on one server) answers
``input_required`` with a sealed state; the confirmed retry is then sent to BOTH
servers at once, as a client retrying on another replica would. Each server
holds its own copy of the branches, so only the shared replay store stops the
branch from being deleted twice: exactly one of the two retries may act
("Deleted branch"), the other must be refused as ``replayed``.

It counts rounds per second, round latency (p50, p99), acts per round, refusals
by reason, HTTP statuses (no 5xx), and the servers' resident memory before and
after.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult

from mrtr_state import Keyring
from mrtr_state.mcp import REASON_META_KEY

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))  # the example server is the package `server`

from server.accounts import EXAMPLE_TOKENS  # noqa: E402
from server.launch import RunningServer, running_server  # noqa: E402

TOKEN_OF = {user: token for token, user in EXAMPLE_TOKENS.items()}
USERS = sorted(TOKEN_OF)
YES = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
DELETED = "deleted"


def rss_kib(pid: int) -> int:
    """The resident memory of process ``pid`` in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


@contextlib.contextmanager
def two_servers(redis_url: str, *, branches: int) -> Iterator[list[RunningServer]]:
    """Two example server processes with one key ring, one issuer and one Redis; both stop on exit."""
    env = {
        "MRTR_STATE_KEYS": json.dumps(Keyring.generate("EdDSA").private_jwks()),
        "MRTR_STATE_REDIS_URL": redis_url,
    }
    with (
        running_server("--load-branches", str(branches), env=env) as first,
        running_server("--load-branches", str(branches), env=env) as second,
    ):
        yield [first, second]


@dataclass
class McpLoadResult:
    """What one MCP load run measured."""

    clients: int
    rounds: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    acts_per_round: Counter[int] = field(default_factory=Counter)
    verdicts: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    rss_before_kib: list[int] = field(default_factory=list)
    rss_after_kib: list[int] = field(default_factory=list)
    ready: int = 0

    @property
    def double_acts(self) -> int:
        """Rounds whose one confirmation acted more than once (the rule: zero)."""
        return sum(count for acts, count in self.acts_per_round.items() if acts > 1)

    @property
    def server_errors(self) -> int:
        """HTTP responses with a 5xx status."""
        return sum(count for status, count in self.statuses.items() if status >= 500)

    @property
    def rate(self) -> float:
        """Complete rounds per second."""
        return self.rounds / self.seconds

    def percentile(self, p: float) -> float:
        """The ``p``-th percentile round latency in seconds."""
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def _never_asked(context: Any, params: Any) -> ElicitResult:
    """Declares the elicitation capability (delete_branch needs it); the rounds answer by hand."""
    raise AssertionError(f"unexpected elicitation: {params}")


def _verdict(result: Any) -> str:
    if isinstance(result, CallToolResult):
        if result.is_error:
            text = " ".join(getattr(block, "text", "") for block in result.content)
            return str((result.meta or {}).get(REASON_META_KEY, f"tool error: {text[:80]}"))
        text = " ".join(getattr(block, "text", "") for block in result.content)
        return DELETED if text.startswith("Deleted branch") else f"other: {text[:60]}"
    if isinstance(result, InputRequiredResult):
        return "asked again"
    return f"unexpected {type(result).__name__}"


async def _client(
    urls: list[str], index: int, rounds: int, first_branch: int, result: McpLoadResult, start: asyncio.Event
) -> None:
    user = USERS[index % len(USERS)]

    async def count(response: httpx2.Response) -> None:
        result.statuses[response.status_code] += 1

    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for url in urls:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {TOKEN_OF[user]}"},
                    timeout=60,
                    event_hooks={"response": [count]},
                )
            )
            client = await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http), elicitation_callback=_never_asked)
            )
            sessions.append(client.session)
        result.ready += 1
        await start.wait()
        for r in range(rounds):
            arguments = {"repo": "acme/load", "branch": f"load-{first_branch + r}"}
            t0 = time.monotonic()
            try:
                asked = await sessions[r % 2].call_tool("delete_branch", arguments, allow_input_required=True)
                if not isinstance(asked, InputRequiredResult):
                    result.errors[f"first round: {_verdict(asked)}"] += 1
                    continue
                retries = await asyncio.gather(
                    *(
                        session.call_tool(
                            "delete_branch",
                            arguments,
                            allow_input_required=True,
                            request_state=asked.request_state,
                            input_responses=YES,
                        )
                        for session in sessions
                    )
                )
            except Exception as exc:  # counted: the test requires none
                result.errors[type(exc).__name__] += 1
                continue
            result.latencies.append(time.monotonic() - t0)
            verdicts = [_verdict(retry) for retry in retries]
            result.verdicts.update(verdicts)
            result.acts_per_round[verdicts.count(DELETED)] += 1
            result.rounds += 1


async def _run(urls: list[str], clients: int, rounds: int) -> McpLoadResult:
    result = McpLoadResult(clients=clients)
    start = asyncio.Event()
    tasks = [asyncio.create_task(_client(urls, i, rounds, i * rounds, result, start)) for i in range(clients)]
    # Every client has its sessions before the clock starts.
    while result.ready < clients and not any(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    t0 = time.monotonic()
    start.set()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    result.seconds = time.monotonic() - t0
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            result.errors[f"client: {type(outcome).__name__}"] += 1
    return result


def run_mcp_load(servers: list[RunningServer], *, clients: int, rounds: int) -> McpLoadResult:
    """``clients`` concurrent SDK clients, each doing ``rounds`` complete rounds; measured."""
    pids = [server.process.pid for server in servers]
    before = [rss_kib(pid) for pid in pids]
    result = asyncio.run(_run([server.url for server in servers], clients, rounds))
    result.rss_before_kib = before
    result.rss_after_kib = [rss_kib(pid) for pid in pids]
    return result
