"""Property tests: any JSON state round-trips exactly; any change to a token is refused;
the argument digest agrees with an independent RFC 8785 implementation."""

from __future__ import annotations

from typing import Any

import rfc8785
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mrtr_state import InvalidRequestState, Keyring, StateSealer, arguments_digest, canonicalize
from tests.conftest import ISSUER, NOW
from tests.json_strategies import SAFE, json_trees, json_values

RINGS = {alg: Keyring.generate(alg) for alg in ("HS256", "EdDSA")}
SEALERS = {alg: StateSealer(ring, issuer=ISSUER, clock=lambda: NOW) for alg, ring in RINGS.items()}

# Bound arguments are I-JSON: no number whose value is an integer beyond the safe range (profile, 3.4).
bindable_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-SAFE, SAFE)
    | st.floats(min_value=-float(SAFE), max_value=float(SAFE))
    | st.text()
)
bindable_values = json_trees(bindable_scalars)
names = st.text(min_size=1, max_size=30)
algorithms = st.sampled_from(sorted(SEALERS))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    state=json_values,
    user=names,
    tool=names,
    arguments=st.dictionaries(st.text(), bindable_values, max_size=4),
    alg=algorithms,
)
def test_any_json_state_round_trips_exactly(
    state: Any, user: str, tool: str, arguments: Any, alg: str
) -> None:
    sealer = SEALERS[alg]
    token = sealer.seal(state, user=user, tool=tool, arguments=arguments)
    opened = sealer.open(token, user=user, tool=tool, arguments=arguments)
    assert opened == state
    assert repr(opened) == repr(state)  # -0.0 stays -0.0, 1.0 stays a float


@st.composite
def changed_tokens(draw: st.DrawFn) -> tuple[str, str, str]:
    alg = draw(algorithms)
    token = SEALERS[alg].seal(draw(json_values), user="alice", tool="deploy")
    kind = draw(st.sampled_from(["substitute", "insert", "delete", "truncate", "swap", "append"]))
    i = draw(st.integers(0, len(token) - 1))
    char = draw(st.characters(codec="ascii") | st.sampled_from("ABCxyz019-_.="))
    if kind == "substitute":
        changed = token[:i] + char + token[i + 1 :]
    elif kind == "insert":
        changed = token[:i] + char + token[i:]
    elif kind == "delete":
        changed = token[:i] + token[i + 1 :]
    elif kind == "truncate":
        changed = token[:i]
    elif kind == "swap":
        h, p, s = token.split(".")
        changed = draw(st.sampled_from([f"{p}.{h}.{s}", f"{h}.{s}.{p}", f"{s}.{p}.{h}"]))
    else:
        changed = token + char
    return alg, token, changed


@settings(max_examples=500, deadline=None)
@given(changed_tokens())
def test_any_change_to_a_token_is_refused(case: tuple[str, str, str]) -> None:
    alg, token, changed = case
    assume(changed != token)
    sealer = SEALERS[alg]
    try:
        sealer.open(changed, user="alice", tool="deploy")
    except InvalidRequestState:
        return
    raise AssertionError(f"a changed token opened: {changed!r}")


@settings(max_examples=500, deadline=None)
@given(json_values)
def test_canonical_json_agrees_with_an_independent_rfc8785_implementation(value: Any) -> None:
    assert canonicalize(value) == rfc8785.dumps(value)


unsafe_numbers = (
    st.integers(min_value=SAFE + 1)
    | st.integers(max_value=-SAFE - 1)
    | st.floats(min_value=2.0**53, allow_infinity=False)
    | st.floats(max_value=-(2.0**53), allow_infinity=False)
)


@settings(max_examples=300, deadline=None)
@given(arguments=st.dictionaries(st.text(max_size=5), bindable_values, max_size=3), number=unsafe_numbers)
def test_arguments_holding_an_integer_beyond_2_53_are_unbindable_however_written(
    arguments: dict[str, Any], number: int | float
) -> None:
    nested = {**arguments, "deep": [{"id": number}]}
    try:
        arguments_digest(nested)
    except ValueError:
        return
    raise AssertionError("unbindable arguments were digested")
