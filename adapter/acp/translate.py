"""Adapter events as ACP ``session/update`` payloads, without I/O.

:class:`UpdateTranslator` turns the normalized event stream of one session into the
``update`` objects of ACP ``session/update`` notifications (protocol version 1):

================================= ==========================================================
adapter event                     ACP update
================================= ==========================================================
``message_chunk``                 ``agent_message_chunk`` (text; ``messageId`` is the API
                                  message id)
``reasoning``                     ``agent_thought_chunk``
``tool_call``                     ``tool_call`` (``pending``) with the ACP tool kind, title,
                                  ``locations`` and, for edits, ``diff`` content
``tool_progress``                 ``tool_call_update`` ``in_progress``
``tool_update``                   ``tool_call_update`` ``completed`` / ``failed`` with the
                                  output as text (edits: the diff again, with locations)
``tool_call`` of ``TodoWrite``    ``plan`` (the whole list, as ACP wants it)
``available_commands``            ``available_commands_update``
``mode_changed``                  ``current_mode_update``
``context_window`` / ``complete`` ``usage_update`` (tokens in context, window size, cost)
the first prompt (live)           ``session_info_update`` (its first line as the title)
``compact_boundary``              ``compaction_update`` (completed) and an ``info`` ``notice``
================================= ==========================================================

Sub-agent text and reasoning (``parent_tool_call_id`` set) are not the assistant's answer and
are left out; the sub-agent's tool calls are shown, with the parent in ``_meta``.

Also here: the ACP tool kind of each normalized payload (:func:`tool_kind`), the permission
request's params and options (:func:`permission_request_params`), the decision an option
means (:func:`decision_for_option`), the stop reason of a finished turn (:func:`stop_reason`),
and the CLI's permission modes as ACP session modes (:data:`SESSION_MODES`).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from normalize import (
    AskUser,
    CodeSearch,
    CreateTask,
    Generic,
    HttpRequest,
    ManageTodos,
    Misc,
    ModifyFile,
    NormalizedPayload,
    ReadFile,
    ShellExec,
    ShowPlan,
    SubagentTask,
)

from ..events import (
    AvailableCommands,
    CompactBoundary,
    Complete,
    ContextWindow,
    Event,
    MessageChunk,
    ModeChanged,
    PermissionRequest,
    Reasoning,
    ToolCall,
    ToolProgress,
    ToolUpdate,
    UserMessage,
)
from ..policies import PermissionDecision

__all__ = (
    "decision_for_option",
    "mode_state",
    "PERMISSION_OPTIONS",
    "permission_request_params",
    "SESSION_MODES",
    "stop_reason",
    "StopReason",
    "tool_content",
    "tool_kind",
    "tool_locations",
    "ToolKind",
    "UpdateTranslator",
)

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]

#: The CLI's permission modes, offered as ACP session modes (``session/set_mode``).
SESSION_MODES: tuple[dict[str, str], ...] = (
    {
        "id": "default",
        "name": "Default",
        "description": "Ask before tools that change things",
    },
    {
        "id": "acceptEdits",
        "name": "Accept Edits",
        "description": "File edits run without asking",
    },
    {
        "id": "plan",
        "name": "Plan",
        "description": "Read and plan only; nothing is changed",
    },
    {
        "id": "auto",
        "name": "Auto",
        "description": "The CLI's classifier decides what runs without asking",
    },
    {
        "id": "dontAsk",
        "name": "Don't Ask",
        "description": "Never ask: what is not pre-approved is denied",
    },
    {
        "id": "bypassPermissions",
        "name": "Bypass Permissions",
        "description": "Every tool runs without any check (the CLI refuses this as root)",
    },
)

#: The four ways to answer a permission request (ACP option ids equal their kinds).
PERMISSION_OPTIONS: tuple[dict[str, str], ...] = (
    {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
)

_TODO_STATUS = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def mode_state(current: str | None) -> dict[str, Any]:
    """The ``modes`` of a ``session/new`` / ``session/load`` answer."""
    known = {m["id"] for m in SESSION_MODES}
    return {
        "currentModeId": current if current in known else "default",
        "availableModes": [dict(m) for m in SESSION_MODES],
    }


def tool_kind(payload: NormalizedPayload) -> ToolKind:
    """The ACP tool kind of a normalized payload."""
    if isinstance(payload, ReadFile):
        return "read"
    if isinstance(payload, ModifyFile):
        types = {m.type for m in payload.mutations}
        if types == {"delete"}:
            return "delete"
        if types == {"rename"}:
            return "move"
        return "edit"
    if isinstance(payload, ShellExec):
        return "execute"
    if isinstance(payload, CodeSearch):
        return "search"
    if isinstance(payload, HttpRequest):
        return "fetch"
    if isinstance(payload, SubagentTask | ManageTodos | CreateTask):
        return "think"
    if isinstance(payload, ShowPlan):
        return "switch_mode"
    return "other"


def _absolute(path: str, cwd: str | None) -> str:
    # ACP wants absolute paths; the model sometimes gives them relative to the session's cwd.
    if cwd and not os.path.isabs(path):
        return os.path.normpath(os.path.join(cwd, path))
    return path


def tool_locations(payload: NormalizedPayload, cwd: str | None = None) -> list[dict[str, Any]]:
    """The files (and lines) a call touches, for the editor to follow along (paths made
    absolute against ``cwd``)."""
    return [{**loc, "path": _absolute(loc["path"], cwd)} for loc in _locations(payload)]


def _locations(payload: NormalizedPayload) -> list[dict[str, Any]]:
    if isinstance(payload, ReadFile) and payload.file_path:
        loc: dict[str, Any] = {"path": payload.file_path}
        start = payload.offset
        if start is not None and start >= 1:
            loc["line"] = start
        return [loc]
    if isinstance(payload, ModifyFile) and payload.file_path:
        locs: list[dict[str, Any]] = []
        for m in payload.mutations:
            loc = {"path": payload.file_path}
            if m.start_line is not None and m.start_line >= 0:
                loc["line"] = m.start_line
            if loc not in locs:
                locs.append(loc)
            if m.new_path and {"path": m.new_path} not in locs:
                locs.append({"path": m.new_path})
        return locs or [{"path": payload.file_path}]
    if isinstance(payload, CodeSearch) and payload.path:
        return [{"path": payload.path}]
    return []


def _text(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _diffs(payload: ModifyFile, cwd: str | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    path = _absolute(payload.file_path, cwd)
    for m in payload.mutations:
        if m.type in ("create", "replace"):
            out.append({"type": "diff", "path": path, "newText": m.content or ""})
        elif m.type == "patch":
            out.append(
                {
                    "type": "diff",
                    "path": path,
                    "oldText": m.old_content or "",
                    "newText": m.new_content or "",
                }
            )
        elif m.type == "delete":
            out.append(
                {
                    "type": "diff",
                    "path": path,
                    "oldText": m.content or "",
                    "newText": "",
                }
            )
        elif m.type == "rename" and m.new_path:
            out.append(_text(f"{payload.file_path} -> {m.new_path}"))
    return out


def _output_text(payload: NormalizedPayload) -> str | None:
    """The text a finished call produced, as a person would read it."""
    if isinstance(payload, ShellExec) and payload.output is not None:
        out = payload.output
        parts = [p for p in (out.stdout, out.stderr) if p]
        if out.exit_code not in (None, 0):
            parts.append(f"Exit code {out.exit_code}")
        if out.interrupted:
            parts.append("(interrupted)")
        return "\n".join(parts)
    if isinstance(payload, ReadFile) and payload.output is not None:
        return payload.output.content
    if isinstance(payload, CodeSearch) and payload.output is not None:
        found = payload.output
        if found.matches:
            lines = []
            for match in found.matches:
                head = ":".join(str(x) for x in (match.path, match.line) if x is not None)
                body = match.text if match.text is not None else str(match.count or "")
                lines.append(f"{head}:{body}" if head else body)
            return "\n".join(lines)
        return "\n".join(found.files)
    if isinstance(payload, HttpRequest):
        if payload.links:
            return "\n".join(f"{link.title or link.url} <{link.url}>" for link in payload.links)
        return payload.response
    if isinstance(payload, SubagentTask) and payload.result is not None:
        return payload.result.output
    if isinstance(payload, Generic):
        return payload.output if isinstance(payload.output, str) else None
    if isinstance(payload, Misc):
        return payload.output
    if isinstance(payload, AskUser):
        answers = [f"{q.question} {q.answer}" for q in payload.questions if q.answer]
        return "\n".join(answers) or None
    return None


def tool_content(
    payload: NormalizedPayload, *, finished: bool, cwd: str | None = None
) -> list[dict[str, Any]]:
    """The ``content`` of a tool call: diffs for edits, the plan text, outputs as text."""
    if isinstance(payload, ModifyFile):
        content = _diffs(payload, cwd)
    elif isinstance(payload, ShowPlan) and payload.plan:
        content = [_text(payload.plan)]
    elif finished:
        text = _output_text(payload)
        content = [_text(text)] if text else []
    else:
        content = []
    if finished and payload.error:
        shown = "".join(c["content"]["text"] for c in content if c["type"] == "content")
        if payload.error not in shown:
            content.append(_text(payload.error))
    return content


def _plan(payload: ManageTodos) -> dict[str, Any]:
    entries = [
        {
            "content": item.description,
            "priority": "medium",
            "status": _TODO_STATUS.get(item.status or "", "pending"),
        }
        for item in payload.items
    ]
    return {"sessionUpdate": "plan", "entries": entries}


def _meta(tool_name: str, parent: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"toolName": tool_name}
    if parent is not None:
        meta["parentToolCallId"] = parent
    return {"claudeCode": meta}


def _chunk(kind: str, text: str, message_id: str) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id:
        update["messageId"] = message_id
    return update


class UpdateTranslator:
    """The ACP updates of one session's events; keeps what it needs between events (the
    tool calls it announced, the context window, the session's cost).

    ``cwd`` makes relative paths absolute, as ACP wants them. ``replay=True``
    (``session/load``) also sends the user's prompts as ``user_message_chunk``; live, the
    editor shows the prompts it sent itself.
    """

    def __init__(self, *, cwd: str | None = None, replay: bool = False) -> None:
        self.cwd = cwd
        self.replay = replay
        self._announced: set[str] = set()
        self._plans: set[str] = set()
        self._window: tuple[int, int] | None = None
        self._cost = 0.0
        self._titled = replay  # a loaded session has its title in the session list

    def updates(self, event: Event) -> list[dict[str, Any]]:
        """The ``update`` objects for ``event`` (often none)."""
        if isinstance(event, MessageChunk):
            if event.parent_tool_call_id is not None or not event.text:
                return []
            return [_chunk("agent_message_chunk", event.text, event.message_id)]
        if isinstance(event, Reasoning):
            if event.parent_tool_call_id is not None or not event.text:
                return []
            return [_chunk("agent_thought_chunk", event.text, event.message_id)]
        if isinstance(event, ToolCall):
            return self._tool_call(event)
        if isinstance(event, UserMessage) and not self._titled and event.text.strip():
            self._titled = True
            title = event.text.strip().splitlines()[0][:80]
            return [{"sessionUpdate": "session_info_update", "title": title}]
        if isinstance(event, CompactBoundary):
            return [
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": f"compaction-{event.seq}",
                    "status": "completed",
                },
                {"sessionUpdate": "notice", "severity": "info", "title": "Conversation compacted"},
            ]
        if isinstance(event, UserMessage):
            if not self.replay or not event.text:
                return []
            return [_chunk("user_message_chunk", event.text, "")]
        if isinstance(event, ToolProgress):
            if event.tool_call_id not in self._announced:
                return []
            return [
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": event.tool_call_id,
                    "status": "in_progress",
                }
            ]
        if isinstance(event, ToolUpdate):
            return self._tool_update(event)
        if isinstance(event, AvailableCommands):
            commands = []
            for c in event.commands:
                command: dict[str, Any] = {"name": c.name, "description": c.description}
                if c.argument_hint:
                    command["input"] = {"hint": c.argument_hint}
                commands.append(command)
            return [{"sessionUpdate": "available_commands_update", "availableCommands": commands}]
        if isinstance(event, ModeChanged):
            return [{"sessionUpdate": "current_mode_update", "currentModeId": event.mode}]
        if isinstance(event, ContextWindow):
            self._window = (max(0, event.used), max(0, event.size))
            return [self._usage()]
        if isinstance(event, Complete):
            if event.cost_usd > 0:
                self._cost += event.cost_usd
                if self._window is not None:
                    return [self._usage()]
            return []
        return []

    def running(self, tool_call_id: str) -> list[dict[str, Any]]:
        """The update saying an approved call now runs."""
        if tool_call_id not in self._announced:
            return []
        return [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": tool_call_id,
                "status": "in_progress",
            }
        ]

    def _usage(self) -> dict[str, Any]:
        used, size = self._window or (0, 0)
        update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": used, "size": size}
        if self._cost > 0:
            update["cost"] = {"amount": round(self._cost, 6), "currency": "USD"}
        return update

    def _tool_call(self, event: ToolCall) -> list[dict[str, Any]]:
        payload = event.normalized
        if isinstance(payload, ManageTodos) and payload.operation == "write":
            self._plans.add(event.tool_call_id)
            return [_plan(payload)]
        if event.tool_call_id in self._announced:
            return []
        self._announced.add(event.tool_call_id)
        update: dict[str, Any] = {
            "sessionUpdate": "tool_call",
            "toolCallId": event.tool_call_id,
            "title": event.title,
            "kind": tool_kind(payload),
            "status": "pending",
            "_meta": _meta(event.tool_name, event.parent_tool_call_id),
        }
        locations = tool_locations(payload, self.cwd)
        if locations:
            update["locations"] = locations
        content = tool_content(payload, finished=False, cwd=self.cwd)
        if content:
            update["content"] = content
        return [update]

    def _tool_update(self, event: ToolUpdate) -> list[dict[str, Any]]:
        if event.tool_call_id in self._plans:
            self._plans.discard(event.tool_call_id)
            return []
        payload = event.normalized
        status = "completed" if event.status == "complete" else "failed"
        update: dict[str, Any] = {
            "toolCallId": event.tool_call_id,
            "status": status,
            "title": event.title,
        }
        if event.tool_call_id in self._announced:
            update["sessionUpdate"] = "tool_call_update"
        else:
            # A result whose call we never saw (history that starts mid-way): announce it
            # complete, so the client has one well-formed tool call.
            update["sessionUpdate"] = "tool_call"
            update["kind"] = tool_kind(payload)
            update["_meta"] = _meta(event.tool_name, event.parent_tool_call_id)
        self._announced.discard(event.tool_call_id)
        locations = tool_locations(payload, self.cwd)
        if locations:
            update["locations"] = locations
        content = tool_content(payload, finished=True, cwd=self.cwd)
        if content or update["sessionUpdate"] == "tool_call_update":
            update["content"] = content
        return [update]


def permission_request_params(
    session_id: str, event: PermissionRequest, cwd: str | None = None
) -> dict[str, Any]:
    """The params of ``session/request_permission`` for an adapter permission request."""
    payload = event.normalized
    tool_call: dict[str, Any] = {
        "toolCallId": event.tool_call_id or event.pending_id,
        "title": event.title,
        "kind": tool_kind(payload),
        "status": "pending",
        "rawInput": event.input,
        "_meta": _meta(event.tool_name, event.parent_tool_call_id),
    }
    locations = tool_locations(payload, cwd)
    if locations:
        tool_call["locations"] = locations
    content = tool_content(payload, finished=False, cwd=cwd)
    if content:
        tool_call["content"] = content
    return {
        "sessionId": session_id,
        "toolCall": tool_call,
        "options": [dict(o) for o in PERMISSION_OPTIONS],
    }


def decision_for_option(option_id: str | None, *, updated_input: Any = None) -> PermissionDecision:
    """What the client's answer means for the CLI.

    ``allow_once`` / ``allow_always`` allow (``updated_input``, a dict, replaces the tool's
    input); ``reject_once`` and ``reject_always`` deny (the agent remembers ``always`` for the
    tool and denies its later requests without asking); ``None`` (the client cancelled the
    request) denies and interrupts the turn. An unknown option id denies: it must never mean
    allow.
    """
    new_input = updated_input if isinstance(updated_input, dict) else None
    if option_id == "allow_once":
        return PermissionDecision("allow", updated_input=new_input)
    if option_id == "allow_always":
        return PermissionDecision("allow_always", updated_input=new_input)
    if option_id == "reject_once":
        return PermissionDecision("deny", "The user rejected this tool call.")
    if option_id == "reject_always":
        return PermissionDecision("deny", "The user rejected this tool for this session.")
    if option_id is None:
        return PermissionDecision("deny", "The permission request was cancelled.", interrupt=True)
    return PermissionDecision("deny", f"Unknown answer {option_id!r}; denied.")


def stop_reason(complete: Complete, *, cancelled: bool) -> StopReason:
    """The ACP stop reason of a finished turn (``cancelled`` wins once the client cancelled)."""
    if cancelled:
        return "cancelled"
    if complete.subtype in ("error_max_turns", "error_max_budget_usd"):
        return "max_turn_requests"
    if complete.stop_reason == "max_tokens":
        return "max_tokens"
    if complete.stop_reason == "refusal":
        return "refusal"
    return "end_turn"
