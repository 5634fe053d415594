"""A thin re-export: the import path ``mrtr_state.remote_jwks`` the documentation has always given.

The code lives in :mod:`mrtr_state.keys.remote_jwks` (the rooms of docs/architecture.md); every public
name of that module is the same object here.
"""

from mrtr_state.keys.remote_jwks import *  # noqa: F403
from mrtr_state.keys.remote_jwks import __all__ as __all__
