"""The replay room: single use (profile 9.5, step 20).

- :mod:`~mrtr_state.replay.replay`: the store interfaces and the memory store, re-exported here, so
  ``from mrtr_state.replay import MemoryReplayStore`` keeps working;
- :mod:`~mrtr_state.replay.replay_redis`: the Redis stores (imported only when used; they need ``redis``).
"""

from mrtr_state.replay.replay import *  # noqa: F403  (the public names of replay.replay, as before the move)
from mrtr_state.replay.replay import __all__ as __all__
