"""Grep (every output_mode) and Glob."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from normalize import (
    CodeSearch,
    SearchMatch,
    SearchOutput,
    action_type_for,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)


def _search(payload: object) -> CodeSearch:
    assert isinstance(payload, CodeSearch)
    return payload


def _output(payload: object) -> SearchOutput:
    output = _search(payload).output
    assert output is not None
    return output


def test_grep_input_and_title() -> None:
    """Grep's pattern is the query; filters are kept; the title names the directory."""
    payload = _search(
        normalize_tool_use(
            "Grep",
            {"pattern": "TODO", "path": "/w/src/", "glob": "*.py", "type": "py", "-i": True},
        )
    )
    assert (payload.query, payload.path, payload.glob, payload.file_type) == (
        "TODO",
        "/w/src/",
        "*.py",
        "py",
    )
    assert payload.case_insensitive
    assert title_for(payload, work_dir="/w") == "Search `TODO` in src/"
    assert action_type_for(payload) == "file_read"


def test_files_with_matches_header_is_not_a_file() -> None:
    """``Found N files`` is parsed as the count, not listed as a file."""
    payload = normalize_tool_use("Grep", {"pattern": "x"})
    output = _output(normalize_tool_result(payload, content="Found 2 files\nsrc/a.py\nsrc/b.py"))
    assert output == SearchOutput(files=("src/a.py", "src/b.py"), file_count=2)


def test_files_with_matches_from_structured_result() -> None:
    """The structured ``filenames`` win over the text."""
    payload = normalize_tool_use("Grep", {"pattern": "x"})
    result = {"mode": "files_with_matches", "filenames": ["a.py"], "numFiles": 1}
    output = _output(
        normalize_tool_result(payload, content="Found 1 file\na.py", tool_use_result=result)
    )
    assert output == SearchOutput(files=("a.py",), file_count=1)


def test_no_files_found() -> None:
    """``No files found`` means an empty list and a zero count."""
    payload = normalize_tool_use("Grep", {"pattern": "x"})
    assert _output(normalize_tool_result(payload, content="No files found")) == SearchOutput(
        file_count=0
    )


def test_content_mode_lines_and_context() -> None:
    """Content mode: ``path:line:text`` for matches, ``path-line-text`` for context lines."""
    payload = normalize_tool_use("Grep", {"pattern": "def", "output_mode": "content", "-C": 1})
    text = "my-a.py-1-import os\nmy-a.py:2:def f():\n--\nb.py:10:def g(): # x:1:y\n"
    output = _output(normalize_tool_result(payload, content=text))
    assert output.matches == (
        SearchMatch(path="my-a.py", line=1, text="import os", context=True),
        SearchMatch(path="my-a.py", line=2, text="def f():"),
        SearchMatch(path="b.py", line=10, text="def g(): # x:1:y"),
    )


def test_content_mode_single_file_has_no_path() -> None:
    """Searching one file, ripgrep leaves out the path: ``line:text``."""
    payload = normalize_tool_use(
        "Grep", {"pattern": "x", "path": "a.py", "output_mode": "content", "-n": True}
    )
    output = _output(normalize_tool_result(payload, content="3:x = 1\n"))
    assert output.matches == (SearchMatch(line=3, text="x = 1"),)


def test_content_mode_from_structured_result() -> None:
    """The structured ``content`` and ``numLines`` are used when present."""
    payload = normalize_tool_use("Grep", {"pattern": "x", "output_mode": "content"})
    result = {"mode": "content", "content": "a.py:1:x", "numLines": 1, "numFiles": 0}
    output = _output(normalize_tool_result(payload, content="a.py:1:x", tool_use_result=result))
    assert output.matches == (SearchMatch(path="a.py", line=1, text="x"),)
    assert output.match_count == 1


def test_count_mode_with_footer() -> None:
    """Count mode: ``path:N`` per file; the footer gives the totals."""
    payload = normalize_tool_use("Grep", {"pattern": "x", "output_mode": "count"})
    text = "a.py:3\nsrc/b c.py:1\n\nFound 4 total occurrences across 2 files."
    output = _output(normalize_tool_result(payload, content=text))
    assert output.matches == (
        SearchMatch(path="a.py", count=3),
        SearchMatch(path="src/b c.py", count=1),
    )
    assert (output.match_count, output.file_count) == (4, 2)


def test_pagination_note_marks_limited_output() -> None:
    """``appliedLimit`` (and the pagination note) mark the list as truncated."""
    payload = normalize_tool_use("Grep", {"pattern": "x", "head_limit": 1})
    result = {"mode": "files_with_matches", "filenames": ["a"], "numFiles": 1, "appliedLimit": 1}
    text = "Found 1 file limit: 1, offset: 0\na\n\n[Showing results with pagination = limit: 1]"
    output = _output(normalize_tool_result(payload, content=text, tool_use_result=result))
    assert output.files == ("a",)
    assert output.truncated


def test_grep_list_is_cut_to_the_byte_cap() -> None:
    """Long result lists stop at the byte cap and are flagged."""
    payload = normalize_tool_use("Grep", {"pattern": "x"})
    text = "Found 100 files\n" + "\n".join(f"file{i}.py" for i in range(100))
    output = _output(normalize_tool_result(payload, content=text, max_output_bytes=50))
    assert 0 < len(output.files) < 100
    assert output.truncated
    assert output.file_count == 100


def test_glob() -> None:
    """Glob: the pattern, the files from ``filenames``, and the CLI's truncated flag."""
    payload = _search(normalize_tool_use("Glob", {"pattern": "**/*.py", "path": "/w/src"}))
    assert (payload.pattern, payload.query) == ("**/*.py", None)
    assert title_for(payload, work_dir="/w") == "Find `**/*.py` in src"
    result = {"filenames": ["/w/src/a.py"], "numFiles": 1, "truncated": True, "durationMs": 3}
    output = _output(normalize_tool_result(payload, content="/w/src/a.py", tool_use_result=result))
    assert output == SearchOutput(files=("/w/src/a.py",), file_count=1, truncated=True)


def test_glob_text_only() -> None:
    """Without structured data, Glob's text lines are the files; the note is not a file."""
    payload = normalize_tool_use("Glob", {"pattern": "*"})
    text = "a\nb\n(Results are truncated. Consider using a more specific path or pattern.)"
    output = _output(normalize_tool_result(payload, content=text))
    assert output == SearchOutput(files=("a", "b"), file_count=2, truncated=True)
    empty = _output(normalize_tool_result(payload, content="No files found"))
    assert empty == SearchOutput(file_count=0)


@given(
    st.lists(
        st.sampled_from(
            [
                "Found 3 files",
                "No files found",
                "[Showing results",
                "a/b.py",
                "",
                " ",
                "\r",
                "(Results are truncated",
                "Sx",
                "R",
                "x\ry",
            ]
        ),
        max_size=12,
    ),
    st.text(alphabet="FN[SR(x \r\n", max_size=40),
)
def test_head_lines_are_the_lines_header_parsing_reads(parts: list[str], noise: str) -> None:
    """The one-scan header finder gives exactly the non-blank lines starting with a header
    character, in order, as splitting the text would."""
    from normalize._search import _HEAD_FIRST, _head_lines, _lines

    for text in ("\n".join(parts), noise, "\n".join(parts) + noise):
        assert _head_lines(text) == [line for line in _lines(text) if line[0] in _HEAD_FIRST]


_CONTENT_CHARS = st.sampled_from(list("ab/.:-:0129\n \u0663\u00b2"))


@given(st.lists(_CONTENT_CHARS, max_size=24).map("".join))
def test_content_line_split_is_the_regex(line: str) -> None:
    """The fast split of a content line gives what the ``_CONTENT`` regex gives."""
    from normalize._search import _CONTENT, _content_parts

    match = _CONTENT.match(line)
    expected = match.groups() if match and match.group(1) else None
    assert _content_parts(line) == expected


def test_content_line_split_examples() -> None:
    from normalize._search import _content_parts

    assert _content_parts("src/a.py:12:x = 1") == ("src/a.py", ":", "12", "x = 1")
    assert _content_parts("src/my-app/a.py-3-ctx") == ("src/my-app/a.py", "-", "3", "ctx")
    assert _content_parts("a:b:1:c") == ("a:b", ":", "1", "c")
    assert _content_parts(":1:c") is None and _content_parts("no match") is None
