"""The client's typed messages as ``claude-agent-sdk`` dataclasses.

One dispatch on the message class (no re-parsing of dicts); ``None`` for what the official
SDK does not yield (control traffic, keep-alives, unknown or malformed lines).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from .. import content as c
from .. import messages as m
from ..lenient_info import LENIENT_KEY
from ..system_messages import (
    SystemHookResponse,
    SystemHookStarted,
    SystemTaskNotification,
    SystemTaskProgress,
    SystemTaskStarted,
    SystemTaskUpdated,
)
from . import messages as sdk

__all__ = ("to_sdk_message",)


def _builtins(value: Any) -> Any:
    """``value`` as plain JSON data, every modelled field included.

    ``msgspec.to_builtins`` would leave out fields at their default (a ``0`` token count,
    an empty ``content``), which the SDK's dicts, taken from the raw line, have.
    """
    if isinstance(value, msgspec.Struct):
        if value.__class__ is c.UnknownBlock:
            assert isinstance(value, c.UnknownBlock)
            return dict(value.data)
        config = value.__struct_config__
        out: dict[str, Any] = {}
        if isinstance(config.tag_field, str):
            out[config.tag_field] = config.tag
        for info in msgspec.structs.fields(value):
            if info.encode_name != LENIENT_KEY:
                out[info.encode_name] = _builtins(getattr(value, info.name))
        return out
    if isinstance(value, dict):
        return {key: _builtins(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_builtins(item) for item in value]
    if isinstance(value, msgspec.Raw):
        return msgspec.json.decode(value) if value else None
    if isinstance(value, c.LargeText):
        return str(value)  # the SDK's content is a plain string
    return value


def _block(block: c.ContentBlock) -> sdk.ContentBlock | None:
    kind = block.__class__
    if kind is c.TextBlock:
        assert isinstance(block, c.TextBlock)
        return sdk.TextBlock(text=block.text)
    if kind is c.ThinkingBlock:
        assert isinstance(block, c.ThinkingBlock)
        return sdk.ThinkingBlock(thinking=block.thinking, signature=block.signature or "")
    if kind is c.ToolUseBlock:
        assert isinstance(block, c.ToolUseBlock)
        return sdk.ToolUseBlock(id=block.id, name=block.name, input=dict(block.input))
    if kind is c.ToolResultBlock:
        assert isinstance(block, c.ToolResultBlock)
        return sdk.ToolResultBlock(
            tool_use_id=block.tool_use_id,
            content=_builtins(block.content),
            is_error=block.is_error,
        )
    if kind is c.ServerToolUseBlock:
        assert isinstance(block, c.ServerToolUseBlock)
        return sdk.ServerToolUseBlock(id=block.id, name=block.name, input=dict(block.input))
    return None


def _blocks(blocks: list[c.ContentBlock]) -> list[sdk.ContentBlock]:
    return [out for out in map(_block, blocks) if out is not None]


def _assistant(msg: m.AssistantMessage) -> sdk.AssistantMessage:
    body = msg.message
    return sdk.AssistantMessage(
        content=_blocks(body.content),
        model=body.model,
        parent_tool_use_id=msg.parent_tool_use_id,
        error=msg.error,
        usage=_builtins(body.usage),
        message_id=body.id or None,
        stop_reason=body.stop_reason,
        session_id=msg.session_id,
        uuid=msg.uuid,
        user_message_uuid=msg.user_message_uuid,
        user_message_uuids=msg.user_message_uuids,
    )


def _user(msg: m.UserMessage) -> sdk.UserMessage:
    content = msg.message.content
    raw = bytes(msg.tool_use_result)
    result = msgspec.json.decode(raw) if raw else None
    return sdk.UserMessage(
        content=content if isinstance(content, str) else _blocks(content),
        uuid=msg.uuid,
        parent_tool_use_id=msg.parent_tool_use_id,
        tool_use_result=result,
    )


def _result(msg: m.ResultMessage) -> sdk.ResultMessage:
    return sdk.ResultMessage(
        subtype=msg.subtype,
        duration_ms=msg.duration_ms,
        duration_api_ms=msg.duration_api_ms,
        is_error=msg.is_error,
        num_turns=msg.num_turns,
        session_id=msg.session_id or "",
        stop_reason=msg.stop_reason,
        total_cost_usd=msg.total_cost_usd,
        usage=_builtins(msg.usage),
        result=msg.result,
        structured_output=msg.structured_output,
        model_usage=_builtins(msg.model_usage),
        permission_denials=_builtins(msg.permission_denials),
        errors=msg.errors,
        api_error_status=msg.api_error_status,
        uuid=msg.uuid,
        terminal_reason=msg.terminal_reason,
        origin=msg.origin,
        user_message_uuid=msg.user_message_uuid,
        user_message_uuids=msg.user_message_uuids,
    )


def _stream_event(msg: m.StreamEvent) -> sdk.StreamEvent:
    event: dict[str, Any] = _builtins(msg.event)
    if isinstance(event.get("message"), dict):
        event["message"].setdefault("type", "message")  # message_start's envelope
    return sdk.StreamEvent(
        uuid=msg.uuid or "",
        session_id=msg.session_id or "",
        event=event,
        parent_tool_use_id=msg.parent_tool_use_id,
        user_message_uuid=msg.user_message_uuid,
        user_message_uuids=msg.user_message_uuids,
    )


def _rate_limit(msg: m.RateLimitEvent) -> sdk.RateLimitEvent:
    info = msg.rate_limit_info
    return sdk.RateLimitEvent(
        rate_limit_info=sdk.RateLimitInfo(
            status=info.status or "",
            resets_at=info.resets_at,
            rate_limit_type=info.rate_limit_type,
            utilization=info.utilization,
            overage_status=info.overage_status,
            overage_resets_at=info.overage_resets_at,
            raw=_builtins(info),
        ),
        uuid=msg.uuid or "",
        session_id=msg.session_id or "",
    )


def _system(msg: m.SystemMessage) -> sdk.SystemMessage:
    data: dict[str, Any] = {"type": "system", **_builtins(msg)}
    subtype = str(data.get("subtype", ""))
    sid, uuid = msg.session_id or "", msg.uuid or ""
    if isinstance(msg, SystemTaskStarted):
        return sdk.TaskStartedMessage(
            subtype, data, msg.task_id or "", msg.description or "", uuid, sid,
            tool_use_id=msg.tool_use_id, task_type=msg.task_type,
        )  # fmt: skip
    if isinstance(msg, SystemTaskProgress):
        return sdk.TaskProgressMessage(
            subtype, data, msg.task_id or "", msg.description or "", data.get("usage") or {},
            uuid, sid, tool_use_id=msg.tool_use_id, last_tool_name=msg.last_tool_name,
        )  # fmt: skip
    if isinstance(msg, SystemTaskNotification):
        return sdk.TaskNotificationMessage(
            subtype, data, msg.task_id or "", msg.status or "", msg.output_file or "",
            msg.summary or "", uuid, sid, tool_use_id=msg.tool_use_id, usage=data.get("usage"),
        )  # fmt: skip
    if isinstance(msg, SystemTaskUpdated):
        patch = dict(msg.patch)
        return sdk.TaskUpdatedMessage(
            subtype, data, msg.task_id or "", patch, patch.get("status"), msg.session_id, msg.uuid
        )
    if isinstance(msg, SystemHookStarted | SystemHookResponse):
        name = data.get("hook_event") or data.get("hook_name") or data.get("hook_event_name")
        return sdk.HookEventMessage(subtype, data, str(name or ""), msg.session_id, msg.uuid)
    return sdk.SystemMessage(subtype=subtype, data=data)


_BY_CLASS: dict[type, Callable[[Any], sdk.Message]] = {
    m.AssistantMessage: _assistant,
    m.UserMessage: _user,
    m.ResultMessage: _result,
    m.StreamEvent: _stream_event,
    m.RateLimitEvent: _rate_limit,
}


def _unknown(message: m.UnknownMessage) -> sdk.Message | None:
    # Types the client does not model but the SDK yields.
    if message.type == "conversation_reset" and message.raw:
        data = msgspec.json.decode(message.raw)
        ids = [data.get(k) for k in ("new_conversation_id", "uuid", "session_id")]
        if all(isinstance(value, str) for value in ids):
            return sdk.ConversationResetMessage(*ids)
    return None


def to_sdk_message(message: m.InboundMessage) -> sdk.Message | None:
    """The SDK dataclass for ``message``, or ``None`` when the SDK would not yield it."""
    convert = _BY_CLASS.get(message.__class__)
    if convert is not None:
        return convert(message)
    if message.__class__ is m.UnknownMessage:
        assert isinstance(message, m.UnknownMessage)
        return _unknown(message)
    if isinstance(message, m.SystemMessage):
        return _system(message)
    return None
