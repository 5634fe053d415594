"""The keys room: keys, key rings, and the sources a sealer reads them from.

- :mod:`~mrtr_state.keys.keys`: :class:`Key`, :class:`Keyring` and the load rules (profile 7), re-exported
  here, so ``from mrtr_state.keys import Keyring`` keeps working;
- :mod:`~mrtr_state.keys._ed25519`: the Ed25519 public key checks (profile 7.2);
- :mod:`~mrtr_state.keys.key_source`: what a sealer takes its keys from (a ring, a source, a function);
- :mod:`~mrtr_state.keys._key_file`: the one reader of key files (regular files only, never world-writable);
- :mod:`~mrtr_state.keys.reloading` and :mod:`~mrtr_state.keys.remote_jwks`: keys that change while the
  server runs (imported only when used).
"""

from mrtr_state.keys.keys import *  # noqa: F403  (the public names of keys.keys, as before the move)
from mrtr_state.keys.keys import __all__ as __all__
