"""Titles for list views and coarse action types."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normalize import (
    ActionType,
    Generic,
    Misc,
    action_type_for,
    normalize_tool_use,
    title_for,
)
from normalize._titles import MAX_TITLE_LENGTH, _title

EDIT = {"old_string": "a", "new_string": "b"}
LINES = {"offset": 10, "limit": 50}
CASES: list[tuple[str, dict[str, Any], str, ActionType]] = [
    ("Bash", {"command": "pytest -q"}, "Run `pytest -q`", "command"),
    ("BashOutput", {}, "Read output of background shell", "command"),
    ("Edit", {"file_path": "/w/src/app.py", **EDIT}, "Edit src/app.py", "file_write"),
    ("Write", {"file_path": "/w/new.py", "content": ""}, "Create new.py", "file_write"),
    ("MultiEdit", {"file_path": "/w/m.py", "edits": [EDIT]}, "Edit m.py", "file_write"),
    ("Read", {"file_path": "/w/R.md", **LINES}, "Read R.md (lines 10\u201359)", "file_read"),
    ("Read", {"file_path": "/w/doc.pdf", "pages": "1-3"}, "Read doc.pdf (pages 1-3)", "file_read"),
    ("Read", {"file_path": "/elsewhere/x"}, "Read /elsewhere/x", "file_read"),
    ("Grep", {"pattern": "TODO", "path": "/w/src/"}, "Search `TODO` in src/", "file_read"),
    ("Grep", {"pattern": "TODO"}, "Search `TODO`", "file_read"),
    ("Glob", {"pattern": "*.md"}, "Find `*.md`", "file_read"),
    ("WebFetch", {"url": "https://a.b/c", "prompt": "p"}, "Fetch https://a.b/c", "network"),
    ("WebSearch", {"query": "anyio"}, "Search the web for `anyio`", "network"),
    ("Agent", {"prompt": "Do the thing"}, "Agent: Do the thing", "other"),
    ("TaskCreate", {"subject": "s"}, "Create task: s", "other"),
    ("TodoWrite", {"todos": [{"content": "a"}]}, "Update todos (1 item)", "other"),
    ("ExitPlanMode", {"plan": "p"}, "Present plan", "other"),
    ("AskUserQuestion", {"questions": []}, "Ask the user", "other"),
    ("EnterPlanMode", {}, "Enter plan mode", "other"),
    ("mcp__github__create_issue", {"title": "t"}, "create_issue (github)", "other"),
    ("SomethingNew", {}, "SomethingNew", "other"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "title", "action"), CASES)
def test_titles_and_action_types(
    name: str, data: dict[str, Any], title: str, action: ActionType
) -> None:
    """Each tool has a short title (paths relative to the work dir) and an action type."""
    payload = normalize_tool_use(name, data)
    assert title_for(payload, work_dir="/w/") == title
    assert action_type_for(payload) == action


def test_titles_of_empty_payloads() -> None:
    """Payloads with nothing filled in still get a title."""
    assert title_for(Generic()) == "Unknown tool"
    assert title_for(Misc(label="Do")) == "Do"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000ab`")))
def test_title_whitespace_is_collapsed_as_the_regex_did(command: str) -> None:
    """Runs of any whitespace become one space, trimmed: what ``\\s+`` -> " " did."""
    payload = normalize_tool_use("Bash", {"command": command})
    expected = re.sub(r"\s+", " ", _title(payload, None)).strip() or "Tool call"
    title = title_for(payload)
    assert title == (expected if len(expected) <= MAX_TITLE_LENGTH else title)
    assert "  " not in title and title == title.strip()
