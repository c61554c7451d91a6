"""Agent (and its old name Task), TaskCreate."""

from __future__ import annotations

import pytest

from normalize import (
    CreateTask,
    SubagentResult,
    SubagentTask,
    action_type_for,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)

INPUT = {
    "description": "Find the bug",
    "prompt": "Look for the off-by-one in parser.py",
    "subagent_type": "general-purpose",
}


def _agent(payload: object) -> SubagentTask:
    assert isinstance(payload, SubagentTask)
    return payload


@pytest.mark.parametrize("name", ["Agent", "Task"])
def test_agent_and_task_are_the_same_tool(name: str) -> None:
    """Task is the old name of Agent: both give subagent_task."""
    payload = _agent(normalize_tool_use(name, {**INPUT, "model": "haiku"}))
    assert (payload.description, payload.subagent_type, payload.model) == (
        "Find the bug",
        "general-purpose",
        "haiku",
    )
    assert title_for(payload) == "Agent: Find the bug"
    assert action_type_for(payload) == "other"


def test_background_launch_then_later_report() -> None:
    """A background launch reports ``async_launched``; the later report fills in the rest."""
    payload = _agent(normalize_tool_use("Agent", {**INPUT, "run_in_background": True}))
    assert payload.background
    launched = _agent(
        normalize_tool_result(
            payload,
            content="Async agent launched successfully. agentId: a1",
            tool_use_result={"status": "async_launched", "agentId": "a1", "description": "x"},
        )
    )
    assert launched.result is not None
    assert (launched.result.status, launched.result.agent_id) == ("async_launched", "a1")
    done = _agent(
        normalize_tool_result(
            launched,
            content=[{"type": "text", "text": "Fixed it."}],
            tool_use_result={
                "status": "completed",
                "content": [{"type": "text", "text": "Fixed it."}],
                "totalDurationMs": 5000,
                "totalTokens": 1234,
                "totalToolUseCount": 7,
            },
        )
    )
    assert done.result == SubagentResult(
        status="completed",
        agent_id="a1",
        duration_ms=5000,
        total_tokens=1234,
        tool_use_count=7,
        output="Fixed it.",
    )


def test_agent_error() -> None:
    """A failed sub-agent sets ``error``."""
    payload = normalize_tool_use("Agent", INPUT)
    after = _agent(
        normalize_tool_result(payload, content="Agent type 'x' not found", is_error=True)
    )
    assert after.error == "Agent type 'x' not found"
    assert after.result is None


def test_task_create() -> None:
    """TaskCreate: subject → title; the id comes from the result."""
    payload = normalize_tool_use(
        "TaskCreate", {"subject": "Write docs", "description": "README", "activeForm": "Writing"}
    )
    assert payload == CreateTask(tool="TaskCreate", title="Write docs", description="README")
    after = normalize_tool_result(
        payload,
        content="Task #7 created successfully: Write docs",
        tool_use_result={"task": {"id": 7, "subject": "Write docs"}},
    )
    assert isinstance(after, CreateTask)
    assert after.task_id == "7"
