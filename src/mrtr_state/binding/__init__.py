"""The binding room: what a token is bound to.

- :mod:`~mrtr_state.binding.target`: the target, written as ``aud`` (profile 3.5);
- :mod:`~mrtr_state.binding.canonical`: the argument digest, RFC 8785 and SHA-256 (profile 3.4);
- :mod:`~mrtr_state.binding.binding`: :class:`Binding`, one request (user, target, arguments),
  re-exported here.
"""

from mrtr_state.binding.binding import Binding

__all__ = ["Binding"]
