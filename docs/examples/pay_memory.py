from typing import Any

from mrtr_state import Keyring, MemoryReplayStore, StateSealer

sealer = StateSealer(Keyring.from_env(), issuer="https://files.example.com",
                     replay_store=MemoryReplayStore())


def pay(token: str, user: str, arguments: dict[str, Any]) -> str:
    state = sealer.open(token, user=user, tool="pay", arguments=arguments, consume=True)
    return f"Paid {state['amount']}."  # once per state: a second presentation is refused as replayed
