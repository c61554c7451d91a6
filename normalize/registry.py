"""Tool name → normaliser table, and the two entry points built on it.

``USE`` maps each Claude Code tool name to the function that turns its ``tool_use`` input
into a payload (like h11's ``READERS`` table); ``RESULT`` maps each payload class to the
function that enriches it from the ``tool_result``. Tools listed in ``MISC`` get a ``misc``
payload with a label; every other name (including ``mcp__<server>__<tool>``) gets
``generic``. Both entry points catch everything: a wrong-shaped input or result degrades to
``generic`` (or to the payload unchanged), it never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ._agents import create_task_result, subagent_result, use_subagent, use_task_create
from ._coerce import as_int, as_map, content_text, first_str, jsonable
from ._files import (
    modify_result,
    read_result,
    use_edit,
    use_multi_edit,
    use_notebook_edit,
    use_read,
    use_write,
)
from ._plan import ask_result, plan_result, use_ask_user, use_exit_plan_mode
from ._result import ToolResult
from ._search import search_result, use_glob, use_grep
from ._shell import shell_result, use_bash, use_shell_kill, use_shell_output
from ._todos import todos_result, use_task_get, use_task_list, use_task_update, use_todo_write
from ._truncate import DEFAULT_MAX_OUTPUT_BYTES
from ._web import use_web_fetch, use_web_search, web_result
from .payloads import (
    AskUser,
    CodeSearch,
    CreateTask,
    Generic,
    HttpRequest,
    ManageTodos,
    Misc,
    ModifyFile,
    NormalizedPayload,
    Payload,
    ReadFile,
    ShellExec,
    ShowPlan,
    SubagentTask,
)

__all__ = (
    "MISC",
    "normalize_tool_result",
    "normalize_tool_use",
    "RESULT",
    "split_mcp_name",
    "USE",
)

UseFn = Callable[[str, Mapping[str, Any]], NormalizedPayload]
ResultFn = Callable[[Any, ToolResult], NormalizedPayload]

USE: dict[str, UseFn] = {
    "Read": use_read,
    "Write": use_write,
    "Edit": use_edit,
    "MultiEdit": use_multi_edit,
    "NotebookEdit": use_notebook_edit,
    "Bash": use_bash,
    "BashOutput": use_shell_output,
    "TaskOutput": use_shell_output,
    "KillShell": use_shell_kill,
    "KillBash": use_shell_kill,
    "TaskStop": use_shell_kill,
    "Grep": use_grep,
    "Glob": use_glob,
    "WebFetch": use_web_fetch,
    "WebSearch": use_web_search,
    "Agent": use_subagent,
    "Task": use_subagent,
    "TaskCreate": use_task_create,
    "TaskUpdate": use_task_update,
    "TaskList": use_task_list,
    "TaskGet": use_task_get,
    "TodoWrite": use_todo_write,
    "ExitPlanMode": use_exit_plan_mode,
    "AskUserQuestion": use_ask_user,
}
"""Tool name → ``tool_use`` normaliser."""

MISC: dict[str, tuple[str, tuple[str, ...]]] = {
    "EnterPlanMode": ("Enter plan mode", ()),
    "Skill": ("Use skill", ("skill", "command", "name")),
    "SlashCommand": ("Run slash command", ("command",)),
    "ToolSearch": ("Search tools", ("query",)),
    "EnterWorktree": ("Enter worktree", ("name", "path", "branch")),
    "ExitWorktree": ("Exit worktree", ()),
    "CronCreate": ("Schedule a prompt", ("cron", "schedule")),
    "CronDelete": ("Delete a schedule", ("id",)),
    "CronList": ("List schedules", ()),
    "ScheduleWakeup": ("Schedule a wake-up", ("reason", "prompt")),
    "SendMessage": ("Message an agent", ("to", "recipient")),
    "ListAgents": ("List agents", ()),
    "ReportFindings": ("Report findings", ("summary", "title")),
    "Workflow": ("Run a workflow", ("name", "workflow")),
    "ListMcpResourcesTool": ("List MCP resources", ("server",)),
    "ReadMcpResourceTool": ("Read MCP resource", ("uri",)),
}
"""Known tools without a dedicated shape: name → (label, input keys tried for ``details``)."""


def split_mcp_name(name: str) -> tuple[str, str] | None:
    """``"mcp__fe__echo"`` → ``("fe", "echo")``; ``None`` for a name that is not an MCP tool."""
    if not name.startswith("mcp__"):
        return None
    server, sep, tool = name[5:].partition("__")
    if not (server and sep and tool):
        return None
    return server, tool


def _generic(name: str, data: object) -> Generic:
    parts = split_mcp_name(name)
    if parts is None:
        return Generic(tool=name, name=name, input=data)
    return Generic(tool=name, name=parts[1], server=parts[0], input=data)


def _misc(name: str, data: Mapping[str, Any]) -> Misc:
    label, keys = MISC[name]
    return Misc(tool=name, label=label, details=first_str(data, *keys), input=data)


def normalize_tool_use(name: object, input: object) -> NormalizedPayload:
    """Turn a ``tool_use`` block's name and input into a payload. Never raises.

    Args:
        name: The tool name (``"Bash"``, ``"Edit"``, ``"mcp__server__tool"``...).
        input: The tool input: a dict as decoded from JSON (raw JSON bytes or
            :class:`msgspec.Raw` are decoded first).

    Returns:
        The payload for the tool. Unknown tools, MCP tools, and inputs that lack a field the
        tool requires (or have it with the wrong type) give :class:`~normalize.Generic` with
        the raw input.
    """
    tool = name if isinstance(name, str) else ""
    data = jsonable(input)
    try:
        if (type(data) is dict or isinstance(data, Mapping)) and as_map(data) is data:
            use = USE.get(tool)
            if use is not None:
                return use(tool, data)
            if tool in MISC:
                return _misc(tool, data)
    except Exception:  # any surprise in a normaliser degrades to generic
        pass
    return _generic(tool, data)


def _generic_result(payload: Generic, result: ToolResult, content: object) -> Generic:
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    output: Any = None
    truncated = False
    raw = jsonable(content)
    structured = result.data
    if (
        not result.text
        and raw in (None, "", [])
        and structured
        and isinstance(structured, Mapping | list)
    ):
        raw = structured  # no content, but a structured result: that is the output
    if isinstance(raw, Mapping) or (
        isinstance(raw, list)
        and any(not (isinstance(block, Mapping) and block.get("type") == "text") for block in raw)
    ):
        # Not only text (an object, images, resources): keep it as it is when it fits.
        try:
            encoded = msgspec.json.encode(raw)
        except (TypeError, ValueError, OverflowError):
            encoded = None
        if encoded is not None and len(encoded) <= result.max_bytes:
            output = raw
        else:
            text = result.text or (encoded.decode("utf-8", "replace") if encoded else None)
            output, _ = result.cut(text or None)
            truncated = True
    else:
        output, truncated = result.cut(result.text)
    return msgspec.structs.replace(payload, output=output, truncated=truncated)


def _misc_result(payload: Misc, result: ToolResult) -> Misc:
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    output, truncated = result.cut(result.text or None)
    return msgspec.structs.replace(payload, output=output, truncated=truncated)


RESULT: dict[type[Any], ResultFn] = {
    ReadFile: read_result,
    ModifyFile: modify_result,
    ShellExec: shell_result,
    CodeSearch: search_result,
    HttpRequest: web_result,
    SubagentTask: subagent_result,
    CreateTask: create_task_result,
    ManageTodos: todos_result,
    ShowPlan: plan_result,
    AskUser: ask_result,
    Misc: _misc_result,
}
"""Payload class → result enricher (``generic`` is handled separately)."""


def normalize_tool_result(
    payload: NormalizedPayload,
    *,
    content: object = None,
    is_error: object = False,
    tool_use_result: object = None,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> NormalizedPayload:
    """Enrich a payload from its ``tool_result`` block. Never raises.

    Call it with the payload :func:`normalize_tool_use` returned for the same
    ``tool_use_id``. It may be called again when a later result arrives (a background
    sub-agent's report): fields the new result lacks keep their values.

    Args:
        payload: The payload built from the ``tool_use`` block.
        content: The ``tool_result`` block's ``content`` (a string or a list of blocks).
        is_error: The block's ``is_error`` (only ``True`` counts as an error).
        tool_use_result: The structured ``tool_use_result`` of the ``user`` message (any
            JSON value; raw JSON bytes or :class:`msgspec.Raw` are decoded first).
        max_output_bytes: Cap, in UTF-8 bytes, for each output text; longer texts are cut
            on a character boundary and ``truncated`` is set.

    Returns:
        A new payload of the same kind with its output filled in (``error`` set when the
        call failed). If the result cannot be read, the payload comes back unchanged, with
        ``error`` set when ``is_error`` is true.
    """
    limit = as_int(max_output_bytes)
    max_bytes = DEFAULT_MAX_OUTPUT_BYTES if limit is None else max(limit, 0)
    result: ToolResult | None = None
    try:
        result = ToolResult(
            text=content_text(content),
            is_error=is_error is True,
            data=jsonable(tool_use_result),
            max_bytes=max_bytes,
        )
        if isinstance(payload, Generic):
            return _generic_result(payload, result, content)
        enrich = RESULT.get(type(payload))
        if enrich is not None:
            return enrich(payload, result)
    except Exception:  # a result we cannot read leaves the payload as it was
        pass
    if result is None:  # the content or the structured result could not even be read
        result = ToolResult(text="", is_error=is_error is True, data=None, max_bytes=max_bytes)
    if not isinstance(payload, Payload):
        return Generic(output=result.text or None, error=result.error)
    if result.is_error and payload.error is None:
        return msgspec.structs.replace(payload, error=result.error)
    return payload
