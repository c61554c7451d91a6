"""claudecode.sdk's messages against claude-agent-sdk's parser on every recorded CLI line.

Each ``from_cli`` line of the recorded real-CLI transcripts is parsed by the official SDK
and decoded by this client then converted by the drop-in: the same class, the same scalar
fields, and every non-null key of the SDK's dicts present with the same value (the drop-in
may add null-valued keys; ``SystemMessage.data`` holds only the fields this client models).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claudecode import decode_line
from claudecode.sdk._convert import to_sdk_message

_TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"


def _lines() -> list[dict[str, Any]]:
    lines = []
    for path in sorted(_TRANSCRIPTS.rglob("*.jsonl")):
        for raw in path.read_text().splitlines():
            record = json.loads(raw)
            if record.get("dir") == "from_cli":
                lines.append(record["msg"])
    return lines


LINES = _lines()


def _strip_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value


def _assert_contained(theirs: Any, ours: Any, where: str, *, top_level_optional: bool) -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        for key, value in theirs.items():
            if key not in ours and top_level_optional:
                continue
            assert key in ours, f"{where}.{key} missing"
            _assert_contained(value, ours[key], f"{where}.{key}", top_level_optional=False)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(theirs) == len(ours), where
        for i, (a, b) in enumerate(zip(theirs, ours, strict=True)):
            _assert_contained(a, b, f"{where}[{i}]", top_level_optional=False)
    else:
        assert theirs == ours, where


def test_the_transcripts_are_there() -> None:
    """The comparison below runs over a real corpus, not an empty list."""
    assert len(LINES) > 500


@pytest.mark.parametrize("index", range(len(LINES)))
def test_same_message_as_the_official_parser(index: int) -> None:
    """Class, fields and dict contents match claude_agent_sdk's parse_message."""
    from claude_agent_sdk._internal.message_parser import parse_message

    line = LINES[index]
    theirs = parse_message(line)
    ours = to_sdk_message(decode_line(json.dumps(line).encode()))
    assert type(theirs).__name__ == type(ours).__name__
    if theirs is None:
        return
    assert ours is not None
    mine = dataclasses.asdict(ours)
    for name, value in dataclasses.asdict(theirs).items():
        _assert_contained(
            _strip_none(value),
            mine[name],
            name,
            top_level_optional=name == "data",
        )


@settings(max_examples=200, deadline=None)
@given(
    index=st.integers(0, len(LINES) - 1),
    drop=st.lists(st.text(min_size=1, max_size=20), max_size=3),
    keep=st.sets(st.integers(0, 40), max_size=40),
)
def test_mutated_lines_never_break_the_conversion(
    index: int, drop: list[str], keep: set[int]
) -> None:
    """Real lines with keys removed convert or are skipped; nothing raises."""
    line = dict(LINES[index])
    for position, key in enumerate(list(line)):
        if key != "type" and position not in keep:
            del line[key]
    for key in drop:
        line.pop(key, None)
    to_sdk_message(decode_line(json.dumps(line).encode()))
