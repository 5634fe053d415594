"""A stateful test of a key ring through generate, rotate and remove.

At every step, exactly the tokens signed by a key still in the ring open; tokens signed by a
removed key are refused with unknown_key; new tokens are signed by the ring's first key.
"""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mrtr_state import InvalidRequestState, Key, Keyring, StateSealer, decode_unverified
from tests.conftest import ISSUER, NOW

REQUEST = {"user": "alice", "tool": "deploy"}
# Ed25519 key generation is the slow part; a pool keeps examples fast and still distinct.
POOL = [Key.generate(alg) for alg in ("HS256", "EdDSA") for _ in range(4)]


class KeyringLifecycle(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ring: Keyring
        self.tokens: list[tuple[str, str, int]] = []  # (token, kid, state)
        self.unused: list[Key] = []

    @initialize(first=st.integers(0, len(POOL) - 1))
    def generate(self, first: int) -> None:
        self.ring = Keyring([POOL[first]])
        self.unused = [k for i, k in enumerate(POOL) if i != first]

    def sealer(self) -> StateSealer:
        return StateSealer(self.ring, issuer=ISSUER, clock=lambda: NOW)

    @rule()
    def seal(self) -> None:
        state = len(self.tokens)
        token = self.sealer().seal(state, **REQUEST)
        header, _ = decode_unverified(token)
        assert header["kid"] == self.ring.keys[0].kid
        self.tokens.append((token, header["kid"], state))

    @precondition(lambda self: bool(self.unused))
    @rule(data=st.data())
    def rotate(self, data: st.DataObject) -> None:
        key = self.unused.pop(data.draw(st.integers(0, len(self.unused) - 1)))
        self.ring = self.ring.rotated(key)

    @precondition(lambda self: bool(self.unused))
    @rule(data=st.data())
    def add_behind(self, data: st.DataObject) -> None:
        key = self.unused.pop(data.draw(st.integers(0, len(self.unused) - 1)))
        self.ring = Keyring([*self.ring, key])

    @precondition(lambda self: len(self.ring) > 1)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(self.ring.keys))
        self.ring = self.ring.without(key.kid)

    @invariant()
    def exactly_the_tokens_of_keys_in_the_ring_open(self) -> None:
        sealer = self.sealer()
        for token, kid, state in self.tokens:
            if kid in self.ring:
                assert sealer.open(token, **REQUEST) == state
            else:
                with pytest.raises(InvalidRequestState) as caught:
                    sealer.open(token, **REQUEST)
                assert caught.value.reason == "unknown_key"


TestKeyringLifecycle = KeyringLifecycle.TestCase
TestKeyringLifecycle.settings = settings(max_examples=60, stateful_step_count=20, deadline=None)
