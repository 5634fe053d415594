"""A thin re-export: the import path ``mrtr_state.key_source`` the documentation has always given.

The code lives in :mod:`mrtr_state.keys.key_source` (the rooms of docs/architecture.md); every public
name of that module is the same object here.
"""

from mrtr_state.keys.key_source import *  # noqa: F403
from mrtr_state.keys.key_source import __all__ as __all__
