"""Hypothesis strategies the property tests share."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ("json_values",)


def json_values(
    *, text_size: int = 8, key_size: int = 8, max_leaves: int = 8, floats: bool = True
) -> st.SearchStrategy[Any]:
    """Any JSON value: null, booleans, integers, finite floats (unless ``floats`` is off) and
    strings of at most ``text_size`` characters, in lists of at most 3 items and objects
    with keys of at most ``key_size`` characters, ``max_leaves`` scalars in all."""
    scalars = st.none() | st.booleans() | st.integers()
    if floats:
        scalars |= st.floats(allow_nan=False, allow_infinity=False)
    return st.recursive(
        scalars | st.text(max_size=text_size),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=key_size), inner)
        ),
        max_leaves=max_leaves,
    )
