"""The token room: the profile's compact formats and what reads and writes them.

- :mod:`~mrtr_state.token.jws`: the signed form (JWS compact serialization), steps 1 to 11 of profile 5;
- :mod:`~mrtr_state.token.jwe`: the encrypted form (JWE, ``dir`` + ``A256GCM``), steps 1 to 11 of profile 5.1;
- :mod:`~mrtr_state.token.claims`: the claim set, steps 12 to 19;
- :mod:`~mrtr_state.token._json` and :mod:`~mrtr_state.token._b64`: the strict JSON reader and writer, and
  strict base64url.

It uses the keys room to sign, verify and decrypt, and the binding room's :class:`~mrtr_state.binding.Binding`
for steps 16 to 19; nothing here knows of single use, key sources or MCP.
"""
