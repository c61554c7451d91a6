"""Titles never show empty placeholders and never exceed MAX_TITLE_LENGTH; Grep and Glob
share the pattern field; a generic tool's structured result is kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from normalize import (
    MAX_TITLE_LENGTH,
    CodeSearch,
    Generic,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)

TOOLS = (
    "Bash", "BashOutput", "KillShell", "Read", "Write", "Edit", "MultiEdit", "NotebookEdit",
    "Grep", "Glob", "WebFetch", "WebSearch", "Agent", "Task", "TaskCreate", "TaskUpdate",
    "TodoWrite", "ExitPlanMode", "AskUserQuestion", "Skill", "ToolSearch", "mcp__fe__echo",
    "mcp__x__", "SomethingNew", "",
)  # fmt: skip
PLACEHOLDERS = ("``", "Fetch ", "Search the web for ``")


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("Bash", {}, "Bash"),  # no command at all: a generic call of that tool
        ("Bash", {"command": ""}, "Run a command"),
        ("Bash", {"command": "  \n  "}, "Run a command"),
        ("Bash", {"command": "", "run_in_background": True}, "Run a command in background"),
        ("Grep", {"pattern": ""}, "Search files"),
        ("Grep", {"pattern": "", "path": "/w/src"}, "Search files in /w/src"),
        ("Glob", {"pattern": ""}, "Find files"),
        ("WebFetch", {"url": ""}, "Fetch a web page"),
        ("WebSearch", {"query": ""}, "Search the web"),
    ],
)
def test_empty_inputs_get_a_generic_phrase(
    tool: str, tool_input: dict[str, Any], expected: str
) -> None:
    assert expected == title_for(normalize_tool_use(tool, tool_input))


def test_a_generic_payload_without_a_name() -> None:
    assert "Unknown tool (srv)" == title_for(Generic(tool="mcp__srv__", name="", server="srv"))
    assert "Unknown tool" == title_for(Generic())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=300),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
inputs = st.dictionaries(
    st.sampled_from(["command", "pattern", "path", "url", "query", "file_path", "description",
                     "prompt", "subject", "content", "old_string", "new_string", "todos",
                     "questions", "plan", "skill", "shell_id", "taskId", "edits"]),
    json_values,
    max_size=4,
)  # fmt: skip


@given(st.sampled_from(TOOLS), inputs, st.none() | st.text(max_size=30))
def test_titles_are_one_bounded_line_without_placeholders(
    tool: str, tool_input: dict[str, Any], work_dir: str | None
) -> None:
    title = title_for(normalize_tool_use(tool, tool_input), work_dir=work_dir)
    assert title and title == title.strip()
    assert len(title) <= MAX_TITLE_LENGTH
    assert not any(c in title for c in "\n\r\t")
    assert not any(title.endswith(p) or f"{p} " in title for p in PLACEHOLDERS), title
    assert "``" not in title


def test_long_titles_are_capped() -> None:
    title = title_for(normalize_tool_use("Read", {"file_path": "/" + "d/" * 200 + "f.py"}))
    assert len(title) == MAX_TITLE_LENGTH and title.endswith("…")


def test_grep_and_glob_put_their_pattern_in_the_same_field() -> None:
    grep = normalize_tool_use("Grep", {"pattern": "def \\w+", "path": "src"})
    glob = normalize_tool_use("Glob", {"pattern": "**/*.py"})
    assert isinstance(grep, CodeSearch) and isinstance(glob, CodeSearch)
    assert ("def \\w+", "**/*.py") == (grep.pattern, glob.pattern)
    assert ("Grep", "Glob") == (grep.tool, glob.tool)
    assert "def \\w+" == grep.query  # kept for older consumers
    assert "Search `def \\w+` in src" == title_for(grep)
    assert "Find `**/*.py`" == title_for(glob)


@pytest.mark.parametrize(
    ("content", "structured"),
    [
        ({"rows": [1, 2], "ok": True}, None),
        (None, {"rows": [1, 2], "ok": True}),
        ("", {"rows": [1, 2], "ok": True}),
        ([], {"rows": [1, 2], "ok": True}),
    ],
)
def test_a_generic_tools_dict_result_is_kept(content: Any, structured: Any) -> None:
    payload = normalize_tool_use("mcp__db__query", {"sql": "select 1"})
    done = normalize_tool_result(payload, content=content, tool_use_result=structured)
    assert isinstance(done, Generic)
    assert {"rows": [1, 2], "ok": True} == done.output
    assert not done.truncated


def test_a_generic_tools_dict_result_too_big_is_cut_as_text() -> None:
    payload = normalize_tool_use("SomethingNew", {})
    big = {"blob": "x" * 500}
    done = normalize_tool_result(payload, content=big, max_output_bytes=100)
    assert isinstance(done, Generic) and done.truncated
    assert isinstance(done.output, str) and done.output.startswith('{"blob":"xxx')


def test_a_generic_tools_text_result_is_unchanged() -> None:
    payload = normalize_tool_use("SomethingNew", {})
    done = normalize_tool_result(payload, content="plain text", tool_use_result={"a": 1})
    assert isinstance(done, Generic) and "plain text" == done.output
