"""Hypothesis strategies for JSON values that the profile's state may hold, shared by the property tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

#: The largest integer I-JSON carries exactly (2**53 - 1).
SAFE = 2**53 - 1

#: null, booleans, integers within the safe range, finite floats, any text.
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-SAFE, SAFE)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)


def json_trees(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``scalars`` in lists and objects, a few levels deep (at most 30 leaves)."""
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
        ),
        max_leaves=30,
    )


#: Those scalars in lists and objects, a few levels deep.
json_values = json_trees(json_scalars)
