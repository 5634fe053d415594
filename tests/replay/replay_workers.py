"""Work done in other processes by the concurrency tests (importable, so spawn can run it)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mrtr_state import Keyring, StateSealer
from mrtr_state.replay.replay_redis import RedisReplayStore
from tests.replay.redemption import outcome


def redeem_in_threads(
    jwks: dict[str, Any],
    issuer: str,
    url: str,
    tokens: list[str],
    request: dict[str, Any],
    start: Any,
    results: Any,
) -> None:
    """Open every token with ``consume=True`` in its own thread, all at ``start``; put the outcomes.

    Each outcome is ``"opened"`` or the refusal's reason code. The process has its
    own sealer, store and connection pool, as a replica of a fleet would.
    """
    store = RedisReplayStore.from_url(url, timeout=10)
    sealer = StateSealer(Keyring.from_jwks(jwks), issuer=issuer, replay_store=store)

    def open_one(token: str) -> str:
        start.wait(timeout=60)
        return outcome(sealer, token, request)

    try:
        with ThreadPoolExecutor(len(tokens)) as pool:
            results.put(list(pool.map(open_one, tokens)))
    finally:
        store.close()
