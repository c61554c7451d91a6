"""The normalized event stream: one tagged union, the same for every front end.

Every event is a msgspec Struct tagged by ``type``. A session numbers its events (``seq``,
from 1, gap-free) and stamps its id (``session_id``) as it publishes them, so a subscriber
that joins late can catch up from a sequence number and a consumer of several sessions can
tell them apart. The JSON form (:func:`encode_event`) is the public wire schema that
``claudecode-bridge run --json``, the SSE and the WebSocket front ends share;
:func:`event_schema` returns it as JSON Schema.

Conventions:

* ``message_id`` identifies one API message (the ``id`` of ``message_start``): text and
  reasoning chunks of one model response share it, the next response gets another.
* ``tool_call_id`` is the ``tool_use`` id; ``parent_tool_call_id`` is set on everything a
  sub-agent does (the id of the ``Agent``/``Task`` call that started it).
* Optional fields are omitted from JSON when unset.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

from normalize import ActionType, NormalizedPayload

__all__ = (
    "AnyEvent",
    "ApiRetry",
    "AvailableCommands",
    "Command",
    "CompactBoundary",
    "Complete",
    "ContextWindow",
    "Decision",
    "decode_event",
    "encode_event",
    "ErrorEvent",
    "ErrorKind",
    "Event",
    "event_schema",
    "McpServer",
    "MessageChunk",
    "ModelChoice",
    "ModeChanged",
    "PermissionCancelled",
    "PermissionDenied",
    "PermissionOption",
    "PermissionRequest",
    "PermissionResolved",
    "Question",
    "QuestionOption",
    "QuestionRequest",
    "RateLimit",
    "Raw",
    "Reasoning",
    "SessionStatus",
    "TaskEvent",
    "TokenUsage",
    "ToolCall",
    "ToolInputDelta",
    "ToolProgress",
    "ToolUpdate",
    "TurnError",
    "UserMessage",
)


class Event(msgspec.Struct, tag_field="type", kw_only=True, omit_defaults=True, gc=False):
    """Base of every event: ``seq`` and ``session_id`` are stamped by the session.

    Events are not tracked by the garbage collector (``gc=False``): they hold JSON-like
    values and payloads, never a reference back to themselves, and a session keeps
    thousands in its history; untracked, they neither trigger nor lengthen collections.
    (Do not put an event inside its own fields: such a cycle would never be collected.)
    """

    seq: int = 0
    session_id: str = ""


class _Part(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, gc=False):
    pass


class McpServer(_Part, frozen=True):
    """An MCP server as the CLI reports it."""

    name: str
    status: str | None = None


class SessionStatus(Event, tag="session_status"):
    """The CLI session is up (``new``) or was resumed (``resumed``); what it runs with."""

    status: Literal["new", "resumed"]
    cli_session_id: str | None = None
    cli_version: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    cwd: str | None = None
    tools: list[str] = []
    mcp_servers: list[McpServer] = []


class Command(_Part, frozen=True):
    """A slash command the CLI offers."""

    name: str
    description: str = ""
    argument_hint: str = ""


class ModelChoice(_Part, frozen=True):
    """A model the CLI offers (``value`` is what ``set_model`` takes), with the effort levels
    it supports (none: no effort setting)."""

    value: str
    name: str = ""
    description: str = ""
    effort_levels: list[str] = []


class AvailableCommands(Event, tag="available_commands"):
    """The slash commands from the ``initialize`` answer, and the models it lists."""

    commands: list[Command] = []
    models: list[ModelChoice] = []


class UserMessage(Event, tag="user_message"):
    """A prompt sent to the session (by any client), as the session received it.

    Published when the prompt is written to the CLI, so every subscriber (and a late joiner
    replaying the history) sees the user's side of the conversation. ``images`` counts the
    attached images (their bytes are not repeated in the stream).
    """

    text: str
    images: int = 0


class MessageChunk(Event, tag="message_chunk"):
    """A piece of assistant text, in order; ``message_id`` is unique per API message."""

    message_id: str
    text: str
    parent_tool_call_id: str | None = None


class Reasoning(Event, tag="reasoning"):
    """A piece of the model's thinking."""

    message_id: str
    text: str
    parent_tool_call_id: str | None = None


class ToolCall(Event, tag="tool_call"):
    """The model called a tool; it is running until a :class:`ToolUpdate` says otherwise."""

    tool_call_id: str
    tool_name: str
    title: str
    normalized: NormalizedPayload
    action_type: ActionType = "other"
    status: Literal["running"] = "running"
    parent_tool_call_id: str | None = None


class ToolInputDelta(Event, tag="tool_input_delta"):
    """Streamed tool arguments while the model writes them (partial JSON text)."""

    tool_call_id: str
    partial_json: str
    parent_tool_call_id: str | None = None


class ToolProgress(Event, tag="tool_progress"):
    """A long-running tool is still working."""

    tool_call_id: str
    tool_name: str | None = None
    elapsed_seconds: float | None = None
    message: str | None = None
    parent_tool_call_id: str | None = None


class ToolUpdate(Event, tag="tool_update"):
    """A tool call finished: ``complete`` or ``error``, with the enriched payload."""

    tool_call_id: str
    status: Literal["complete", "error"]
    title: str
    normalized: NormalizedPayload
    tool_name: str = ""
    action_type: ActionType = "other"
    parent_tool_call_id: str | None = None
    #: True when the call never got its own result (completed when the turn ended).
    synthetic: bool = False


class PermissionOption(_Part, frozen=True):
    """One way to answer a permission request."""

    id: Literal["allow", "allow_always", "deny"]
    label: str


class PermissionRequest(Event, tag="permission_request"):
    """The CLI asks whether a tool may run; answer through the session by ``pending_id``."""

    pending_id: str
    tool_name: str
    input: dict[str, Any]
    normalized: NormalizedPayload
    title: str
    action_type: ActionType = "other"
    tool_call_id: str | None = None
    suggestions: list[Any] = []
    blocked_path: str | None = None
    decision_reason: str | None = None
    options: list[PermissionOption] = []
    parent_tool_call_id: str | None = None


class QuestionOption(_Part, frozen=True):
    """One answer a question offers."""

    label: str
    description: str = ""


class Question(_Part, frozen=True):
    """One question the agent asks (``AskUserQuestion``); ``question`` is its key in answers."""

    question: str
    header: str = ""
    options: list[QuestionOption] = []
    multi_select: bool = False


class QuestionRequest(Event, tag="question_request"):
    """The agent asks the user (the ``AskUserQuestion`` tool) instead of a permission prompt.

    ``pending_id`` shares the permission requests' table: answer it through the session
    (``answer_question`` / ``decline_question``); a ``permission_resolved`` follows, or a
    ``permission_cancelled`` when the CLI withdraws it or it times out.
    """

    pending_id: str
    questions: list[Question]
    tool_call_id: str | None = None
    parent_tool_call_id: str | None = None


Decision: TypeAlias = Literal["allow", "allow_always", "deny", "answered", "declined"]


class PermissionResolved(Event, tag="permission_resolved"):
    """An open permission or question request was settled (by a person or by the policy).

    ``answers`` (questions only): question text -> the chosen labels or the free text.
    ``message``: the reason given with a denial or a declined question.
    """

    pending_id: str
    decision: Decision
    by: Literal["user", "policy"] = "user"
    message: str | None = None
    answers: dict[str, list[str]] | None = None


class PermissionCancelled(Event, tag="permission_cancelled"):
    """A permission request is no longer open (the CLI withdrew it, or it timed out)."""

    pending_id: str
    reason: Literal["cancelled_by_cli", "timeout", "session_closed"] = "cancelled_by_cli"


class PermissionDenied(Event, tag="permission_denied"):
    """The CLI denied a tool by itself (no prompt was possible)."""

    tool_name: str
    tool_call_id: str | None = None
    message: str = ""


class ModeChanged(Event, tag="mode_changed"):
    """The permission mode changed."""

    mode: str


class ContextWindow(Event, tag="context_window"):
    """How full the model's context window is."""

    size: int
    used: int
    remaining: int
    percent: float


class RateLimit(Event, tag="rate_limit"):
    """The account is near or over a rate limit (never sent for the routine ``allowed``)."""

    status: str
    resets_at: int | None = None
    rate_limit_type: str | None = None
    utilization: float | None = None


class ApiRetry(Event, tag="api_retry"):
    """The CLI is retrying a failed API call."""

    attempt: int
    max_retries: int | None = None
    delay_ms: float | None = None
    error_status: int | None = None
    error: str | None = None


class TaskEvent(Event, tag="task"):
    """Sub-agent and background-task lifecycle (``started`` ... ``notification``)."""

    phase: Literal["started", "progress", "updated", "notification", "changed"]
    task_id: str | None = None
    tool_call_id: str | None = None
    description: str | None = None
    task_type: str | None = None
    status: str | None = None
    summary: str | None = None
    last_tool_name: str | None = None
    background: bool | None = None
    details: dict[str, Any] | None = None


class CompactBoundary(Event, tag="compact_boundary"):
    """The CLI compacted the conversation here."""

    trigger: str | None = None
    pre_tokens: int | None = None


class TokenUsage(_Part, frozen=True):
    """Tokens of a turn by category (input excludes cache reads and writes, as Anthropic's)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0


ErrorKind: TypeAlias = Literal[
    "api_error", "cli_exited", "protocol", "interrupted", "max_turns", "execution", "internal"
]


class TurnError(_Part, frozen=True):
    """Why a turn failed: the same kind, message and status as the :class:`ErrorEvent` that
    follows its :class:`Complete`."""

    kind: ErrorKind
    message: str
    status: int | None = None


class Complete(Event, tag="complete"):
    """The turn ended (successfully or not); exactly one per ``result``.

    A failed turn (``is_error``) carries ``error``; an :class:`ErrorEvent` with the same
    content follows the ``Complete``.
    """

    is_error: bool = False
    subtype: str = "success"
    result: str | None = None
    cost_usd: float = 0.0
    duration_ms: float = 0.0
    duration_api_ms: float = 0.0
    num_turns: int = 0
    tokens: TokenUsage = TokenUsage()
    stop_reason: str | None = None
    terminal_reason: str | None = None
    model: str | None = None
    last_message_uuid: str | None = None
    permission_denials: list[dict[str, Any]] = []
    #: True when no ``result`` came and the adapter ended the turn itself.
    synthetic: bool = False
    #: What went wrong, when ``is_error``.
    error: TurnError | None = None


class ErrorEvent(Event, tag="error"):
    """Something went wrong; for API errors ``status`` is the HTTP status and ``request_id``
    the failed request's id (the ``request-id`` the API answered with, when the CLI said it:
    what Anthropic's support asks for)."""

    message: str
    kind: ErrorKind = "execution"
    status: int | None = None
    request_id: str | None = None


class Raw(Event, tag="raw"):
    """A protocol message the adapter does not model, passed on so nothing is lost."""

    message_type: str
    subtype: str | None = None
    data: Any = None


AnyEvent: TypeAlias = (
    SessionStatus
    | AvailableCommands
    | UserMessage
    | MessageChunk
    | Reasoning
    | ToolCall
    | ToolInputDelta
    | ToolProgress
    | ToolUpdate
    | PermissionRequest
    | QuestionRequest
    | PermissionResolved
    | PermissionCancelled
    | PermissionDenied
    | ModeChanged
    | ContextWindow
    | RateLimit
    | ApiRetry
    | TaskEvent
    | CompactBoundary
    | Complete
    | ErrorEvent
    | Raw
)

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(AnyEvent)


def encode_event(event: Event) -> bytes:
    """The event as compact JSON (no trailing newline)."""
    return _encoder.encode(event)


def decode_event(data: bytes | str) -> AnyEvent:
    """Parse the JSON of one event (the inverse of :func:`encode_event`)."""
    event: AnyEvent = _decoder.decode(data)
    return event


def event_schema() -> dict[str, Any]:
    """The JSON Schema of the event union (the public wire schema)."""
    schema: dict[str, Any] = msgspec.json.schema(AnyEvent)
    return schema
