"""Messages and content blocks with ``claude-agent-sdk``'s attribute shapes.

Plain dataclasses, as the official SDK has them, so code that reads
``message.content[0].text`` or ``result.total_cost_usd`` keeps working. They are built
from the client's typed messages (see ``_convert``), never parsed from dicts by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from ._types_sessions import SessionKey

__all__ = (
    "AssistantMessage",
    "ContentBlock",
    "ConversationResetMessage",
    "DeferredToolUse",
    "HookEventMessage",
    "Message",
    "MirrorErrorMessage",
    "RateLimitEvent",
    "RateLimitInfo",
    "ResultMessage",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "StreamEvent",
    "SystemMessage",
    "TaskNotificationMessage",
    "TaskProgressMessage",
    "TaskStartedMessage",
    "TaskUpdatedMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
)


@dataclass
class TextBlock:
    """Text content block."""

    text: str


@dataclass
class ThinkingBlock:
    """Thinking content block."""

    thinking: str
    signature: str


@dataclass
class ToolUseBlock:
    """Tool use content block."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResultBlock:
    """Tool result content block."""

    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


@dataclass
class ServerToolUseBlock:
    """A tool the API runs server-side (web search, advisor, ...)."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ServerToolResultBlock:
    """The result of a server-side tool call (the raw content from the API)."""

    tool_use_id: str
    content: dict[str, Any]


ContentBlock: TypeAlias = (
    TextBlock
    | ThinkingBlock
    | ToolUseBlock
    | ToolResultBlock
    | ServerToolUseBlock
    | ServerToolResultBlock
)


@dataclass
class UserMessage:
    """User message (prompts, replays and tool results)."""

    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: dict[str, Any] | None = None
    origin: dict[str, Any] | None = None


@dataclass
class AssistantMessage:
    """Assistant message with content blocks."""

    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


@dataclass
class SystemMessage:
    """System message: ``subtype`` and the whole line as ``data``."""

    subtype: str
    data: dict[str, Any]


@dataclass
class TaskStartedMessage(SystemMessage):
    """A background task (sub-agent, shell) started."""

    task_id: str
    description: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    task_type: str | None = None


@dataclass
class TaskProgressMessage(SystemMessage):
    """Progress of a background task."""

    task_id: str
    description: str
    usage: dict[str, Any]
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    last_tool_name: str | None = None


@dataclass
class TaskNotificationMessage(SystemMessage):
    """A background task finished (``status``: completed, failed, stopped)."""

    task_id: str
    status: str
    output_file: str
    summary: str
    uuid: str
    session_id: str
    tool_use_id: str | None = None
    usage: dict[str, Any] | None = None


@dataclass
class TaskUpdatedMessage(SystemMessage):
    """A background task's state changed (``patch`` holds the changed fields)."""

    task_id: str
    patch: dict[str, Any]
    status: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class HookEventMessage(SystemMessage):
    """A hook started or answered (only with ``include_hook_events``)."""

    hook_event_name: str = ""
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class MirrorErrorMessage(SystemMessage):
    """A session store's ``append`` failed (subtype ``mirror_error``); the session goes on,
    the local transcript is intact, the store may lack that batch."""

    key: SessionKey | None = None
    error: str = ""


@dataclass
class ConversationResetMessage:
    """The conversation was replaced without ending the connection (``/clear``); totals
    on later results start again from zero."""

    new_conversation_id: str
    uuid: str
    session_id: str


@dataclass
class DeferredToolUse:
    """A tool call the CLI deferred to the host."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ResultMessage:
    """The end of a turn: outcome, cost, usage, and structured output if asked for."""

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    model_usage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    deferred_tool_use: DeferredToolUse | None = None
    errors: list[str] | None = None
    api_error_status: int | None = None
    uuid: str | None = None
    terminal_reason: str | None = None
    origin: dict[str, Any] | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


@dataclass
class StreamEvent:
    """A raw Anthropic API stream event (``include_partial_messages``), as a dict."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


@dataclass
class RateLimitInfo:
    """Rate-limit state reported by the CLI."""

    status: str
    resets_at: int | None = None
    rate_limit_type: str | None = None
    utilization: float | None = None
    overage_status: str | None = None
    overage_resets_at: int | None = None
    overage_disabled_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class RateLimitEvent:
    """The CLI's rate-limit state changed."""

    rate_limit_info: RateLimitInfo
    uuid: str
    session_id: str


Message: TypeAlias = (
    UserMessage
    | AssistantMessage
    | SystemMessage
    | ResultMessage
    | StreamEvent
    | RateLimitEvent
    | ConversationResetMessage
)
