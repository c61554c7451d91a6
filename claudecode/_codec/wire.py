"""The wire shapes the line codec decodes into: the inbound and outbound unions (a ``system``
line matches a small envelope and is decoded a second time by subtype), the undecoded twins
of a ``user`` line for huge tool results, one reused :class:`msgspec.json.Decoder` for each,
and the ``type`` / ``subtype`` tables that tell an unknown message from a malformed one.
No I/O.
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import msgspec

from ..content import (
    DocumentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    UnknownBlock,
    WebSearchToolResultBlock,
    known_block_types,
)
from ..messages import (
    AssistantMessage,
    AuthStatus,
    CommandLifecycle,
    ControlCancelRequest,
    InboundControlRequest,
    InboundControlResponse,
    KeepAlive,
    PromptSuggestion,
    RateLimit,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    ToolProgress,
    ToolUseSummary,
    UserMessage,
)
from ..outbound import (
    ControlRequestBody,
    OutboundControlCancelRequest,
    OutboundControlResponse,
    OutboundKeepAlive,
    UpdateEnvironmentVariables,
    UserInput,
)
from ..stream_events import known_delta_types, known_event_types
from ..system_messages import SystemMessageUnion, known_system_subtypes

__all__ = (
    "any_decoder",
    "BLOCK_TYPES",
    "content_decoder",
    "ControlRequestWire",
    "DELTA_TYPES",
    "EVENT_TYPES",
    "INBOUND_CLASSES",
    "inbound_decoder",
    "INBOUND_REQUEST_SUBTYPES",
    "INBOUND_TYPES",
    "InboundWire",
    "MALFORMED_LINE_MAX",
    "outbound_decoder",
    "OUTBOUND_REQUEST_SUBTYPES",
    "OUTBOUND_TYPES",
    "OutboundWire",
    "raw_user_decoder",
    "RawToolResult",
    "RESPONSE_SUBTYPES",
    "SYSTEM_CLASSES",
    "system_decoder",
    "SYSTEM_SUBTYPES",
    "SystemEnvelope",
)

#: How many bytes of a bad line a :class:`MalformedLine` keeps.
MALFORMED_LINE_MAX: Final = 1024


class SystemEnvelope(msgspec.Struct, tag_field="type", tag="system"):
    """Matches any ``system`` line; the line is then decoded again by subtype."""

    subtype: str


class ControlRequestWire(msgspec.Struct, frozen=True, tag_field="type", tag="control_request"):
    """Decodable twin of :class:`OutboundControlRequest` (whose body may be a RawControl)."""

    request_id: str
    request: ControlRequestBody


InboundWire: TypeAlias = (
    SystemEnvelope
    | AssistantMessage
    | UserMessage
    | ResultMessage
    | StreamEvent
    | ToolProgress
    | ToolUseSummary
    | RateLimitEvent
    | RateLimit
    | KeepAlive
    | AuthStatus
    | CommandLifecycle
    | PromptSuggestion
    | InboundControlRequest
    | InboundControlResponse
    | ControlCancelRequest
)

OutboundWire: TypeAlias = (
    UserInput
    | ControlRequestWire
    | OutboundControlResponse
    | OutboundControlCancelRequest
    | OutboundKeepAlive
    | UpdateEnvironmentVariables
)


class RawToolResult(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="tool_result"):
    """A ``tool_result`` block with its content undecoded (huge lines only)."""

    tool_use_id: str
    content: msgspec.Raw = msgspec.Raw()
    is_error: bool | None = None


_RawBlock: TypeAlias = (
    TextBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ToolUseBlock
    | RawToolResult
    | ImageBlock
    | DocumentBlock
    | ServerToolUseBlock
    | WebSearchToolResultBlock
    | UnknownBlock
)


class _RawUserBody(msgspec.Struct, frozen=True, kw_only=True):
    content: str | list[_RawBlock] = ""
    role: str = "user"


class _RawUser(UserMessage, frozen=True, tag="user"):
    """A ``user`` line whose tool results keep their content undecoded (huge lines only)."""

    message: _RawUserBody  # type: ignore[assignment]  # the wire twin of UserMessageBody


inbound_decoder: Final[msgspec.json.Decoder[InboundWire]] = msgspec.json.Decoder(InboundWire)
raw_user_decoder: Final = msgspec.json.Decoder(_RawUser)
content_decoder: Final = msgspec.json.Decoder(str | list[Any] | None)
system_decoder: Final[msgspec.json.Decoder[SystemMessageUnion]] = msgspec.json.Decoder(
    SystemMessageUnion
)
outbound_decoder: Final[msgspec.json.Decoder[OutboundWire]] = msgspec.json.Decoder(OutboundWire)
any_decoder: Final[msgspec.json.Decoder[Any]] = msgspec.json.Decoder()


def _tags(union: Any) -> frozenset[str]:
    return frozenset(str(cls.__struct_config__.tag) for cls in union.__args__)


INBOUND_TYPES: Final = _tags(InboundWire)
INBOUND_CLASSES: Final[dict[str, type]] = {
    str(cls.__struct_config__.tag): cls for cls in InboundWire.__args__
}
SYSTEM_CLASSES: Final[dict[str, type]] = {
    str(cls.__struct_config__.tag): cls for cls in SystemMessageUnion.__args__
}
OUTBOUND_TYPES: Final = _tags(OutboundWire)
SYSTEM_SUBTYPES: Final = known_system_subtypes()
INBOUND_REQUEST_SUBTYPES: Final = frozenset(("can_use_tool", "hook_callback", "mcp_message"))
OUTBOUND_REQUEST_SUBTYPES: Final = _tags(ControlRequestBody)
RESPONSE_SUBTYPES: Final = frozenset(("success", "error"))
EVENT_TYPES: Final = known_event_types()
DELTA_TYPES: Final = known_delta_types()
BLOCK_TYPES: Final = known_block_types()
