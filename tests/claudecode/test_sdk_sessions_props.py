"""Property: on any transcript — well-formed entries, broken chains, metadata lines, junk —
the drop-in's session readers answer exactly as the official SDK's do, and never raise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

official = pytest.importorskip("claude_agent_sdk")
import claudecode.sdk as ours  # noqa: E402

CWD = "/work/project"
SESSION = "12345678-1234-1234-1234-123456789abc"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_content = st.one_of(
    _text,
    st.lists(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("text"), "text": _text}),
            st.fixed_dictionaries(
                {"type": st.just("tool_result"), "tool_use_id": st.just("t1"), "content": _text}
            ),
            st.fixed_dictionaries(
                {
                    "type": st.just("tool_use"),
                    "id": st.sampled_from(["t1", "t2"]),
                    "name": st.just("Bash"),
                    "input": st.just({}),
                }
            ),
        ),
        max_size=3,
    ),
)


@st.composite
def _entry(draw: st.DrawFn, uuids: list[str]) -> dict[str, Any] | str:
    kind = draw(
        st.sampled_from(
            ["user", "assistant", "user", "assistant", "system", "custom-title", "tag", "junk"]
        )
    )
    if kind == "junk":
        return draw(st.sampled_from(["", "not json", "{", "[]", '{"type": 3}', "null"]))
    if kind == "custom-title":
        return {"type": "custom-title", "customTitle": draw(_text), "sessionId": SESSION}
    if kind == "tag":
        return {"type": "tag", "tag": draw(_text), "sessionId": SESSION}
    own = str(uuid.UUID(int=len(uuids) + 1))
    parent = draw(st.one_of(st.none(), st.sampled_from(uuids) if uuids else st.none()))
    uuids.append(own)
    entry: dict[str, Any] = {
        "type": kind,
        "uuid": own,
        "parentUuid": parent,
        "sessionId": SESSION,
        "cwd": CWD,
        "timestamp": f"2026-01-01T00:00:{len(uuids) % 60:02d}.000Z",
    }
    if kind == "system":
        entry["subtype"] = "informational"
        entry["content"] = draw(_text)
    else:
        message: dict[str, Any] = {"role": kind, "content": draw(_content)}
        if kind == "assistant":
            message["id"] = draw(st.sampled_from(["msg_1", "msg_2", "msg_3"]))
        entry["message"] = message
    for flag in ("isSidechain", "isMeta", "isCompactSummary"):
        if draw(st.integers(0, 9)) == 0:
            entry[flag] = True
    if draw(st.integers(0, 5)) == 0:
        entry["gitBranch"] = draw(_text)
    return entry


@st.composite
def _transcript(draw: st.DrawFn) -> list[str]:
    uuids: list[str] = []
    entries = draw(st.lists(_entry(uuids), max_size=14))
    return [e if isinstance(e, str) else json.dumps(e) for e in entries]


@contextlib.contextmanager
def _config(lines: list[str]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as root:
        project = Path(root, "projects", "-work-project")
        project.mkdir(parents=True)
        path = project / f"{SESSION}.jsonl"
        path.write_text("\n".join(lines) + ("\n" if lines else ""))
        os.utime(path, (1_700_000_000, 1_700_000_000))
        saved = os.environ.get("CLAUDE_CONFIG_DIR")
        os.environ["CLAUDE_CONFIG_DIR"] = root
        try:
            yield path
        finally:
            if saved is None:
                os.environ.pop("CLAUDE_CONFIG_DIR", None)
            else:
                os.environ["CLAUDE_CONFIG_DIR"] = saved


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_transcript(), st.integers(0, 3), st.one_of(st.none(), st.integers(1, 4)))
def test_readers_agree_with_the_sdk(lines: list[str], offset: int, limit: int | None) -> None:
    with _config(lines):
        for name, args, kwargs in (
            ("list_sessions", (), {}),
            ("list_sessions", (), {"directory": CWD}),
            ("get_session_info", (SESSION,), {}),
            ("get_session_messages", (SESSION,), {}),
            ("get_session_messages", (SESSION,), {"offset": offset, "limit": limit}),
        ):
            theirs = _plain(getattr(official, name)(*args, **kwargs))
            mine = _plain(getattr(ours, name)(*args, **kwargs))
            assert theirs == mine, name
