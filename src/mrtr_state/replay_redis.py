"""A thin re-export: the import path ``mrtr_state.replay_redis`` the documentation has always given.

The code lives in :mod:`mrtr_state.replay.replay_redis` (the rooms of docs/architecture.md); every public
name of that module is the same object here.
"""

from mrtr_state.replay.replay_redis import *  # noqa: F403
from mrtr_state.replay.replay_redis import __all__ as __all__
