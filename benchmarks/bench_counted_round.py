"""Instructions per whole MCP round, counted by callgrind: bench_mcp_round.py without the timing noise.

Run it from the repository root (``scripts/bootstrap`` installs the SDK; valgrind comes from
the system's packages, ``scripts/ci-deps`` installs it):

    .venv/bin/python benchmarks/bench_counted_round.py            # print the table (one to two minutes)
    .venv/bin/python benchmarks/bench_counted_round.py --json F   # ... and write the counts to F

Method, as ``bench_counted.py``'s. A child process (this file with ``--child``) builds the
very servers ``bench_mcp_round.py`` times (the SDK's ``MCPServer`` with the same ``deploy``
tool behind the SDK's own ``RequestStateBoundary``, or behind ``StateBoundary`` with an
HS256 key and the argument digest; same states, same user), and runs each one's rounds
through the SDK's ``Client`` in process: the first call answered ``input_required``, then
the retry. Rounds need an event loop, so a counted loop is one ``anyio.run`` of a session
(connect, then ``n`` rounds, then disconnect) inside a single ``exec`` call, under
``valgrind --tool=callgrind --collect-atstart=no --toggle-collect=builtin_exec
--dump-after=builtin_exec``. Each candidate's session runs once uncounted (warm-up), then
counted with no round and with ``CALLS`` rounds: a row is the difference over ``CALLS``,
the instructions of one whole round with the session's set-up and tear-down excluded.
``PYTHONHASHSEED=0``, garbage collector off in the loops, fixed keys and ``jti``.

Callgrind counts only the thread that entered the counted ``exec``; the SDK runs a
plain-function tool in a worker thread, so the tools of ``bench_mcp_round.py`` are
coroutines, run on the event loop and counted: the state's encoding in
``input_required`` on one side, the SDK handler's ``json.dumps`` and ``json.loads`` of
the state on the other. (Before they were, the rounds counted here left both out.)

A third row counts the round with ``StateBoundary`` sealing the encrypted form (an
A256GCM key, profile 3.6), which uses the SDK's own cipher: the difference between
it and the HS256 row is what HMAC-SHA256 costs over AES-GCM.

Next to the rounds it counts the one step of the retry that differs in kind between the
two: the ``requestState`` string a handler is given. The SDK hands over the string it
decrypted; ``StateBoundary`` opens the token to a verified value, and the text of that
value is what the handler's ``requestState`` is. The row counts that step alone: the
boundary's ``open_bound_text_async`` and ``plaintext.text_of`` (before issue 35's fix,
``open_bound`` and a ``text_of`` that wrote the state again).

Two more rows count that step for a state of the same size written otherwise: with a
space for every ``-`` of its strings (a space inside a string, as most states written by
people have), and with its integers as floats too. They show what ``_json.is_written_as`` costs
when its first pass cannot vouch for the text: the strings cut out for a closer look,
and for floats the state written and compared.

Nothing here is held to a baseline: the whole round is mostly the SDK's JSON-RPC work, and
its count moves with the pinned SDK. ``bench_counted.py --check`` holds seal and open.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_counted import count_exec_loops

HERE = Path(__file__).resolve().parent
#: Rounds per counted session: a round is some millions of instructions, so a few dozen
#: make the per-round figure exact to a fraction of a percent.
CALLS = 40
#: Rounds of the uncounted warm-up session of each candidate.
WARMUP = 10
ROUND_SDK = "round: MCP SDK protection (AES-GCM)"
ROUND_MRTR = "round: StateBoundary (HS256, argument digest)"
ROUND_MRTR_ENC = "round: StateBoundary (A256GCM, argument digest)"
TEXT_MRTR = "retry: open + requestState text (StateBoundary)"
TEXT_MRTR_SPACED = "retry: ... a space in the state's strings"
TEXT_MRTR_FLOATS = "retry: ... a space in its strings, floats"


def _spaced(value: Any, floats: bool) -> Any:
    """``value`` with a space for every ``-`` of its strings and, if ``floats``, every integer a tenth."""
    if isinstance(value, dict):
        return {name: _spaced(member, floats) for name, member in value.items()}
    if isinstance(value, list):
        return [_spaced(item, floats) for item in value]
    if isinstance(value, str):
        return value.replace("-", " ")
    if floats and type(value) is int:
        return value / 10
    return value


def _spaced_state(size: int, floats: bool = False) -> Any:
    """A state shaped as make_state's, changed by :func:`_spaced`, of about ``size`` bytes."""
    from _harness import make_state

    grown = len(json.dumps(_spaced(make_state(size), floats), separators=(",", ":"))) - size
    return _spaced(make_state(size - grown), floats)


def _session(client_of: Callable[[], Any], rounds: int) -> Callable[[], None]:
    """One ``anyio.run``: connect a client, run ``rounds`` whole rounds as the user, disconnect."""
    import anyio
    import bench_mcp_round as r

    async def session() -> None:
        async with client_of() as client, r.as_user(r.USER):
            one = r.whole_round(client)
            for _ in range(rounds):
                await one()

    return lambda: anyio.run(session)


def _text_step(state: Any, secret: bytes) -> Callable[[], object]:
    """What the boundary does on a retry to give the handler its ``requestState``: open, then the text.

    ``open_bound_text_async`` without a replay store never suspends, so it is driven
    here without an event loop (one ``send``), as the boundary awaits it.
    """
    import bench_mcp_round as r

    from mrtr_state import Key, Keyring, StateSealer
    from mrtr_state.binding.binding import Binding
    from mrtr_state.mcp.plaintext import text_of

    sealer = StateSealer(Keyring([Key.from_secret(secret)]), issuer=r.ISSUER, ttl=r.TTL)
    binding = Binding(r.USER, "tool", r.TOOL, r.ARGUMENTS)
    token = sealer.seal_bound(state, binding)

    def step() -> str:
        opening = sealer.open_bound_text_async(token, binding)
        try:
            opening.send(None)
        except StopIteration as opened:
            claim, written = opened.value
            return text_of(claim, written)
        raise SystemExit("bench: open_bound_text_async suspended without a replay store")

    if json.loads(step()) != state:
        raise SystemExit("bench: the retry's requestState is not the sealed state")
    return step


def child() -> int:
    """Build the servers, warm each session up, and run each counted session in one ``exec``."""
    sys.path.insert(0, str(HERE))
    import bench_mcp_round as r
    from _harness import make_state
    from bench_open_seal import fixed_secret
    from mcp.client import Client

    from mrtr_state import Key, Keyring
    from mrtr_state.token._b64 import encode

    secret = fixed_secret("HS256")
    encryption_ring = Keyring(
        [Key.from_jwk({"kty": "oct", "alg": "A256GCM", "k": encode(fixed_secret("A256GCM"))})]
    )

    loops: list[tuple[str, str, Callable[[], object]]] = []
    for name, size in r.SIZES.items():
        state = make_state(size)
        sdk = r.sdk_server(state, secret)
        mrtr = r.mrtr_server(state, secret, entropy=bytes)
        encrypted = r.mrtr_server(state, secret, encryption_ring, bytes)
        for row, server in ((ROUND_SDK, sdk), (ROUND_MRTR, mrtr), (ROUND_MRTR_ENC, encrypted)):

            def client_of(server: Any = server) -> Any:
                return Client(server, elicitation_callback=r.never_asked)

            _session(client_of, WARMUP)()
            loops.append((name, f"{row} [empty]", _session(client_of, 0)))
            loops.append((name, row, _session(client_of, CALLS)))
        for row, written in (
            (TEXT_MRTR, state),
            (TEXT_MRTR_SPACED, _spaced_state(size)),
            (TEXT_MRTR_FLOATS, _spaced_state(size, floats=True)),
        ):
            step = _text_step(written, secret)
            for _ in range(WARMUP):
                step()
            loops.append((name, row, lambda step=step: [step() for _ in range(CALLS)]))

    order = []
    gc.disable()
    for size_name, row, fn in loops:
        # One exec per loop: callgrind collects only inside builtin_exec and dumps after it.
        exec("fn()\n", {"fn": fn})  # noqa: S102 - the counted loop
        order.append({"size": size_name, "row": row})
    gc.enable()
    print(json.dumps(order))
    return 0


def counts_per_round(totals: Sequence[tuple[dict[str, str], int]]) -> dict[str, dict[str, int]]:
    """Per size and row, instructions per round: each loop less its ``[empty]`` twin, over ``CALLS``."""
    empty: dict[tuple[str, str], int] = {}
    counts: dict[str, dict[str, int]] = {}
    for entry, total in totals:
        size, row = entry["size"], entry["row"]
        if row.endswith(" [empty]"):
            empty[(size, row.removesuffix(" [empty]"))] = total
            continue
        counts.setdefault(size, {})[row] = round((total - empty.get((size, row), 0)) / CALLS)
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", metavar="FILE", help="also write the counts to FILE")
    args = parser.parse_args(argv)
    if args.child:
        return child()
    counts = counts_per_round(count_exec_loops(sys.executable, Path(__file__).resolve()))
    sizes = list(counts)
    rows = list(counts[sizes[0]])
    width = max(len(r) for r in rows)
    print(f"{'instructions per round (thousands)':<{width}}  " + "  ".join(f"{s:>14}" for s in sizes))
    for row in rows:
        print(f"{row:<{width}}  " + "  ".join(f"{counts[s][row] / 1000:>14.1f}" for s in sizes))
    for label, row in (("HS256", ROUND_MRTR), ("A256GCM", ROUND_MRTR_ENC)):
        print(
            f"StateBoundary {label} / SDK, whole round: "
            + ", ".join(f"{s} {counts[s][row] / counts[s][ROUND_SDK]:.3f}x" for s in sizes)
        )
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
