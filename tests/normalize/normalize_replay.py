"""Replaying real transcript lines through normalize (a helper module for the tests)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from normalize import NormalizedPayload, normalize_tool_result, normalize_tool_use

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
