"""Helpers for the normalize tests: replaying real transcript lines, applying diffs."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from normalize import NormalizedPayload, normalize_tool_result, normalize_tool_use
from normalize._diff import split_lines

FIXTURES = Path(__file__).parent.parent / "fixtures" / "normalize"


@dataclass(frozen=True)
class Call:
    """One tool call of a transcript: the ``tool_use`` block and its result."""

    source: str
    tool_use_id: str
    name: str
    input: Any
    content: Any
    is_error: Any
    tool_use_result: Any
    on_use: NormalizedPayload
    on_result: NormalizedPayload


def replay(path: Path) -> list[Call]:
    """Normalise every tool call of a transcript excerpt, in order."""
    uses: dict[str, tuple[str, Any, NormalizedPayload]] = {}
    calls: list[Call] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        msg = json.loads(line)["msg"]
        content = msg.get("message", {}).get("content")
        if msg["type"] == "assistant":
            for block in content:
                if block["type"] == "tool_use":
                    payload = normalize_tool_use(block["name"], block["input"])
                    uses[block["id"]] = (block["name"], block["input"], payload)
        elif msg["type"] == "user" and isinstance(content, list):
            for block in content:
                if block["type"] != "tool_result":
                    continue
                name, tool_input, payload = uses.pop(block["tool_use_id"])
                after = normalize_tool_result(
                    payload,
                    content=block.get("content"),
                    is_error=block.get("is_error"),
                    tool_use_result=msg.get("tool_use_result"),
                )
                calls.append(
                    Call(
                        source=path.name,
                        tool_use_id=block["tool_use_id"],
                        name=name,
                        input=tool_input,
                        content=block.get("content"),
                        is_error=block.get("is_error"),
                        tool_use_result=msg.get("tool_use_result"),
                        on_use=payload,
                        on_result=after,
                    )
                )
    assert not uses, f"tool_use without a result in {path.name}: {sorted(uses)}"
    return calls


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_patch(old: str, diff: str) -> str:
    """A tiny, strict unified-diff applier: context and removed lines must match exactly."""
    if not diff:
        return old
    source = split_lines(old)
    lines = diff.split("\n")[2:]  # skip the ---/+++ header
    out: list[str] = []
    pos = 0  # next unread source line (0-based)
    i = 0
    while i < len(lines) and lines[i]:
        match = _HUNK.match(lines[i])
        assert match, lines[i]
        old_start, old_len = int(match.group(1)), int(match.group(2) or 1)
        begin = old_start - 1 if old_len else old_start
        out.extend(source[pos:begin])
        pos = begin
        i += 1
        while i < len(lines) and lines[i] and not lines[i].startswith("@@"):
            tag, text = lines[i][0], lines[i][1:] + "\n"
            if i + 1 < len(lines) and lines[i + 1].startswith("\\"):
                text = text[:-1]  # "\ No newline at end of file"
                i += 1
            if tag in " -":
                assert source[pos] == text, (source[pos], text)
                pos += 1
            if tag in " +":
                out.append(text)
            i += 1
    out.extend(source[pos:])
    return "".join(out)
