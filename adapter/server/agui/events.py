"""The AG-UI events the bridge emits, and the run input it accepts, as msgspec Structs.

Only event types and fields that both ``@ag-ui/client`` 1.0.0 and 0.0.59 (the version
CopilotKit pins) accept: no ``THINKING_*``, no 1.0-only outcome kinds, tool results as
strings, camelCase names, integer millisecond timestamps, and optional fields omitted (never
``null``: every optional field defaults to ``None`` and ``omit_defaults`` leaves it out).

:func:`sse_frame` encodes one event as an SSE frame the way ``@ag-ui/client`` splits them:
``data: <json>\\n\\n`` with LF only (the client splits frames on ``"\\n\\n"`` and nothing else).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

__all__ = (
    "AguiEvent",
    "Context",
    "CustomEvent",
    "MessagesSnapshot",
    "ReasoningEnd",
    "ReasoningMessageContent",
    "ReasoningMessageEnd",
    "ReasoningMessageStart",
    "ReasoningStart",
    "RunAgentInput",
    "RunError",
    "RunFinished",
    "RunStarted",
    "StateDelta",
    "StateSnapshot",
    "TextMessageContent",
    "TextMessageEnd",
    "TextMessageStart",
    "Tool",
    "ToolCallArgs",
    "ToolCallEnd",
    "ToolCallResult",
    "ToolCallStart",
    "decode_run_input",
    "encode_event",
    "sse_frame",
    "sse_frames",
)


class _Event(
    msgspec.Struct,
    tag_field="type",
    rename="camel",
    omit_defaults=True,
    kw_only=True,
):
    timestamp: int | None = None


class RunStarted(_Event, tag="RUN_STARTED"):
    """A run began (always the first event of a run)."""

    thread_id: str
    run_id: str


class RunFinished(_Event, tag="RUN_FINISHED"):
    """The run ended normally (also when the user stopped it, or it waits for a tool result)."""

    thread_id: str
    run_id: str
    result: Any = None
    #: AG-UI 1.0: ``{"type": "interrupt", "interrupts": [...]}`` when the run ends waiting
    #: for the client's answers (only for clients that ask for it).
    outcome: Any = None


class RunError(_Event, tag="RUN_ERROR"):
    """The run failed; ``code`` says how (``api_error``, ``cli_exited``, ``shutdown``...)."""

    message: str
    code: str | None = None


class TextMessageStart(_Event, tag="TEXT_MESSAGE_START"):
    """An assistant text message opens."""

    message_id: str
    role: Literal["assistant"] = "assistant"


class TextMessageContent(_Event, tag="TEXT_MESSAGE_CONTENT"):
    """A piece of an open text message."""

    message_id: str
    delta: str


class TextMessageEnd(_Event, tag="TEXT_MESSAGE_END"):
    """A text message closes."""

    message_id: str


class ReasoningStart(_Event, tag="REASONING_START"):
    """A reasoning span opens."""

    message_id: str


class ReasoningMessageStart(_Event, tag="REASONING_MESSAGE_START"):
    """A reasoning message opens inside its span (``role`` is required on the wire)."""

    message_id: str
    role: Literal["reasoning"]


class ReasoningMessageContent(_Event, tag="REASONING_MESSAGE_CONTENT"):
    """A piece of the model's thinking."""

    message_id: str
    delta: str


class ReasoningMessageEnd(_Event, tag="REASONING_MESSAGE_END"):
    """A reasoning message closes."""

    message_id: str


class ReasoningEnd(_Event, tag="REASONING_END"):
    """A reasoning span closes."""

    message_id: str


class ToolCallStart(_Event, tag="TOOL_CALL_START"):
    """A tool call opens (``parentMessageId``: the assistant message it belongs to)."""

    tool_call_id: str
    tool_call_name: str
    parent_message_id: str | None = None


class ToolCallArgs(_Event, tag="TOOL_CALL_ARGS"):
    """A piece of the call's arguments (JSON text)."""

    tool_call_id: str
    delta: str


class ToolCallEnd(_Event, tag="TOOL_CALL_END"):
    """The call's arguments are complete."""

    tool_call_id: str


class ToolCallResult(_Event, tag="TOOL_CALL_RESULT"):
    """What the tool returned, as text."""

    message_id: str
    tool_call_id: str
    content: str
    role: Literal["tool"] = "tool"


class StateSnapshot(_Event, tag="STATE_SNAPSHOT"):
    """The whole shared state."""

    snapshot: Any


class StateDelta(_Event, tag="STATE_DELTA"):
    """RFC 6902 operations on the shared state."""

    delta: list[dict[str, Any]]


class MessagesSnapshot(_Event, tag="MESSAGES_SNAPSHOT"):
    """The thread's messages (AG-UI ``Message`` objects)."""

    messages: list[dict[str, Any]]


class CustomEvent(_Event, tag="CUSTOM"):
    """A bridge-specific event (``name`` ``claudecode.*``, see :mod:`adapter.server.agui`)."""

    name: str
    value: Any = None


AguiEvent: TypeAlias = (
    RunStarted
    | RunFinished
    | RunError
    | TextMessageStart
    | TextMessageContent
    | TextMessageEnd
    | ReasoningStart
    | ReasoningMessageStart
    | ReasoningMessageContent
    | ReasoningMessageEnd
    | ReasoningEnd
    | ToolCallStart
    | ToolCallArgs
    | ToolCallEnd
    | ToolCallResult
    | StateSnapshot
    | StateDelta
    | MessagesSnapshot
    | CustomEvent
)

_encoder = msgspec.json.Encoder()


def encode_event(event: AguiEvent) -> bytes:
    """The event as compact camelCase JSON."""
    return _encoder.encode(event)


def sse_frame(event: AguiEvent) -> bytes:
    """One SSE frame: ``data: <json>\\n\\n`` (JSON never contains a raw newline)."""
    return b"data: " + _encoder.encode(event) + b"\n\n"


def sse_frames(events: list[AguiEvent]) -> list[bytes]:
    """The :func:`sse_frame` of each event, in one call (a batch's worth)."""
    encode = _encoder.encode
    return [b"data: " + encode(event) + b"\n\n" for event in events]


# -- the run input -------------------------------------------------------------------------


class Tool(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """A tool the front end offers (``parameters`` is a JSON Schema)."""

    name: str
    description: str = ""
    parameters: Any = None


class Context(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """Readable context from the front end."""

    description: str
    value: Any = None


class RunAgentInput(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """The POST body of a run (unknown fields are ignored, as both client flavours send
    different sets). Messages stay plain dicts, checked by :func:`decode_run_input`."""

    thread_id: str
    run_id: str
    messages: list[dict[str, Any]]
    tools: list[Tool] = []
    context: list[Context] = []
    state: Any = None
    forwarded_props: Any = None
    parent_run_id: str | None = None
    protocol_version: str | None = None
    #: AG-UI 1.0: answers to the previous run's interrupts (``interruptId``, ``status``
    #: ``resolved`` / ``cancelled``, ``payload``).
    resume: list[dict[str, Any]] = []


_ROLES = frozenset({"user", "assistant", "tool", "system", "developer", "activity", "reasoning"})


def decode_run_input(body: bytes | dict[str, Any]) -> RunAgentInput:
    """Decode and check a RunAgentInput.

    Raises:
        msgspec.ValidationError: a field is missing or of the wrong type; the message names
            it (``$.messages[2].role``).
        msgspec.DecodeError: the body is not JSON.
    """
    if isinstance(body, dict):
        run_input = msgspec.convert(body, RunAgentInput)
    else:
        run_input = msgspec.json.decode(body, type=RunAgentInput)
    for index, message in enumerate(run_input.messages):
        where = f"$.messages[{index}]"
        if not isinstance(message.get("id"), str):
            raise msgspec.ValidationError(f"Expected `str` at `{where}.id`")
        role = message.get("role")
        if role not in _ROLES:
            raise msgspec.ValidationError(f"Invalid message role at `{where}.role`: {role!r}")
        if role == "tool" and not isinstance(message.get("toolCallId"), str):
            raise msgspec.ValidationError(f"Expected `str` at `{where}.toolCallId`")
        content = message.get("content")
        if role in ("user", "system", "developer") and not isinstance(content, str | list):
            raise msgspec.ValidationError(f"Expected `str | array` at `{where}.content`")
    return run_input
