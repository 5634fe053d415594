import os
from typing import Any

from mrtr_state import Keyring, StateSealer
from mrtr_state.replay.replay_redis import AsyncRedisReplayStore

store = AsyncRedisReplayStore.from_url(os.environ["REDIS_URL"])
sealer = StateSealer(Keyring.from_env(), issuer="https://files.example.com", replay_store=store)


async def pay(token: str, user: str, arguments: dict[str, Any]) -> str:
    state = await sealer.open_async(token, user=user, tool="pay", arguments=arguments, consume=True)
    return f"Paid {state['amount']}."  # once per state: a second presentation is refused as replayed
