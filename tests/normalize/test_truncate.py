"""UTF-8-safe truncation."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from normalize import truncate_text


@given(text=st.text(), max_bytes=st.integers(-5, 200))
def test_truncation_is_a_utf8_prefix_within_the_cap(text: str, max_bytes: int) -> None:
    """The result is a prefix of the text, at most ``max_bytes`` UTF-8 bytes, cut on a
    character boundary, and as long as possible."""
    cut, truncated = truncate_text(text, max_bytes)
    size = len(cut.encode("utf-8"))
    assert text.startswith(cut)
    assert size <= max(max_bytes, 0)
    assert truncated == (cut != text)
    if truncated:
        # The next character would not have fitted.
        assert size + len(text[len(cut)].encode("utf-8")) > max_bytes


def test_never_splits_a_multibyte_character() -> None:
    """A 4-byte emoji is kept whole or dropped whole."""
    assert truncate_text("a😀b", 4) == ("a", True)
    assert truncate_text("a😀b", 5) == ("a😀", True)
    assert truncate_text("a😀b", 6) == ("a😀b", False)


def test_lone_surrogates_do_not_raise() -> None:
    """JSON can carry lone surrogates; they are counted, not rejected."""
    assert truncate_text("\ud800" * 4, 6) == ("\ud800" * 2, True)
