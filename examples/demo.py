"""Seal a requestState, open it on the retry, and show each refusal the rule asks for.

Run it with ``scripts/demo``. It exits 1 if any step behaves otherwise than shown.
The clock is injected, so "ten minutes later" takes no time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from mrtr_state import InvalidRequestState, Keyring, StateSealer


class Clock:
    """A clock the demo can move forward."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def flip_one_byte(token: str) -> str:
    """Change one character in the middle of the payload, as a meddling client would."""
    i = len(token) // 2
    return token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]


def main() -> int:
    clock = Clock(1_767_225_600.0)
    ring = Keyring.generate("EdDSA")
    sealer = StateSealer(ring, issuer="https://files.example.com", clock=clock)
    request = {"user": "alice", "tool": "deploy", "arguments": {"env": "prod"}}
    state = {"step": "confirm", "plan": ["build", "push", "restart"]}

    token = sealer.seal(state, **request)
    print(f"sealed for alice/deploy(env=prod), {len(token)} characters:\n  {token[:72]}...\n")

    failures = 0

    def expect(label: str, reason: str | None, attempt: Callable[[], Any]) -> None:
        nonlocal failures
        try:
            opened = attempt()
        except InvalidRequestState as refusal:
            ok = refusal.reason == reason
            print(f"{'ok ' if ok else 'BAD'} {label:<44} refused: {refusal.reason} ({refusal})")
        else:
            ok = reason is None and opened == state
            print(f"{'ok ' if ok else 'BAD'} {label:<44} opened: {opened}")
        failures += not ok

    expect("the retry, as sealed", None, lambda: sealer.open(token, **request))
    expect("one byte changed", "bad_signature", lambda: sealer.open(flip_one_byte(token), **request))
    expect(
        "presented by another user",
        "wrong_user",
        lambda: sealer.open(token, **{**request, "user": "mallory"}),
    )
    expect(
        "presented to another tool",
        "wrong_tool",
        lambda: sealer.open(token, **{**request, "tool": "delete_repo"}),
    )
    expect(
        "retried with other arguments",
        "wrong_request",
        lambda: sealer.open(token, **{**request, "arguments": {"env": "staging"}}),
    )
    other_server = StateSealer(ring, issuer="https://other.example.com", clock=clock)
    expect("opened by another server", "wrong_issuer", lambda: other_server.open(token, **request))
    stranger = StateSealer(Keyring.generate("EdDSA"), issuer="https://files.example.com", clock=clock)
    expect("opened with a ring without its key", "unknown_key", lambda: stranger.open(token, **request))
    clock.now += 600
    expect("presented 10 minutes later", "expired", lambda: sealer.open(token, **request))

    print(f"\n{'every step behaved as the rule asks' if not failures else f'{failures} step(s) misbehaved'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
