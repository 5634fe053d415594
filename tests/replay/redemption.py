"""What the Redis replay tests redeem: one request and its state, and the outcome of one redemption."""

from __future__ import annotations

from typing import Any

from mrtr_state import InvalidRequestState, StateSealer

ISSUER = "https://files.example.com"
REQUEST: dict[str, Any] = {"user": "alice", "tool": "pay", "arguments": {"amount": 100}}
STATE = {"step": "confirmed"}


def outcome(sealer: StateSealer, token: str, request: dict[str, Any] = REQUEST) -> str:
    """Open ``token`` for ``request`` with ``consume=True``: ``"opened"``, or the refusal's reason code."""
    try:
        sealer.open(token, **request, consume=True)
    except InvalidRequestState as refusal:
        return refusal.reason
    return "opened"


async def outcome_async(sealer: StateSealer, token: str, request: dict[str, Any] = REQUEST) -> str:
    """``outcome`` through ``open_async``."""
    try:
        await sealer.open_async(token, **request, consume=True)
    except InvalidRequestState as refusal:
        return refusal.reason
    return "opened"
