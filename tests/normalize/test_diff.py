"""Unified diffs: applying them to the old text gives the new text."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize import unified_diff
from normalize._diff import grouped_opcodes, structured_patch_diff
from tests.normalize.normalize_helpers import apply_patch

texts = st.lists(
    st.sampled_from(["a", "b", "c", "", "def f():", "    return 1", "ü€😀", "x\r"]), max_size=12
).map("\n".join) | st.text(alphabet="ab\n", max_size=30)


@settings(max_examples=400)
@given(old=texts, new=texts)
def test_unified_diff_applies(old: str, new: str) -> None:
    """Applying ``unified_diff(old, new)`` to ``old`` gives ``new``, newline quirks included."""
    diff, start, end = unified_diff(old, new, path="f.txt")
    assert apply_patch(old, diff) == new
    assert (diff == "") == (old == new)
    if diff:
        assert start is not None
        assert end is not None
        assert 1 <= start <= max(end, 1)


@settings(max_examples=400)
@given(
    a=st.lists(st.sampled_from(["a\n", "b\n", "c", "d e f\n", ""]), max_size=8),
    b=st.lists(st.sampled_from(["a\n", "x\n", "c", "g h\n", ""]), max_size=8),
    context=st.integers(0, 4),
)
def test_grouped_opcodes_are_difflibs(a: list[str], b: list[str], context: int) -> None:
    """The shortcut for texts without a common line gives difflib's groups exactly."""
    import difflib

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    assert grouped_opcodes(a, b, context) == list(matcher.get_grouped_opcodes(context))


def test_unified_diff_has_context_and_hunk_headers() -> None:
    """Three lines of context around a change, with difflib's hunk header format."""
    old = "".join(f"line {i}\n" for i in range(1, 21))
    new = old.replace("line 10\n", "line ten\n")
    diff, start, end = unified_diff(old, new, path="src/app.py")
    assert diff.splitlines()[:3] == ["--- src/app.py", "+++ src/app.py", "@@ -7,7 +7,7 @@"]
    assert " line 7" in diff
    assert "-line 10\n+line ten\n" in diff
    assert (start, end) == (7, 13)


def test_unified_diff_matches_difflib_when_lines_end_in_newline() -> None:
    """For newline-terminated text the output is exactly difflib's."""
    import difflib

    old = "a\nb\nc\nd\ne\nf\ng\nh\n"
    new = "a\nB\nc\nd\ne\nf\ng\nh\ni\n"
    ours, _, _ = unified_diff(old, new, path="p")
    theirs = "".join(
        difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), "p", "p")
    )
    assert ours == theirs


def test_new_file_diff_is_from_dev_null() -> None:
    """``old=None`` is a file creation: ``--- /dev/null`` and a ``-0,0`` range."""
    diff, start, end = unified_diff(None, "x\ny\n", path="new.txt")
    assert diff == "--- /dev/null\n+++ new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n"
    assert (start, end) == (1, 2)


def test_structured_patch_rebuilds_the_cli_diff() -> None:
    """The CLI's structuredPatch hunks (from file_tools.jsonl) become a diff that applies."""
    hunks = [
        {
            "oldStart": 1,
            "oldLines": 1,
            "newStart": 1,
            "newLines": 1,
            "lines": ["-hello world", "+hello there"],
        }
    ]
    diff = structured_patch_diff(hunks, path="hello.txt")
    assert diff == "--- hello.txt\n+++ hello.txt\n@@ -1,1 +1,1 @@\n-hello world\n+hello there\n"
    assert apply_patch("hello world\n", diff) == "hello there\n"


@pytest.mark.parametrize(
    "hunks",
    [
        [{"oldStart": None, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-a", "+b"]}],
        [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": []}],
        [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 1, "lines": ["-a", "+b"]}],
        [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["?x"]}],
        [{"oldStart": 1}],
        ["nope"],
    ],
)
def test_malformed_structured_patch_is_none(hunks: object) -> None:
    """Hunks with wrong types or unknown line prefixes are rejected, not half-used."""
    assert structured_patch_diff(hunks) is None


def test_empty_structured_patch_is_empty() -> None:
    """No hunks, no diff."""
    assert structured_patch_diff([]) == ""


CASES = [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("a\nb", "a\nb\nc"),
    ("a\nb\n", "a\nb"),
    ("", "new\n"),
    ("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n3\n4\n5\n6\n7\n8\n9\nTEN\n"),
]  # fmt: skip


@pytest.mark.skipif(shutil.which("patch") is None, reason="no patch binary")
@pytest.mark.parametrize(("old", "new"), CASES)
def test_gnu_patch_accepts_our_diffs(old: str, new: str, tmp_path: Path) -> None:
    """The real ``patch`` program applies our diffs and gets the new text."""
    original = tmp_path / "file.txt"
    original.write_text(old)
    diff, _, _ = unified_diff(old, new, path="file.txt")
    (tmp_path / "change.diff").write_text(diff)
    subprocess.run(
        ["patch", "--quiet", "--force", str(original), str(tmp_path / "change.diff")],
        check=True,
        capture_output=True,
        timeout=10,
    )
    assert original.read_text() == new
