"""What a session is called and where it may run: clean_title and check_spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter import SessionSpec
from adapter.backend import TITLE_LENGTH, check_spec, clean_title
from claudecode import UsageError


@given(st.text())
def test_a_title_is_one_trimmed_line_of_bounded_length(raw: str) -> None:
    words = raw.split()
    if not words:
        with pytest.raises(UsageError):
            clean_title(raw)
        return
    title = clean_title(raw)
    assert len(title) <= TITLE_LENGTH
    assert title == title.strip() and not any(c in title for c in "\n\r\t")
    joined = " ".join(words)
    assert title == joined if len(joined) <= TITLE_LENGTH else joined.startswith(title[:-1])


def test_check_spec_refuses_in_words(tmp_path: Path) -> None:
    check_spec(SessionSpec(cwd=str(tmp_path), effort="max"))
    a_file = tmp_path / "f"
    a_file.write_text("")
    for spec, words in (
        (SessionSpec(cwd=str(tmp_path / "nope")), "does not exist"),
        (SessionSpec(cwd=str(a_file)), "is not a directory"),
        (SessionSpec(effort="huge"), "unknown effort"),
    ):
        with pytest.raises(UsageError, match=words) as caught:
            check_spec(spec)
        assert "Errno" not in str(caught.value)
