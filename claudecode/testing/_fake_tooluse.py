"""Tool-use handling of the fake CLI: hooks, permission prompts, the tool, the tool_result.

For one ``tool_use`` block: PreToolUse ``hook_callback`` requests (the strictest
``permissionDecision`` wins), then ``can_use_tool`` when the tool needs permission (or a hook
said ``ask``), then the simulated tool, PostToolUse hooks, and the ``user`` tool_result line.
Denials are recorded for the result's ``permission_denials``.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _fake_messages as m
from ._fake_interrupt import Interrupted
from ._fake_tools import EDIT_TOOLS, READ_ONLY_TOOLS, ToolOutcome, run_tool

if TYPE_CHECKING:
    from ._fake_cli import FakeCLI

__all__ = ("BIG_MARKER", "OpenBlock", "TurnState", "tool_use")

Json = dict[str, Any]

#: Placeholder for the content of a ``result_bytes`` tool_result, replaced while writing.
BIG_MARKER = "@@claudecode-fake-cli-big-content@@"
# When several hooks answer, the strictest decision wins.
_RANK = {"allow": 1, "ask": 2, "deny": 3}


@dataclass
class OpenBlock:
    """The content block being streamed, kept for the partial message of an interrupt."""

    index: int
    block: Json
    so_far: str = ""


@dataclass
class TurnState:
    """What one turn accumulated so far (for its result line)."""

    started: float = field(default_factory=time.monotonic)
    usage: m.Usage = field(default_factory=m.Usage)
    message_ids: list[str] = field(default_factory=list)
    denials: list[Json] = field(default_factory=list)
    result_text: str = ""
    stop_reason: str | None = None
    message_id: str | None = None
    request_id: str = ""
    input_tokens: int = 0
    open_block: OpenBlock | None = None
    current_tool_id: str | None = None


def _matches(matcher: str | None, tool: str) -> bool:
    if matcher in (None, "", "*"):
        return True
    try:
        return re.fullmatch(str(matcher), tool) is not None
    except re.error:
        return matcher == tool


def _hook_input(cli: FakeCLI, event: str, name: str, tool_input: Json, tool_id: str) -> Json:
    info = cli.info
    return {
        "session_id": info.session_id,
        "transcript_path": os.path.join(info.cwd, ".claude", f"{info.session_id}.jsonl"),
        "cwd": info.cwd,
        "prompt_id": m.new_uuid(),
        "permission_mode": info.permission_mode,
        "effort": {"level": "medium"},
        "hook_event_name": event,
        "tool_name": name,
        "tool_input": tool_input,
        "tool_use_id": tool_id,
    }


def _fire_hooks(cli: FakeCLI, event: str, name: str, hook_input: Json) -> tuple[str | None, str]:
    """Send a hook_callback per matching callback id; return the first permission decision."""
    decision: str | None = None
    reason = ""
    for matcher, ids in cli.hooks.get(event, []):
        if not _matches(matcher, name):
            continue
        for callback_id in ids:
            reply = cli.request(
                {
                    "subtype": "hook_callback",
                    "callback_id": callback_id,
                    "input": hook_input,
                    "tool_use_id": hook_input["tool_use_id"],
                }
            )
            body = reply.get("response") or {}
            if reply.get("subtype") != "success" or not isinstance(body, dict):
                continue
            specific = body.get("hookSpecificOutput") or {}
            said = specific.get("permissionDecision")
            if body.get("decision") == "block":
                said, specific = "deny", {"permissionDecisionReason": body.get("reason", "")}
            if _RANK.get(str(said), 0) > _RANK.get(str(decision), 0):
                decision = str(said)
                reason = str(specific.get("permissionDecisionReason", ""))
    return decision, reason


def _needs_permission(cli: FakeCLI, spec: Json) -> bool:
    if "permission" in spec:
        return bool(spec["permission"])
    name, mode = spec["name"], cli.info.permission_mode
    if mode == "bypassPermissions" or name in READ_ONLY_TOOLS:
        return False
    return not (mode == "acceptEdits" and name in EDIT_TOOLS)


def _suggestions(cli: FakeCLI, name: str, tool_input: Json) -> list[Json]:
    set_mode = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    if name in EDIT_TOOLS:
        return [set_mode]
    rule: Json = {"toolName": name}
    if name == "Bash":
        rule["ruleContent"] = str(tool_input.get("command", ""))
        return [
            {
                "type": "addRules",
                "rules": [rule],
                "behavior": "allow",
                "destination": "localSettings",
            },
            {"type": "addDirectories", "directories": [cli.info.cwd], "destination": "session"},
            set_mode,
        ]
    return [
        {"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "localSettings"}
    ]


def _can_use_tool(cli: FakeCLI, spec: Json, tool_input: Json, hook_reason: str | None) -> Json:
    name = spec["name"]
    body: Json = {
        "subtype": "can_use_tool",
        "tool_name": name,
        "display_name": name,
        "input": tool_input,
    }
    if "description" in tool_input:
        body["description"] = tool_input["description"]
    elif "file_path" in tool_input:
        body["description"] = os.path.basename(str(tool_input["file_path"]))
    if hook_reason is not None:
        body.update(
            {
                "decision_reason": hook_reason,
                "decision_reason_type": "hook",
                "decision_reason_hook_event": "PreToolUse",
                "decision_reason_hook_source": "settings",
            }
        )
    else:
        body["permission_suggestions"] = _suggestions(cli, name, tool_input)
        blocked = spec.get("blocked_path", cli.info.cwd if name == "Bash" else None)
        if blocked is not None:
            body["blocked_path"] = blocked
    body["tool_use_id"] = spec["id"]
    return body


def tool_use(cli: FakeCLI, spec: Json, state: TurnState) -> None:
    info, out = cli.info, cli.out
    name, tool_id = str(spec["name"]), str(spec["id"])
    tool_input: Json = dict(spec.get("input") or {})
    state.current_tool_id = tool_id

    def reject(content: str, source: str, kind: str = "permission-rule", deny: bool = True) -> None:
        if deny:
            state.denials.append(
                {"tool_name": name, "tool_use_id": tool_id, "tool_input": tool_input}
            )
        decision = {"decision": "reject", "source": source}
        if source == "hook":
            decision["reason_type"] = "hook"
        out.send(
            m.tool_result_user(
                info,
                tool_id,
                content,
                is_error=True,
                tool_use_result=f"Error: {content}",
                decision=decision,
                non_execution_kind=kind,
            )
        )

    pre_input = _hook_input(cli, "PreToolUse", name, tool_input, tool_id)
    hook, hook_reason = _fire_hooks(cli, "PreToolUse", name, pre_input)
    if hook == "deny":
        reject(f"PreToolUse:{name} hook error: {hook_reason}", "hook")
        return
    decision: Json = {"decision": "accept", "source": "config", "reason_type": "mode"}
    if hook == "allow":
        decision = {"decision": "accept", "source": "hook", "reason_type": "hook"}
    elif hook == "ask" or _needs_permission(cli, spec):
        if cli.prompt_tool != "stdio":
            text = f"{name} needs approval, and this session has no permission prompt tool."
            out.send(
                {
                    "type": "system",
                    "subtype": "permission_denied",
                    "tool_name": name,
                    "tool_use_id": tool_id,
                    "message": text,
                    "uuid": m.new_uuid(),
                    "session_id": info.session_id,
                }
            )
            reject(text, "config")
            return
        reply = cli.request(
            _can_use_tool(cli, spec, tool_input, hook_reason if hook == "ask" else None)
        )
        body = reply.get("response") or {}
        behavior = body.get("behavior") if isinstance(body, dict) else None
        if reply.get("subtype") != "success" or behavior not in ("allow", "deny"):
            error = reply.get("error") or f"invalid permission response {body!r}"
            reject(f"Tool permission request failed: {error}", "user_reject", deny=False)
            return
        if behavior == "deny":
            reject(str(body.get("message", "Permission denied")), "user_reject")
            if body.get("interrupt"):
                raise Interrupted(tool_result_sent=True)
            return
        if isinstance(body.get("updatedInput"), dict):
            tool_input = dict(body["updatedInput"])
        decision = {"decision": "accept", "source": "user_temporary"}
    started = time.monotonic()
    size = spec.get("result_bytes")
    if size is not None:
        outcome = ToolOutcome(
            BIG_MARKER,
            False,
            {
                "stdout": f"({size} bytes)",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
                "noOutputExpected": False,
            },
        )
    else:
        outcome = run_tool(name, tool_input, info.cwd, spec)
        answers = tool_input.get("answers")
        if name == "AskUserQuestion" and isinstance(answers, dict) and not outcome.is_error:
            cli.answers.update({str(k): str(v) for k, v in answers.items()})
    post_input = _hook_input(cli, "PostToolUse", name, tool_input, tool_id)
    del post_input["tool_use_id"]
    post_input["tool_response"] = outcome.tool_use_result
    post_input["tool_use_id"] = tool_id
    post_input["duration_ms"] = int((time.monotonic() - started) * 1000)
    _fire_hooks(cli, "PostToolUse", name, post_input)
    line = m.tool_result_user(
        info,
        tool_id,
        outcome.content,
        is_error=outcome.is_error,
        tool_use_result=outcome.tool_use_result,
        decision=decision,
    )
    if size is not None:
        out.send_big(line, BIG_MARKER, int(size))
    else:
        out.send(line)
