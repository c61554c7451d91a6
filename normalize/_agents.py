"""Agent (formerly Task) → ``subagent_task``; TaskCreate → ``create_task``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ._coerce import (
    Missing,
    as_bool,
    as_int,
    as_map,
    as_str,
    content_text,
    first_str,
)
from ._result import ToolResult
from .payloads import CreateTask, SubagentResult, SubagentTask

__all__ = ("create_task_result", "subagent_result", "use_subagent", "use_task_create")

# The 2.1.3xx CLI prepends a bookkeeping block to the sub-agent's report.
_TOOLS_USED = re.compile(r"^\s*<tools-used-before-summary>.*?</tools-used-before-summary>\s*")


def use_subagent(name: str, data: Mapping[str, Any]) -> SubagentTask:
    """``Agent {description, prompt, subagent_type, model, run_in_background}``."""
    description = as_str(data.get("description"))
    prompt = as_str(data.get("prompt"))
    if description is None and prompt is None:
        raise Missing
    return SubagentTask(
        tool=name,
        description=description,
        prompt=prompt,
        subagent_type=as_str(data.get("subagent_type")),
        model=as_str(data.get("model")),
        background=as_bool(data.get("run_in_background")),
    )


def subagent_result(payload: SubagentTask, result: ToolResult) -> SubagentTask:
    """Fill ``result`` from the CLI's structured report (status, id, usage, final text).

    Can be called again when a background agent's report arrives later: fields the new
    result lacks keep their earlier values.
    """
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    data = result.structured
    output: str | None = None
    if "content" in data:
        output = content_text(data.get("content"))
        output = _TOOLS_USED.sub("", output, count=1)
    if not output:
        output = result.text or None
    output, truncated = result.cut(output)
    old = payload.result or SubagentResult()
    new = SubagentResult(
        status=as_str(data.get("status")) or old.status,
        agent_id=first_str(data, "agentId", "agent_id") or old.agent_id,
        duration_ms=_first_int(as_int(data.get("totalDurationMs")), old.duration_ms),
        total_tokens=_first_int(as_int(data.get("totalTokens")), old.total_tokens),
        tool_use_count=_first_int(as_int(data.get("totalToolUseCount")), old.tool_use_count),
        output=output if output is not None else old.output,
        truncated=truncated if output is not None else old.truncated,
    )
    return msgspec.structs.replace(payload, result=new)


def _first_int(new: int | None, old: int | None) -> int | None:
    return new if new is not None else old


def use_task_create(name: str, data: Mapping[str, Any]) -> CreateTask:
    """``TaskCreate {subject, description, activeForm}``."""
    title = first_str(data, "subject", "title")
    if title is None:
        raise Missing
    return CreateTask(tool=name, title=title, description=as_str(data.get("description")))


def create_task_result(payload: CreateTask, result: ToolResult) -> CreateTask:
    """Take the new task's id from ``{"task": {"id": ...}}``."""
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    task = as_map(result.structured.get("task"))
    task_id = as_str(task.get("id"))
    if task_id is None:
        number = as_int(task.get("id"))
        task_id = None if number is None else str(number)
    return msgspec.structs.replace(payload, task_id=task_id or payload.task_id)
