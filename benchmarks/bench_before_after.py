"""Old code against new: HS256 ``seal`` and ``open`` of one library version next to another's.

Run it from the repository root with the ``src`` directory of an older checkout:

    git archive <commit> src | tar -x -C /tmp/old
    .venv/bin/python benchmarks/bench_before_after.py --old /tmp/old/src

The older package is imported first, under its own modules, and set aside; the
package of this checkout is then imported as usual. Both live in one process, so
the harness (``benchmarks/_harness.py``) runs the old calls, the new calls and the
bare HMAC floor of ``bench_open_seal.py`` in the same interleaved rounds (CPU time
of the process unless ``--clock wall``); a ratio is the median of same-round
ratios, so a slow spell of a shared machine hits both sides alike.

For each state size it prints ``seal`` and ``open``, HS256 with and without the
argument digest, as new / old and as new / the floor.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from types import ModuleType
from typing import Any

from _harness import Candidate, describe_machine, make_state, measure, median, method_line, ratio

_PACKAGE = "mrtr_state"


def _own_modules() -> dict[str, ModuleType]:
    return {
        name: module
        for name, module in sys.modules.items()
        if name == _PACKAGE or name.startswith(_PACKAGE + ".")
    }


def load_old(src: str) -> ModuleType:
    """Import the ``mrtr_state`` found under ``src`` and take it out of ``sys.modules`` again.

    Its modules keep their references to one another, so its calls run its own
    code; only an import done inside a function at call time would find the new
    package, and no ``seal`` or ``open`` path does one.
    """
    current = _own_modules()
    for name in current:
        del sys.modules[name]
    sys.path.insert(0, src)
    try:
        old = importlib.import_module(_PACKAGE)
        if not old.__file__ or not old.__file__.startswith(src):
            raise SystemExit(f"bench: {src} holds no {_PACKAGE} package")
    finally:
        sys.path.remove(src)
        for name in _own_modules():
            del sys.modules[name]
        sys.modules.update(current)
    return old


def candidates(old: ModuleType, new: ModuleType, floor: Any, size: int, args: bool) -> list[Candidate]:
    """Floor, old and new ``open`` and ``seal`` of one state, each checked to round-trip first."""
    from bench_open_seal import ARGUMENTS, AUD, ISSUER, TOOL, TTL, USER

    state = make_state(size)
    secret = bytes(range(1, 33))
    kw: dict[str, Any] = {"arguments": ARGUMENTS} if args else {}
    suffix = " + argument digest" if args else ""
    rows: list[Candidate] = []
    floor_open = f"open  floor, bare HMAC ({size} B)"
    floor_seal = f"seal  floor, bare HMAC ({size} B)"
    floor_tok = floor.seal(state, USER, AUD)
    rows.append(Candidate(floor_open, lambda: floor.open(floor_tok, USER, AUD), floor_open))
    rows.append(Candidate(floor_seal, lambda: floor.seal(state, USER, AUD), floor_seal))
    for name, lib in (("old", old), ("new", new)):
        key = lib.Key.from_jwk({"kty": "oct", "alg": "HS256", "kid": "k1", "k": _b64(secret)})
        sealer = lib.StateSealer(lib.Keyring([key]), issuer=ISSUER, ttl=TTL, max_lifetime=TTL)
        token = sealer.seal(state, user=USER, tool=TOOL, **kw)
        if sealer.open(token, user=USER, tool=TOOL, **kw) != state:
            raise SystemExit(f"bench: the {name} code did not open its own token; refusing to time it")
        label = f"{{}}  {name} HS256{suffix} ({size} B)"
        ref = f"{{}}  old HS256{suffix} ({size} B)"
        rows.append(
            Candidate(
                label.format("open"),
                lambda s=sealer, t=token: s.open(t, user=USER, tool=TOOL, **kw),
                floor_open,
                ref.format("open"),
                len(token),
            )
        )
        rows.append(
            Candidate(
                label.format("seal"),
                lambda s=sealer: s.seal(state, user=USER, tool=TOOL, **kw),
                floor_seal,
                ref.format("seal"),
                len(token),
            )
        )
    return rows


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main() -> None:
    """Parse the options, load both versions, run the interleaved rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, metavar="SRC", help="the src directory of the old checkout")
    parser.add_argument("--rounds", type=int, default=200, help="rounds (default 200)")
    parser.add_argument("--batch-ms", type=float, default=2.0, help="time per batch, ms (default 2)")
    parser.add_argument("--sizes", default="200", help="state sizes in bytes of JSON, comma-separated")
    parser.add_argument("--seed", type=int, default=1, help="seed of the interleaving order")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="cpu (default) or wall")
    options = parser.parse_args()

    old = load_old(options.old)
    new = importlib.import_module(_PACKAGE)
    from bench_open_seal import BareHMAC

    print("mrtr-state benchmark: old code against new, HS256, in one interleaved run")
    for line in describe_machine(("cryptography", "pyjwt")):
        print(line)
    print(f"old: {old.__file__}\nnew: {new.__file__}")
    print(method_line(options.rounds, options.batch_ms, options.clock))
    started = time.monotonic()
    floor = BareHMAC(bytes(range(1, 33)))
    rows: list[Candidate] = []
    for size in (int(s) for s in options.sizes.split(",")):
        for args in (False, True):
            rows.extend(candidates(old, new, floor, size, args))
    # Floors appear once per (size, args) pair: keep the first of each label.
    unique = list({c.label: c for c in rows}.values())
    measure(
        unique, rounds=options.rounds, batch_s=options.batch_ms / 1000, seed=options.seed, clock=options.clock
    )
    by = {c.label: c for c in unique}
    print(f"\n  {'candidate':<52} {'µs':>8} {'x floor':>8} {'new/old':>8}")
    for c in unique:
        fl = f"{ratio(c, by[c.floor]):.2f}" if c.floor and c.floor != c.label else ""
        rel = f"{ratio(c, by[c.ref]):.3f}" if c.ref and c.ref != c.label else ""
        print(f"  {c.label:<52} {median(c.samples) * 1e6:>8.2f} {fl:>8} {rel:>8}")
    print(f"\nrun took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
