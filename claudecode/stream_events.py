"""The raw Messages-API SSE events that the CLI forwards inside ``stream_event`` lines.

With ``--include-partial-messages`` the CLI wraps every server-sent event of the Messages API
in ``{"type": "stream_event", "event": <event>, ...}``. The event itself is tagged by its own
``"type"``: ``message_start``, ``content_block_start``, ``content_block_delta`` (itself carrying
a ``delta`` tagged by ``"type"``), ``content_block_stop``, ``message_delta`` and
``message_stop``. The CLI does not forward ``ping``; the class exists so that a forwarded one
would still decode.

The wrapper message (:class:`~claudecode.messages.StreamEvent`) lives in
:mod:`claudecode.messages`; this module holds the event payloads and the shared
:class:`ApiMessage` / :class:`Usage` structs.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import msgspec

from .content import ContentBlock

__all__ = (
    "AbandonedBlocks",
    "ApiMessage",
    "CacheCreation",
    "CitationsDelta",
    "ContentBlockDelta",
    "ContentBlockStart",
    "ContentBlockStop",
    "Delta",
    "ErrorEvent",
    "InputJsonDelta",
    "known_delta_types",
    "known_event_types",
    "MessageDelta",
    "MessageDeltaBody",
    "MessageStart",
    "MessageStop",
    "Ping",
    "SignatureDelta",
    "StreamEventPayload",
    "TextDelta",
    "ThinkingDelta",
    "Usage",
)


class _Struct(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base of the untagged structs here."""


class CacheCreation(_Struct, frozen=True):
    """Cache-write token counts split by cache lifetime."""

    ephemeral_5m_input_tokens: int | None = None
    ephemeral_1h_input_tokens: int | None = None


class Usage(_Struct, frozen=True):
    """Token usage as the Messages API reports it (every field optional).

    A missing count means "not reported here" (``message_delta`` carries only
    ``output_tokens``), which is why the counts are ``None`` rather than ``0`` by default.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation: CacheCreation | None = None
    #: e.g. ``{"web_search_requests": 0, "web_fetch_requests": 0}``.
    server_tool_use: dict[str, Any] | None = None
    service_tier: str | None = None
    #: e.g. ``{"thinking_tokens": 0}``.
    output_tokens_details: dict[str, Any] | None = None
    inference_geo: str | None = None
    iterations: list[Any] | None = None
    speed: str | None = None
    fallback_credit: Any = None


class ApiMessage(_Struct, frozen=True):
    """A Messages-API message object (in ``assistant`` lines and ``message_start`` events).

    In ``assistant`` lines from the CLI, ``content`` holds exactly one block, ``stop_reason``
    is ``None`` and ``usage`` is the ``message_start`` usage; the real stop reason arrives in
    the ``message_delta`` stream event and in the ``result``.
    """

    id: str = ""
    model: str = ""
    role: str = "assistant"
    content: list[ContentBlock] = msgspec.field(default_factory=list)
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: Usage | None = None
    container: Any = None
    context_management: Any = None
    stop_details: Any = None
    diagnostics: Any = None


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of the SSE event payloads."""


class MessageStart(_Event, frozen=True, tag="message_start"):
    """Start of a model response; ``message.content`` is empty."""

    message: ApiMessage


class ContentBlockStart(_Event, frozen=True, tag="content_block_start"):
    """Start of content block ``index`` (its initial, mostly empty, value)."""

    index: int
    content_block: ContentBlock


class _Delta(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of the ``content_block_delta`` deltas."""


class TextDelta(_Delta, frozen=True, tag="text_delta"):
    """More text for a text block."""

    text: str


class InputJsonDelta(_Delta, frozen=True, tag="input_json_delta"):
    """A fragment of a tool_use block's JSON input (concatenate, then parse)."""

    partial_json: str


class ThinkingDelta(_Delta, frozen=True, tag="thinking_delta"):
    """More text for a thinking block."""

    thinking: str


class SignatureDelta(_Delta, frozen=True, tag="signature_delta"):
    """The signature of a thinking block (sent just before its stop)."""

    signature: str


class CitationsDelta(_Delta, frozen=True, tag="citations_delta"):
    """A citation added to a text block, kept as plain JSON."""

    citation: dict[str, Any]


#: Every delta type of a ``content_block_delta`` event, tagged by ``"type"``.
Delta: TypeAlias = TextDelta | InputJsonDelta | ThinkingDelta | SignatureDelta | CitationsDelta


# gc=False (as ``StreamEvent``): most lines are deltas, and two objects tracked by the
# garbage collector per line made it run every few hundred lines. Frozen and decoded from
# JSON, a delta cannot be part of a reference cycle (only code putting it into a citation's
# dict could make one).
class ContentBlockDelta(_Event, frozen=True, tag="content_block_delta", gc=False):
    """An increment of content block ``index``."""

    index: int
    delta: Delta


class ContentBlockStop(_Event, frozen=True, tag="content_block_stop"):
    """End of content block ``index``."""

    index: int


class MessageDeltaBody(_Struct, frozen=True):
    """The ``delta`` of a ``message_delta`` event: where the real stop reason lives."""

    stop_reason: str | None = None
    stop_sequence: str | None = None
    container: Any = None
    stop_details: Any = None


class MessageDelta(_Event, frozen=True, tag="message_delta"):
    """Top-level changes to the message (stop reason, cumulative output usage)."""

    delta: MessageDeltaBody = msgspec.field(default_factory=MessageDeltaBody)
    usage: Usage | None = None
    context_management: Any = None


class MessageStop(_Event, frozen=True, tag="message_stop"):
    """End of the model response."""


class Ping(_Event, frozen=True, tag="ping"):
    """Keep-alive event of the SSE stream (the CLI does not forward it)."""


class ErrorEvent(_Event, frozen=True, tag="error"):
    """An ``error`` event in the middle of an SSE stream; ``error`` kept as plain JSON."""

    error: dict[str, Any] = msgspec.field(default_factory=dict)


#: Every SSE event payload of a ``stream_event`` line, tagged by ``"type"``.
StreamEventPayload: TypeAlias = (
    MessageStart
    | ContentBlockStart
    | ContentBlockDelta
    | ContentBlockStop
    | MessageDelta
    | MessageStop
    | Ping
    | ErrorEvent
)


class AbandonedBlocks(_Struct, frozen=True):
    """Blocks of a broken stream that will not be completed (on ``message_stop``)."""

    api_message_id: str | None = None
    from_block_index: int | None = None


_EVENT_TYPES: Final = frozenset(
    (
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    )
)
_DELTA_TYPES: Final = frozenset(
    ("text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta")
)


def known_event_types() -> frozenset[str]:
    """Return the SSE event ``type`` values that decode into a specific class."""
    return _EVENT_TYPES


def known_delta_types() -> frozenset[str]:
    """Return the delta ``type`` values that decode into a specific class."""
    return _DELTA_TYPES
