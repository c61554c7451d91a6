"""Wire shapes the fake CLI writes, copied from real 2.1.332 transcripts.

Every function returns a plain ``dict`` ready for ``json.dumps``. Key sets (and, where it
matters, key order — a ``result`` does not start with ``"type"``) follow the ``from_cli``
lines of ``tests/fixtures/transcripts/basic.jsonl``, ``bash_deny.jsonl``, ``interrupt.jsonl``
and friends. Values that only make sense for the real binary (paths under ``$HOME``, plugin
lists, capability flags) are small plausible stand-ins.

Nothing here imports the client's typed messages: the fake is an independent peer.
"""

from __future__ import annotations

import os
import secrets
import string
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = (
    "PERMISSION_MODES",
    "SessionInfo",
    "Usage",
    "assistant",
    "control_error",
    "control_request",
    "control_success",
    "initialize_response",
    "local_command_user",
    "new_id",
    "new_uuid",
    "result",
    "stream_event",
    "synthetic_api_error_assistant",
    "system_init",
    "system_status",
    "text_user",
    "tool_result_user",
)

Json = dict[str, Any]

#: Modes ``set_permission_mode`` accepts, in the order of the real CLI's error text.
PERMISSION_MODES = ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")

_ALNUM = string.ascii_letters + string.digits

# (input $/Mtok, output $/Mtok, context window) by model family; list prices as the CLI shows.
_PRICES: dict[str, tuple[float, float, int]] = {
    "opus": (4.0, 20.0, 1_000_000),
    "fable": (8.0, 40.0, 1_000_000),
    "sonnet": (2.0, 10.0, 1_000_000),
    "haiku": (0.10, 0.50, 200_000),
}


def new_uuid() -> str:
    """Return a random UUID string (the CLI's message uuids and control request ids)."""
    return str(uuid.uuid4())


def new_id(prefix: str) -> str:
    """Return an Anthropic-style id such as ``msg_…``, ``toolu_…`` or ``req_…``."""
    return prefix + "".join(secrets.choice(_ALNUM) for _ in range(24))


def _timestamp() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class SessionInfo:
    """Mutable per-process facts that appear in many messages."""

    session_id: str
    model: str
    cwd: str
    version: str
    permission_mode: str = "default"
    mcp_servers: list[Json] = field(default_factory=list)
    tools: list[str] = field(
        default_factory=lambda: [
            "Task",
            "AskUserQuestion",
            "Bash",
            "Edit",
            "Glob",
            "Grep",
            "NotebookEdit",
            "Read",
            "Skill",
            "TodoWrite",
            "ToolSearch",
            "WebFetch",
            "WebSearch",
            "Write",
        ]
    )


@dataclass
class Usage:
    """Token counts accumulated over one turn (one ``result``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    api_ms: int = 0

    def cost(self, model: str) -> float:
        """Return the list-price cost in USD for these tokens on ``model``."""
        price_in, price_out, _ = _price(model)
        return (self.input_tokens * price_in + self.output_tokens * price_out) / 1_000_000


def _price(model: str) -> tuple[float, float, int]:
    for family, price in _PRICES.items():
        if family in model:
            return price
    return _PRICES["sonnet"]


# --------------------------------------------------------------------------- control plane


def control_success(request_id: str, body: Json | None = None, **extra: Any) -> Json:
    """A ``control_response`` of subtype success (``body`` omitted when ``None``)."""
    response: Json = {"subtype": "success", "request_id": request_id}
    if body is not None:
        response["response"] = body
    response.update(extra)
    return {"type": "control_response", "response": response}


def control_error(request_id: str, error: str, error_code: str | None = None) -> Json:
    """A ``control_response`` of subtype error, with ``error_code`` as 2.1.332 adds it."""
    response: Json = {"subtype": "error", "request_id": request_id, "error": error}
    if error_code is not None:
        response["error_code"] = error_code
    return {"type": "control_response", "response": response}


def control_request(request_id: str, request: Json) -> Json:
    """A ``control_request`` from the CLI to the host."""
    return {"type": "control_request", "request_id": request_id, "request": request}


def initialize_response(info: SessionInfo, request_id: str, *, hooks_applied: bool) -> Json:
    """The success answer to ``initialize`` (what 2.1.332 sends, trimmed to plausible values)."""
    body: Json = {
        "commands": [
            {
                "name": "compact",
                "description": "Clear conversation history but keep a summary",
                "argumentHint": "",
                "builtin": True,
            },
            {
                "name": "review",
                "description": "Review a pull request",
                "argumentHint": "",
                "builtin": True,
            },
        ],
        "agents": [
            {
                "name": "general-purpose",
                "description": "General-purpose agent for multi-step tasks",
            },
            {"name": "Explore", "description": "Fast read-only search agent", "model": "inherit"},
        ],
        "output_style": "default",
        "available_output_styles": ["default", "Explanatory", "Learning"],
        "models": [
            _model_entry("default", info.model, "Default (recommended)"),
            _model_entry("sonnet", "claude-sonnet-4-5", "Sonnet"),
            _model_entry("haiku", "claude-haiku-4-5", "Haiku"),
        ],
        "account": {"tokenSource": "none", "apiKeySource": "none", "apiProvider": "firstParty"},
        "pid": os.getpid(),
        "claude_code_version": info.version,
        "current_permission_mode": info.permission_mode,
    }
    if hooks_applied:
        body["hooks_applied"] = True
    body.update(
        {
            "analytics_disabled": True,
            "sandbox_enabled": False,
            "fast_mode_state": "off",
            "session_state": "idle",
            "capabilities": ["ui_surface_v1"],
        }
    )
    return control_success(
        request_id, body, pending_permission_requests=[], pending_user_dialog_requests=[]
    )


def _model_entry(value: str, resolved: str, display: str) -> Json:
    return {
        "value": value,
        "resolvedModel": resolved,
        "displayName": display,
        "description": f"{display} (fake)",
        "supportsEffort": True,
        "supportedEffortLevels": ["low", "medium", "high"],
        "supportsAdaptiveThinking": True,
    }


# --------------------------------------------------------------------------- system


def system_init(info: SessionInfo) -> Json:
    """``system/init``: once per turn, right after the user message is taken."""
    return {
        "type": "system",
        "subtype": "init",
        "cwd": info.cwd,
        "session_id": info.session_id,
        "tools": list(info.tools),
        "mcp_servers": list(info.mcp_servers),
        "model": info.model,
        "permissionMode": info.permission_mode,
        "slash_commands": ["compact", "review", "context", "cost"],
        "apiKeySource": "none",
        "claude_code_version": info.version,
        "output_style": "default",
        "agents": ["general-purpose", "Explore"],
        "skills": [],
        "plugins": [],
        "capabilities": ["interrupt_receipt_v1"],
        "analytics_disabled": True,
        "uuid": new_uuid(),
        "sandbox_enabled": False,
        "memory_paths": {},
        "original_cwd": info.cwd,
        "additional_directories": [],
        "fast_mode_state": "off",
    }


def system_status(
    info: SessionInfo, status: str | None = "requesting", *, permission_mode: str | None = None
) -> Json:
    """``system/status``: ``requesting`` before each API call, or a permission-mode change."""
    msg: Json = {"type": "system", "subtype": "status", "status": status}
    if permission_mode is not None:
        msg["permissionMode"] = permission_mode
    msg["session_id"] = info.session_id
    msg["uuid"] = new_uuid()
    return msg


# --------------------------------------------------------------------------- model output


def stream_event(info: SessionInfo, event: Json, api_message_id: str, **extra: Any) -> Json:
    """A ``stream_event`` wrapping one raw SSE event."""
    msg: Json = {
        "type": "stream_event",
        "event": event,
        "session_id": info.session_id,
        "parent_tool_use_id": None,
        "uuid": new_uuid(),
    }
    msg.update(extra)
    msg["api_message_id"] = api_message_id
    return msg


def assistant(
    info: SessionInfo,
    message_id: str,
    request_id: str,
    block: Json,
    input_tokens: int,
    *,
    aborted: bool = False,
) -> Json:
    """One ``assistant`` line per completed content block; ``stop_reason`` is always null."""
    msg: Json = {
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": info.model,
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": message_usage(input_tokens),
            "context_management": None,
        },
        "parent_tool_use_id": None,
        "session_id": info.session_id,
        "uuid": new_uuid(),
        "timestamp": _timestamp(),
        "request_id": request_id,
    }
    if aborted:
        msg["aborted"] = True
    return msg


def message_usage(input_tokens: int) -> Json:
    """The ``usage`` of ``message_start`` (output_tokens is always 1 there)."""
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
        "service_tier": "standard",
    }


def synthetic_api_error_assistant(info: SessionInfo, status: int, text: str, kind: str) -> Json:
    """The ``<synthetic>`` assistant line the CLI emits when the API call failed for good."""
    return {
        "type": "assistant",
        "message": {
            "id": new_uuid(),
            "model": "<synthetic>",
            "role": "assistant",
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": {
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
            "content": [{"type": "text", "text": text}],
            "context_management": None,
        },
        "parent_tool_use_id": None,
        "session_id": info.session_id,
        "uuid": new_uuid(),
        "timestamp": _timestamp(),
        "error": "unknown",
        "request_id": new_id("req_"),
        "is_api_error_message": True,
        "api_error_status": status,
        "api_error_type": kind,
    }


def tool_result_user(
    info: SessionInfo,
    tool_use_id: str,
    content: str,
    *,
    is_error: bool,
    tool_use_result: Any,
    decision: Json,
    non_execution_kind: str | None = None,
) -> Json:
    """The ``user`` line carrying one ``tool_result`` plus ``tool_use_result`` and its meta."""
    if is_error:
        block: Json = {
            "type": "tool_result",
            "content": content,
            "is_error": True,
            "tool_use_id": tool_use_id,
        }
    else:
        block = {
            "tool_use_id": tool_use_id,
            "type": "tool_result",
            "content": content,
            "is_error": False,
        }
    meta: Json = {"id": tool_use_id}
    if non_execution_kind is not None:
        meta["non_execution_kind"] = non_execution_kind
    meta["permission_decision"] = decision
    return {
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "parent_tool_use_id": None,
        "session_id": info.session_id,
        "uuid": new_uuid(),
        "timestamp": _timestamp(),
        "tool_use_result": tool_use_result,
        "tool_result_meta": [meta],
    }


def text_user(info: SessionInfo, text: str) -> Json:
    """A ``user`` line with one text block, e.g. ``[Request interrupted by user]``."""
    return {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": None,
        "session_id": info.session_id,
        "uuid": new_uuid(),
        "timestamp": _timestamp(),
    }


def local_command_user(info: SessionInfo, text: str) -> Json:
    """The ``<local-command-stdout>`` echo the CLI writes for ``set_model``."""
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": f"<local-command-stdout>{text}</local-command-stdout>",
        },
        "session_id": info.session_id,
        "parent_tool_use_id": None,
        "uuid": new_uuid(),
        "timestamp": _timestamp(),
    }


def result(
    info: SessionInfo,
    *,
    subtype: str,
    is_error: bool,
    text: str | None,
    stop_reason: str | None,
    terminal_reason: str,
    num_turns: int,
    usage: Usage,
    duration_ms: int,
    permission_denials: list[Json],
    message_ids: list[str],
    errors: list[str] | None = None,
    api_error_status: int | None = None,
) -> Json:
    """The ``result`` line that ends a turn (key order as 2.1.332: ``type`` is not first)."""
    cost = usage.cost(info.model)
    model_usage = {
        info.model: {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "webSearchRequests": 0,
            "costUSD": cost,
            "contextWindow": _price(info.model)[2],
            "maxOutputTokens": 128000 if "haiku" not in info.model else 64000,
            "thinkingTokens": 0,
            "canonicalModel": info.model,
            "provider": "firstParty",
            "costBasis": "list",
        }
    }
    msg: Json = {
        "duration_api_ms": usage.api_ms,
        "stop_reason": stop_reason,
        "session_id": info.session_id,
        "total_cost_usd": cost,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"thinking_tokens": 0},
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
        },
        "modelUsage": model_usage,
        "permission_denials": permission_denials,
        "terminal_reason": terminal_reason,
        "fast_mode_state": "off",
        "is_error": is_error,
        "num_turns": num_turns,
        "subtype": subtype,
    }
    if errors is not None:
        msg["errors"] = errors
    else:
        msg["api_error_status"] = api_error_status
        msg["result"] = text if text is not None else ""
    msg.update(
        {
            "type": "result",
            "duration_ms": duration_ms,
            "uuid": new_uuid(),
            "begun_message_ids": message_ids,
            "queued_turn_count": 0,
            "result_index": 0,
            "model_usage_since_last_result": model_usage,
        }
    )
    return msg
