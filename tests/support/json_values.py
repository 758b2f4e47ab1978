"""Hypothesis strategies for hostile JSON values, shared by the fuzzers of state files."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["JSONISH", "SCALARS", "jsonish"]

# Integers past a 64-bit long, NaN and infinities, and short text: what an edited file may hold.
SCALARS = (
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8)
)


def jsonish(max_leaves: int = 12) -> st.SearchStrategy[object]:
    """Any JSON-like value, nested a few levels (lists and objects of :data:`SCALARS`)."""
    return st.recursive(
        SCALARS,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=max_leaves,
    )


JSONISH = jsonish()
