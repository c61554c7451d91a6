"""The shared state (``STATE_SNAPSHOT``) a run starts from."""

from __future__ import annotations

from typing import Any

from .requests import APPROVAL_TOOL, QUESTION_TOOL

__all__ = ("initial_state",)


def initial_state(
    *,
    session_id: str | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """The shared state a run starts from (every key present, so deltas can replace)."""
    return {
        "sessionId": session_id,
        "model": model,
        "permissionMode": permission_mode,
        "cwd": cwd,
        "todos": [],
        "costUsd": 0.0,
        "tokens": {"input": 0, "output": 0, "cacheRead": 0, "cacheCreation": 0},
        "contextWindow": None,
        "capabilities": {
            "approvals": APPROVAL_TOOL,
            "questions": QUESTION_TOOL,
            "stop": True,
            "reasoning": True,
        },
    }
