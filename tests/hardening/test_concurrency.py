"""One StateSealer shared by many threads gives the same results as a single thread."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mrtr_state import InvalidRequestState, Keyring, StateSealer
from tests.conftest import ISSUER, NOW

SEALER = StateSealer(
    Keyring([*Keyring.generate("HS256"), *Keyring.generate("EdDSA")]), issuer=ISSUER, clock=lambda: NOW
)
USERS = ["alice", "bob", "carol"]
TOOLS = ["deploy", "delete_branch"]


def work(seed: int) -> list[Any]:
    """Seal and open a mix of good and bad retries; return what happened, in order."""
    rng = random.Random(seed)
    outcomes: list[Any] = []
    for i in range(40):
        user, tool = rng.choice(USERS), rng.choice(TOOLS)
        state = {"seed": seed, "i": i}
        token = SEALER.seal(state, user=user, tool=tool, arguments={"i": i})
        retry_user = user if rng.random() < 0.7 else rng.choice(USERS)
        retry_tool = tool if rng.random() < 0.8 else rng.choice(TOOLS)
        if rng.random() < 0.2:
            token = token[:-5] + ("AAAAA" if token[-5:] != "AAAAA" else "BBBBB")
        try:
            outcomes.append(SEALER.open(token, user=retry_user, tool=retry_tool, arguments={"i": i}))
        except InvalidRequestState as refusal:
            outcomes.append(refusal.reason)
    return outcomes


def test_many_threads_sharing_one_sealer_get_the_single_thread_results() -> None:
    seeds = list(range(64))
    alone = [work(seed) for seed in seeds]
    with ThreadPoolExecutor(max_workers=16) as pool:
        together = list(pool.map(work, seeds))
    assert together == alone
    assert any(isinstance(o, dict) for run in alone for o in run)
    assert {o for run in alone for o in run if isinstance(o, str)} >= {"wrong_user", "bad_signature"}
