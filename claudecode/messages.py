"""Inbound messages: every line the CLI writes on stdout, as frozen msgspec Structs.

The top-level union is tagged by ``"type"``. ``system`` lines are split further by
``"subtype"`` (see :mod:`claudecode.system_messages`), ``stream_event`` lines carry a raw SSE
event (see :mod:`claudecode.stream_events`), and ``control_request`` lines carry a body tagged
by ``"subtype"``. Two classes are not on the wire at all:

* :class:`UnknownMessage` -- a well-formed line whose ``type`` (or ``subtype``) this version
  does not know. Not an error: forward compatibility.
* :class:`MalformedLine` -- a line that is not JSON, or JSON of the wrong shape. The stream
  goes on after it.

A line of a known type with a field of the wrong type, or without a required field nobody
needs, still arrives as its own class: it is decoded leniently (the field keeps its default,
a missing one gets the zero value of its type) and carries a :class:`Lenient` in
``message.lenient`` with the raw line and the repairs made. Only a few essential fields
(``claudecode._codec.lenient.ESSENTIAL_FIELDS``: the ``message`` of an assistant or user line, the
``event`` of a stream event and its ``index`` / ``content_block`` / ``delta``, a control
request's ``request_id`` / ``request`` / ``tool_name`` / ``input`` / ``callback_id`` /
``server_name``, a control answer's ``request_id``; and the ``subtype`` of a system line)
cannot be done without: then the line is an :class:`UnknownMessage` with the raw line and a
``reason``. Lone surrogate escapes (``"\\ud83d"``) decode as U+FFFD.

Unknown keys are ignored everywhere. Decode lines with :func:`claudecode._codec.decode_line`.

For convenience this module re-exports the ``System*`` classes of
:mod:`claudecode.system_messages`, the control-plane classes of
:mod:`claudecode.messages_control` (the CLI's requests, with their reply helpers), and
:class:`~claudecode.control.ControlSuccess` / :class:`~claudecode.control.ControlFailure`
(the ``response`` of a ``control_response``, the same shape in both directions).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

from .content import ContentBlock
from .lenient_info import LENIENT_KEY, Lenient
from .messages_control import (
    CanUseToolRequest,
    ControlCancelRequest,
    HookCallbackRequest,
    InboundControlRequest,
    InboundControlRequestBody,
    InboundControlResponse,
    McpMessageRequest,
)
from .outbound import ControlFailure, ControlSuccess
from .stream_events import AbandonedBlocks, ApiMessage, StreamEventPayload, Usage
from .system_messages import (
    SystemApiRetry,
    SystemBackgroundTasksChanged,
    SystemCompactBoundary,
    SystemElicitationComplete,
    SystemFilesPersisted,
    SystemHookProgress,
    SystemHookResponse,
    SystemHookStarted,
    SystemInformational,
    SystemInit,
    SystemLocalCommandOutput,
    SystemMessage,
    SystemMessageUnion,
    SystemPermissionDenied,
    SystemStatus,
    SystemTaskNotification,
    SystemTaskProgress,
    SystemTaskStarted,
    SystemTaskUpdated,
    SystemThinkingTokens,
)

__all__ = (
    "AssistantMessage",
    "AuthStatus",
    "CanUseToolRequest",
    "CommandLifecycle",
    "ControlCancelRequest",
    "ControlFailure",
    "ControlSuccess",
    "HookCallbackRequest",
    "InboundControlRequest",
    "InboundControlRequestBody",
    "InboundControlResponse",
    "InboundMessage",
    "KeepAlive",
    "Lenient",
    "MalformedLine",
    "McpMessageRequest",
    "ModelUsage",
    "PermissionDecision",
    "PermissionDenial",
    "PromptSuggestion",
    "RateLimit",
    "RateLimitEvent",
    "RateLimitInfo",
    "ResultMessage",
    "StreamEvent",
    "SystemApiRetry",
    "SystemBackgroundTasksChanged",
    "SystemCompactBoundary",
    "SystemElicitationComplete",
    "SystemFilesPersisted",
    "SystemHookProgress",
    "SystemHookResponse",
    "SystemHookStarted",
    "SystemInformational",
    "SystemInit",
    "SystemLocalCommandOutput",
    "SystemMessage",
    "SystemPermissionDenied",
    "SystemStatus",
    "SystemTaskNotification",
    "SystemTaskProgress",
    "SystemTaskStarted",
    "SystemTaskUpdated",
    "SystemThinkingTokens",
    "ToolProgress",
    "ToolResultMeta",
    "ToolUseMeta",
    "ToolUseSummary",
    "UnknownMessage",
    "UserMessage",
    "UserMessageBody",
)


class _Inbound(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of the top-level inbound messages."""

    #: Set when the line only decoded after repairs (see :class:`~claudecode.lenient_info.Lenient`).
    lenient: Lenient | None = msgspec.field(default=None, name=LENIENT_KEY)


class _Struct(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the nested untagged structs."""


# ------------------------------------------------------------------------ assistant / user


class ToolUseMeta(_Struct, frozen=True):
    """Display metadata of an MCP tool call in an ``assistant`` line."""

    id: str | None = None
    display_name: str | None = None
    server_display_name: str | None = None
    tool_name: str | None = None


class AssistantMessage(_Inbound, frozen=True, tag="assistant"):
    """One content block of a model response (the CLI sends one line per block).

    ``message.stop_reason`` is ``None`` here; see :class:`~claudecode.stream_events.MessageDelta`
    and :class:`ResultMessage` for the real one. Sub-agent lines have ``parent_tool_use_id``
    set to the ``Agent`` tool call and carry ``agent_id``.
    """

    message: ApiMessage
    parent_tool_use_id: str | None = None
    session_id: str | None = None
    uuid: str | None = None
    timestamp: str | None = None
    request_id: str | None = None
    agent_id: str | None = None
    subagent_type: str | None = None
    task_description: str | None = None
    #: ``True`` on the partial message of an interrupted turn (2.1.332).
    aborted: bool = False
    #: Set on the CLI's synthetic error message, e.g. ``"unknown"``, ``"rate_limit"``.
    error: str | None = None
    is_api_error_message: bool = False
    api_error_status: int | None = None
    api_error_type: str | None = None
    tool_use_meta: list[ToolUseMeta] | None = None
    thinking_display: str | None = None
    thinking_duration_ms: int | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


class UserMessageBody(_Struct, frozen=True):
    """The ``message`` of a :class:`UserMessage`: a string or content blocks."""

    content: str | list[ContentBlock] = ""
    role: str = "user"


class PermissionDecision(_Struct, frozen=True):
    """How a tool call was allowed (``decision`` ``"accept"``/``"reject"``) and by whom."""

    decision: str | None = None
    #: ``"config"``, ``"user_temporary"``, ``"user_reject"``, ``"hook"`` ...
    source: str | None = None
    reason_type: str | None = None


class ToolResultMeta(_Struct, frozen=True):
    """Per tool result: the permission decision behind it (2.1.332)."""

    id: str | None = None
    permission_decision: PermissionDecision | None = None
    non_execution_kind: str | None = None


class UserMessage(_Inbound, frozen=True, tag="user"):
    """A user turn as the CLI records it: tool results, replays, interruption notes.

    ``tool_use_result`` is the tool's structured output (Bash ``{stdout, stderr, ...}``,
    Write ``{type, filePath, ...}`` ...), kept as undecoded JSON (a :class:`msgspec.Raw`,
    empty when the line has none); :meth:`tool_use_result_value` decodes it.
    """

    message: UserMessageBody
    parent_tool_use_id: str | None = None
    session_id: str | None = None
    uuid: str | None = None
    timestamp: str | None = None
    tool_use_result: msgspec.Raw = msgspec.Raw()
    tool_result_meta: list[ToolResultMeta] | None = None
    #: An echo of our own prompt (``--replay-user-messages``).
    is_replay: bool = msgspec.field(default=False, name="isReplay")
    #: Written by the CLI itself (e.g. its "response was cut off" nudge).
    is_synthetic: bool = msgspec.field(default=False, name="isSynthetic")
    agent_id: str | None = None
    subagent_type: str | None = None
    task_description: str | None = None

    def tool_use_result_value(self) -> Any:
        """Decode ``tool_use_result`` into plain Python objects (``None`` when absent)."""
        if not self.tool_use_result:
            return None
        return msgspec.json.decode(self.tool_use_result)


# ------------------------------------------------------------------------------ result


class ModelUsage(_Struct, frozen=True):
    """Per-model totals in a result's ``modelUsage`` (camelCase on the wire)."""

    input_tokens: int = msgspec.field(default=0, name="inputTokens")
    output_tokens: int = msgspec.field(default=0, name="outputTokens")
    cache_read_input_tokens: int = msgspec.field(default=0, name="cacheReadInputTokens")
    cache_creation_input_tokens: int = msgspec.field(default=0, name="cacheCreationInputTokens")
    web_search_requests: int = msgspec.field(default=0, name="webSearchRequests")
    cost_usd: float = msgspec.field(default=0.0, name="costUSD")
    #: The model's context window in tokens (e.g. ``1000000``).
    context_window: int | None = msgspec.field(default=None, name="contextWindow")
    max_output_tokens: int | None = msgspec.field(default=None, name="maxOutputTokens")
    thinking_tokens: int | None = msgspec.field(default=None, name="thinkingTokens")
    cache_creation_ephemeral_5m_input_tokens: int | None = msgspec.field(
        default=None, name="cacheCreationEphemeral5mInputTokens"
    )
    cache_creation_ephemeral_1h_input_tokens: int | None = msgspec.field(
        default=None, name="cacheCreationEphemeral1hInputTokens"
    )
    canonical_model: str | None = msgspec.field(default=None, name="canonicalModel")
    provider: str | None = None
    cost_basis: str | None = msgspec.field(default=None, name="costBasis")


class PermissionDenial(_Struct, frozen=True):
    """A tool call that was denied during the turn."""

    tool_name: str = ""
    tool_use_id: str = ""
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)


class ResultMessage(_Inbound, frozen=True, tag="result"):
    """The end of a turn.

    ``subtype`` is ``"success"`` or an ``error_*`` value (``error_during_execution``,
    ``error_max_turns`` ...). Note that API errors end with ``subtype="success"`` and
    ``is_error=True``; ``terminal_reason`` says how the turn ended (``"completed"``,
    ``"aborted_streaming"``, ``"aborted_tools"``, ``"api_error"`` ...).
    """

    subtype: str
    is_error: bool = False
    result: str | None = None
    num_turns: int = 0
    duration_ms: int = 0
    duration_api_ms: int = 0
    total_cost_usd: float = 0.0
    usage: Usage | None = None
    model_usage: dict[str, ModelUsage] = msgspec.field(default_factory=dict, name="modelUsage")
    permission_denials: list[PermissionDenial] = msgspec.field(default_factory=list)
    terminal_reason: str | None = None
    stop_reason: str | None = None
    api_error_status: int | None = None
    api_error_type: str | None = None
    #: Diagnostics of an ``error_*`` result.
    errors: list[str] | None = None
    session_id: str | None = None
    uuid: str | None = None
    ttft_ms: int | None = None
    #: Why the turn started, e.g. ``{"kind": "task-notification", ...}`` for a self-started one.
    origin: dict[str, Any] | None = None
    structured_output: Any = None
    subagent_stats: dict[str, Any] | None = None
    fast_mode_state: str | None = None
    begun_message_ids: list[str] | None = None
    result_index: int | None = None
    queued_turn_count: int | None = None
    model_usage_since_last_result: dict[str, ModelUsage] | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


# ------------------------------------------------------------------------ stream_event


class StreamEvent(_Inbound, frozen=True, tag="stream_event", gc=False):
    """A raw Messages-API SSE event (``--include-partial-messages``)."""

    # gc=False: see ContentBlockDelta (most lines are stream events; frozen, decoded from
    # JSON, they cannot form reference cycles).

    event: StreamEventPayload
    session_id: str | None = None
    parent_tool_use_id: str | None = None
    uuid: str | None = None
    #: The id of the API message the event belongs to (2.1.332).
    api_message_id: str | None = None
    ttft_ms: int | None = None
    thinking_display: str | None = None
    #: On ``message_stop`` after a broken stream: blocks that will not complete.
    abandoned_blocks: AbandonedBlocks | None = None
    user_message_uuid: str | None = None
    user_message_uuids: list[str] | None = None


# ------------------------------------------------------------------- small line types


class ToolProgress(_Inbound, frozen=True, tag="tool_progress"):
    """A long-running tool is still running."""

    tool_use_id: str | None = None
    tool_name: str | None = None
    parent_tool_use_id: str | None = None
    elapsed_time_seconds: float | None = None
    session_id: str | None = None
    uuid: str | None = None


class ToolUseSummary(_Inbound, frozen=True, tag="tool_use_summary"):
    """A one-line summary of preceding tool calls."""

    summary: str | None = None
    preceding_tool_use_ids: list[str] | None = None
    session_id: str | None = None
    uuid: str | None = None


class RateLimitInfo(_Struct, frozen=True):
    """The state of the account's rate limit (camelCase on the wire)."""

    status: str | None = None
    resets_at: int | None = msgspec.field(default=None, name="resetsAt")
    rate_limit_type: str | None = msgspec.field(default=None, name="rateLimitType")
    utilization: float | None = None
    overage_status: str | None = msgspec.field(default=None, name="overageStatus")
    overage_resets_at: int | None = msgspec.field(default=None, name="overageResetsAt")
    is_using_overage: bool | None = msgspec.field(default=None, name="isUsingOverage")


class RateLimitEvent(_Inbound, frozen=True, tag="rate_limit_event"):
    """The rate-limit state changed (not emitted for API-key sessions)."""

    rate_limit_info: RateLimitInfo = msgspec.field(default_factory=RateLimitInfo)
    session_id: str | None = None
    uuid: str | None = None


class RateLimit(RateLimitEvent, frozen=True, tag="rate_limit"):
    """The same as :class:`RateLimitEvent`, under the older ``"rate_limit"`` type."""


class KeepAlive(_Inbound, frozen=True, tag="keep_alive"):
    """A no-op line."""


class AuthStatus(_Inbound, frozen=True, tag="auth_status"):
    """Progress of an authentication flow."""

    is_authenticating: bool = msgspec.field(default=False, name="isAuthenticating")
    output: list[str] = msgspec.field(default_factory=list)
    error: str | None = None
    session_id: str | None = None
    uuid: str | None = None


class CommandLifecycle(_Inbound, frozen=True, tag="command_lifecycle"):
    """A user message sent with a ``uuid`` changed state: ``queued``/``started``/``completed``."""

    command_uuid: str | None = None
    state: str | None = None
    session_id: str | None = None
    uuid: str | None = None


class PromptSuggestion(_Inbound, frozen=True, tag="prompt_suggestion"):
    """A suggested next prompt."""

    suggestion: str | None = None
    session_id: str | None = None
    uuid: str | None = None


# ------------------------------------------------------------------ not on the wire


class UnknownMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A well-formed line of a ``type`` (or ``subtype``) this version does not know.

    ``subtype`` is the unknown ``subtype`` (for ``system``, ``control_request``,
    ``control_response``), the SSE event type for ``stream_event``, or ``None``.
    ``raw`` is the whole line.
    """

    type: str
    subtype: str | None = None
    raw: bytes = b""
    #: Why a line of a *known* type is delivered as unknown: an essential field is missing
    #: or unreadable (see ``claudecode._codec.lenient.ESSENTIAL_FIELDS``); ``None`` for a type or
    #: subtype this version does not know.
    reason: str | None = None


class MalformedLine(msgspec.Struct, frozen=True, kw_only=True):
    """A line that is not JSON (``not_json``) or is JSON of the wrong shape (``wrong_shape``).

    ``line`` is the line, truncated to ``_codec.MALFORMED_LINE_MAX`` (1 KiB); ``line_number``
    is what the caller passed to the decoder (1-based by convention, 0 when unknown);
    ``error`` is the decoder's explanation.
    """

    line_number: int
    line: bytes
    #: ``too_long`` is produced by the protocol layer for lines past the framer's limit.
    reason: Literal["not_json", "wrong_shape", "too_long"]
    error: str

    #: The ``type`` the line seems to be of, when it can be told (``None`` otherwise): a
    #: best guess from the bytes for a line that is not JSON. ``"result"`` means a turn
    #: ended although its result was unreadable (cut off, too long), and
    #: :meth:`~claudecode.session.Session.receive_response` stops there.
    type_hint: str | None = None


#: Every inbound message: the wire types, plus :class:`UnknownMessage` and :class:`MalformedLine`.
InboundMessage: TypeAlias = (
    SystemMessageUnion
    | AssistantMessage
    | UserMessage
    | ResultMessage
    | StreamEvent
    | ToolProgress
    | ToolUseSummary
    | RateLimitEvent
    | KeepAlive
    | AuthStatus
    | CommandLifecycle
    | PromptSuggestion
    | InboundControlRequest
    | InboundControlResponse
    | ControlCancelRequest
    | UnknownMessage
    | MalformedLine
)
