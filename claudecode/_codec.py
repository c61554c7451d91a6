"""Line codec: one complete NDJSON line <-> one typed message. No I/O.

Decoding
--------
:func:`decode_line` never raises. The hot path (``stream_event``, ``assistant``, ``user``
lines) is a single typed decode with a module-level :class:`msgspec.json.Decoder` over the
inbound union. ``system`` lines are matched by a tiny envelope in that union and decoded a
second time with the union of system subtypes.

Only when the typed decode fails does the slow path run: the line is decoded into plain
Python objects and classified:

* not JSON                                   -> :class:`MalformedLine` ``reason="not_json"``
* JSON but not an object with a string type  -> :class:`MalformedLine` ``reason="wrong_shape"``
* unknown ``type``, or a known type with an unknown ``subtype`` / SSE event type / delta type
                                             -> :class:`UnknownMessage` carrying the raw line
* known type with content blocks of an unknown type -> blocks rewritten to
  :class:`~claudecode.content.UnknownBlock`, then decoded again
* anything else (wrong field types, missing required fields) -> ``reason="wrong_shape"``

Encoding
--------
:func:`encode_message` turns any outbound message (and, for fake CLIs and tests, any inbound
one) into JSON plus ``b"\\n"`` with one reused :class:`msgspec.json.Encoder`. A content block
decoded as :class:`~claudecode.content.UnknownBlock` is written back as its original object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias

import msgspec

from ._lenient import EssentialFieldError, lenient_decode
from .content import (
    LARGE_TEXT_BYTES,
    UNKNOWN_BLOCK_TAG,
    DocumentBlock,
    ImageBlock,
    LargeText,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    WebSearchToolResultBlock,
    known_block_types,
)
from .control import (
    ControlRequestBody,
    OutboundControlCancelRequest,
    OutboundControlRequest,
    OutboundControlResponse,
    OutboundKeepAlive,
    OutboundMessage,
    RawControl,
    UpdateEnvironmentVariables,
    UserInput,
)
from .lenient_info import Lenient
from .messages import (
    AssistantMessage,
    AuthStatus,
    CommandLifecycle,
    ControlCancelRequest,
    InboundControlRequest,
    InboundControlResponse,
    InboundMessage,
    KeepAlive,
    MalformedLine,
    PromptSuggestion,
    RateLimit,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    ToolProgress,
    ToolUseSummary,
    UnknownMessage,
    UserMessage,
    UserMessageBody,
)
from .stream_events import (
    ContentBlockStart,
    MessageStart,
    known_delta_types,
    known_event_types,
)
from .system_messages import SystemMessage, SystemMessageUnion, known_system_subtypes

__all__ = (
    "decode_line",
    "decode_line_fast",
    "decode_outbound_line",
    "encode_message",
    "MALFORMED_LINE_MAX",
)

#: How many bytes of a bad line a :class:`MalformedLine` keeps.
MALFORMED_LINE_MAX: Final = 1024


class _SystemEnvelope(msgspec.Struct, tag_field="type", tag="system"):
    """Matches any ``system`` line; the line is then decoded again by subtype."""

    subtype: str


class _ControlRequestWire(msgspec.Struct, frozen=True, tag_field="type", tag="control_request"):
    """Decodable twin of :class:`OutboundControlRequest` (whose body may be a RawControl)."""

    request_id: str
    request: ControlRequestBody


_InboundWire: TypeAlias = (
    _SystemEnvelope
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

_OutboundWire: TypeAlias = (
    UserInput
    | _ControlRequestWire
    | OutboundControlResponse
    | OutboundControlCancelRequest
    | OutboundKeepAlive
    | UpdateEnvironmentVariables
)


class _RawToolResult(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="tool_result"
):
    """A ``tool_result`` block with its content undecoded (huge lines only)."""

    tool_use_id: str
    content: msgspec.Raw = msgspec.Raw()
    is_error: bool | None = None


_RawBlock: TypeAlias = (
    TextBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ToolUseBlock
    | _RawToolResult
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


_inbound_decoder: Final[msgspec.json.Decoder[_InboundWire]] = msgspec.json.Decoder(_InboundWire)
_raw_user_decoder: Final = msgspec.json.Decoder(_RawUser)
_content_decoder: Final = msgspec.json.Decoder(str | list[Any] | None)
_system_decoder: Final[msgspec.json.Decoder[SystemMessageUnion]] = msgspec.json.Decoder(
    SystemMessageUnion
)
_outbound_decoder: Final[msgspec.json.Decoder[_OutboundWire]] = msgspec.json.Decoder(_OutboundWire)
_any_decoder: Final[msgspec.json.Decoder[Any]] = msgspec.json.Decoder()


def _tags(union: Any) -> frozenset[str]:
    return frozenset(str(cls.__struct_config__.tag) for cls in union.__args__)


_INBOUND_TYPES: Final = _tags(_InboundWire)
_INBOUND_CLASSES: Final[dict[str, type]] = {
    str(cls.__struct_config__.tag): cls for cls in _InboundWire.__args__
}
_SYSTEM_CLASSES: Final[dict[str, type]] = {
    str(cls.__struct_config__.tag): cls for cls in SystemMessageUnion.__args__
}
_OUTBOUND_TYPES: Final = _tags(_OutboundWire)
_SYSTEM_SUBTYPES: Final = known_system_subtypes()
_INBOUND_REQUEST_SUBTYPES: Final = frozenset(("can_use_tool", "hook_callback", "mcp_message"))
_OUTBOUND_REQUEST_SUBTYPES: Final = _tags(ControlRequestBody)
_RESPONSE_SUBTYPES: Final = frozenset(("success", "error"))
_EVENT_TYPES: Final = known_event_types()
_DELTA_TYPES: Final = known_delta_types()
_BLOCK_TYPES: Final = known_block_types()

#: A ``\\uD800``-``\\uDFFF`` escape (paired or lone); only looked for when a decode failed.
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")

_SURROGATE_REPAIR: Final = "lone surrogate escapes replaced by U+FFFD"

_Reason: TypeAlias = Literal["not_json", "wrong_shape"]


def _malformed(line: bytes, line_number: int, reason: _Reason, error: object) -> MalformedLine:
    return MalformedLine(
        line_number=line_number,
        line=bytes(line[:MALFORMED_LINE_MAX]),
        reason=reason,
        error=str(error) or type(error).__name__,
        type_hint=sniff_type(line),
    )


#: A ``"type": "<word>"`` pair outside a string (inside one, its quotes would be escaped).
_TYPE_PAIR: Final = re.compile(rb'(?<!\\)"type"\s*:\s*"([A-Za-z_]{1,64})"')
_RESULT_PAIR: Final = re.compile(rb'(?<!\\)"type"\s*:\s*"result"')


def sniff_type(data: bytes) -> str | None:
    """Guess the ``type`` of a line that cannot be decoded, from its bytes.

    ``"result"`` when the line has a ``"type": "result"`` pair anywhere (2.1.332 writes the
    key after the result's text, so it can be far in), else the first ``"type"`` pair (the
    other lines start with it). A guess: only for lines that are already lost.
    """
    if _RESULT_PAIR.search(data) is not None:
        return "result"
    match = _TYPE_PAIR.search(data, 0, 4096)
    return match.group(1).decode("ascii") if match is not None else None


# ----------------------------------------------------------------------------- decoding

#: The hot path's typed decode, for loops over many lines (the protocol's): it returns an
#: inbound message or, for a ``system`` line, a :class:`SystemEnvelope`, and raises on
#: anything else. For every line it decodes to a message, :func:`decode_line` returns an
#: equal message (a trailing ``\r`` is JSON whitespace to both); for an envelope or an
#: exception, hand the line to :func:`decode_line`.
decode_line_fast: Final = _inbound_decoder.decode
SystemEnvelope: Final = _SystemEnvelope


def decode_small_line(line: Any) -> Any:
    """:data:`decode_line_fast` for lines that may be huge: it refuses (raises) a line longer
    than :data:`~claudecode.content.LARGE_TEXT_BYTES`, which :func:`decode_line` decodes
    keeping a huge tool result as a :class:`~claudecode.content.LargeText`."""
    if len(line) > LARGE_TEXT_BYTES:
        raise ValueError("a huge line: decode it with decode_line")
    return _inbound_decoder.decode(line)


def _decode_huge_user(line: bytes) -> UserMessage | None:
    """A huge ``user`` line with every huge tool result text kept as a :class:`LargeText`;
    ``None`` when the line is anything else (or needs the careful path): decode it as usual."""
    try:
        wire = _raw_user_decoder.decode(line)
    except Exception:
        return None
    content: Any = wire.message.content
    if isinstance(content, list):
        blocks: list[Any] = []
        for wire_block in content:
            block: Any = wire_block
            if block.__class__ is _RawToolResult:
                raw = block.content
                if not raw:
                    value: Any = None  # no content key
                elif len(raw) > LARGE_TEXT_BYTES and bytes(memoryview(raw)[:1]) == b'"':
                    value = LargeText(raw)
                else:
                    try:
                        value = _content_decoder.decode(raw)
                    except Exception:
                        return None  # a content the strict decode refuses: the careful path
                block = ToolResultBlock(
                    tool_use_id=block.tool_use_id, content=value, is_error=block.is_error
                )
            blocks.append(block)
        content = blocks
    fields = {name: getattr(wire, name) for name in UserMessage.__struct_fields__}
    fields["message"] = UserMessageBody(content=content, role=wire.message.role)
    return UserMessage(**fields)


def decode_line(line: bytes, line_number: int = 0) -> InboundMessage:
    """Decode one line the CLI wrote on stdout.

    Never raises: a bad line comes back as :class:`~claudecode.messages.MalformedLine` and a
    line of an unknown type or subtype as :class:`~claudecode.messages.UnknownMessage`.

    Args:
        line: one complete line, without its ``b"\\n"``; a trailing ``b"\\r"`` is ignored.
            Blank lines are the framer's business: pass non-empty lines.
        line_number: the line's position in the stream, copied into a ``MalformedLine``.

    Returns:
        The typed message.
    """
    if line and line[-1] == 13:  # a trailing "\r" (an int compare: no slice)
        line = line[:-1]
    if len(line) > LARGE_TEXT_BYTES:
        huge = _decode_huge_user(line)
        if huge is not None:
            return huge
    try:
        msg = _inbound_decoder.decode(line)
        if msg.__class__ is _SystemEnvelope:
            return _system_decoder.decode(line)
        return msg  # type: ignore[return-value]  # not the envelope, so an InboundMessage
    except msgspec.ValidationError as exc:
        return _slow_path(line, line_number, exc)
    except Exception as exc:  # DecodeError, RecursionError on absurd nesting, ...
        if _SURROGATE_ESCAPE.search(line) is not None:
            fixed = _replace_lone_surrogates(line)
            if fixed is not None:
                return _with_repair(decode_line(fixed, line_number), line, _SURROGATE_REPAIR)
        return _malformed(line, line_number, "not_json", exc)


def _with_repair(msg: InboundMessage, raw: bytes, repair: str) -> InboundMessage:
    """Record ``repair`` (and the original line) on a message decoded from a repaired line."""
    if msg.__class__ is UnknownMessage or msg.__class__ is MalformedLine:
        return msg
    lenient: Lenient | None = getattr(msg, "lenient", None)
    repairs = (repair,) if lenient is None else (repair, *lenient.repairs)
    repaired: InboundMessage = msgspec.structs.replace(
        msg,
        lenient=Lenient(raw=bytes(raw), repairs=repairs),
    )
    return repaired


def _replace_lone_surrogates(line: bytes) -> bytes | None:
    """Re-encode ``line`` with each lone surrogate escape replaced by U+FFFD.

    JavaScript writes ``"\\ud83d"`` for a string cut in the middle of an emoji; msgspec
    rejects it, the standard library reads it as a lone surrogate. Returns None when the
    line is not JSON for the standard library either.
    """
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return msgspec.json.encode(_without_surrogates(obj))


def _without_surrogates(obj: Any) -> Any:
    if isinstance(obj, str):
        return _LONE_SURROGATE.sub("\ufffd", obj)
    if isinstance(obj, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_without_surrogates(v) for v in obj]
    return obj


def _slow_path(line: bytes, line_number: int, exc: Exception) -> InboundMessage:
    try:
        obj = _any_decoder.decode(line)
    except Exception as err:
        return _malformed(line, line_number, "not_json", err)
    try:
        kind = _classify(obj, _INBOUND_TYPES, _inbound_subtype)
        if isinstance(kind, str):
            return _malformed(line, line_number, "wrong_shape", kind)
        if kind is not None:
            return UnknownMessage(type=kind[0], subtype=kind[1], raw=bytes(line))
        if _rewrite_unknown_blocks(obj):
            patched = msgspec.json.encode(obj)
            try:
                msg = _inbound_decoder.decode(patched)
                if isinstance(msg, _SystemEnvelope):  # pragma: no cover - no blocks in system
                    return _system_decoder.decode(patched)
                return msg
            except msgspec.ValidationError:
                pass  # something else is wrong too: repair it below
        return _lenient(line, obj)
    except Exception as err:
        return _malformed(line, line_number, "wrong_shape", err)


def _lenient(line: bytes, obj: dict[str, Any]) -> InboundMessage:
    """Decode a known type after the strict decode failed, keeping what can be read."""
    typ: str = obj["type"]
    subtype = _str_at(obj, "subtype")
    if typ == "system":
        cls = _SYSTEM_CLASSES.get(subtype) if subtype is not None else None
    else:
        cls = _INBOUND_CLASSES[typ]
    if cls is None:  # a system line without a subtype: no class to decode it as
        return UnknownMessage(type=typ, subtype=None, raw=bytes(line), reason="no string 'subtype'")
    try:
        msg, repairs = lenient_decode(obj, cls)
    except EssentialFieldError as err:
        if typ == "control_request":
            subtype = _str_at(obj.get("request"), "subtype")
        return UnknownMessage(type=typ, subtype=subtype, raw=bytes(line), reason=str(err))
    repaired: InboundMessage = msgspec.structs.replace(
        msg, lenient=Lenient(raw=bytes(line), repairs=repairs)
    )
    return repaired


def _classify(
    obj: Any, known_types: frozenset[str], subtype_of: Callable[[str, dict[str, Any]], str | None]
) -> str | tuple[str, str | None] | None:
    """Return an error text (wrong shape), ``(type, subtype)`` (unknown), or None (known)."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    typ = obj.get("type")
    if not isinstance(typ, str):
        return "JSON object has no string 'type'"
    if typ not in known_types:
        sub = obj.get("subtype")
        return (typ, sub if isinstance(sub, str) else None)
    unknown_sub: str | None = subtype_of(typ, obj)
    if unknown_sub is not None:
        return (typ, unknown_sub)
    return None


def _str_at(obj: Any, key: str) -> str | None:
    if isinstance(obj, dict):
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return None


def _inbound_subtype(typ: str, obj: dict[str, Any]) -> str | None:
    """Return the unknown subtype of a known inbound type, or None if it is known/absent."""
    sub: str | None
    if typ == "system":
        sub = _str_at(obj, "subtype")
        return sub if sub is not None and sub not in _SYSTEM_SUBTYPES else None
    if typ == "control_request":
        sub = _str_at(obj.get("request"), "subtype")
        return sub if sub is not None and sub not in _INBOUND_REQUEST_SUBTYPES else None
    if typ == "control_response":
        sub = _str_at(obj.get("response"), "subtype")
        return sub if sub is not None and sub not in _RESPONSE_SUBTYPES else None
    if typ == "stream_event":
        event = obj.get("event")
        sub = _str_at(event, "type")
        if sub is not None and sub not in _EVENT_TYPES:
            return sub
        if sub == "content_block_delta":
            delta_type = _str_at(event.get("delta"), "type")  # type: ignore[union-attr]
            if delta_type is not None and delta_type not in _DELTA_TYPES:
                return delta_type
    return None


def _rewrite_blocks(blocks: Any) -> bool:
    changed = False
    if isinstance(blocks, list):
        for i, block in enumerate(blocks):
            changed |= _rewrite_block_at(blocks, i, block)
    return changed


def _rewrite_block_at(container: Any, key: Any, block: Any) -> bool:
    block_type = _str_at(block, "type")
    if block_type is None or block_type in _BLOCK_TYPES:
        return False
    container[key] = {"type": UNKNOWN_BLOCK_TAG, "block_type": block_type, "data": block}
    return True


def _rewrite_unknown_blocks(obj: dict[str, Any]) -> bool:
    """Replace content blocks of unknown types in place; return whether any was replaced."""
    typ = obj["type"]
    if typ in ("assistant", "user"):
        message = obj.get("message")
        return isinstance(message, dict) and _rewrite_blocks(message.get("content"))
    if typ == "stream_event":
        event = obj.get("event")
        if not isinstance(event, dict):
            return False
        if event.get("type") == "content_block_start":
            return _rewrite_block_at(event, "content_block", event.get("content_block"))
        message = event.get("message")
        return isinstance(message, dict) and _rewrite_blocks(message.get("content"))
    return False


def _outbound_subtype(typ: str, obj: dict[str, Any]) -> str | None:
    if typ == "control_response":
        sub = _str_at(obj.get("response"), "subtype")
        return sub if sub is not None and sub not in _RESPONSE_SUBTYPES else None
    return None


def decode_outbound_line(
    line: bytes, line_number: int = 0
) -> OutboundMessage | UnknownMessage | MalformedLine:
    """Decode one line written to the CLI's stdin (for fake CLIs and tests). Never raises.

    A control request of a subtype without a class of its own comes back as an
    :class:`~claudecode.control.OutboundControlRequest` whose body is a
    :class:`~claudecode.control.RawControl`.
    """
    if line[-1:] == b"\r":
        line = line[:-1]
    try:
        msg = _outbound_decoder.decode(line)
    except msgspec.ValidationError as exc:
        return _outbound_slow_path(line, line_number, exc)
    except Exception as exc:
        return _malformed(line, line_number, "not_json", exc)
    if isinstance(msg, _ControlRequestWire):
        return OutboundControlRequest(request_id=msg.request_id, request=msg.request)
    return msg


def _outbound_slow_path(
    line: bytes, line_number: int, exc: Exception
) -> OutboundMessage | UnknownMessage | MalformedLine:
    try:
        obj = _any_decoder.decode(line)
    except Exception as err:
        return _malformed(line, line_number, "not_json", err)
    try:
        kind = _classify(obj, _OUTBOUND_TYPES, _outbound_subtype)
        if isinstance(kind, str):
            return _malformed(line, line_number, "wrong_shape", kind)
        if kind is not None:
            return UnknownMessage(type=kind[0], subtype=kind[1], raw=bytes(line))
        if obj["type"] == "control_request":
            raw = _raw_control_request(obj)
            if raw is not None:
                return raw
        elif _rewrite_unknown_blocks(obj):
            return decode_outbound_line(msgspec.json.encode(obj), line_number)
    except Exception as err:
        return _malformed(line, line_number, "wrong_shape", err)
    return _malformed(line, line_number, "wrong_shape", exc)


def _raw_control_request(obj: dict[str, Any]) -> OutboundControlRequest | None:
    request_id = obj.get("request_id")
    request = obj.get("request")
    subtype = _str_at(request, "subtype")
    if not isinstance(request_id, str) or subtype is None or subtype in _OUTBOUND_REQUEST_SUBTYPES:
        return None
    payload = {k: v for k, v in request.items() if k != "subtype"}  # type: ignore[union-attr]
    return OutboundControlRequest(request_id=request_id, request=RawControl(subtype, payload))


# ----------------------------------------------------------------------------- encoding


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, RawControl):
        return obj.to_wire()
    if isinstance(obj, LargeText):
        return obj.literal
    raise TypeError(f"cannot encode objects of type {type(obj).__name__}")


_encoder: Final = msgspec.json.Encoder(enc_hook=_enc_hook)
_SYSTEM_PREFIX: Final = b'{"type":"system",'


def encode_message(msg: OutboundMessage | InboundMessage) -> bytes:
    """Encode one message as an NDJSON line (compact JSON followed by ``b"\\n"``).

    Outbound messages are what the session writes to the CLI. Inbound messages can be encoded
    too, for fake CLIs and tests: ``system`` messages get their ``"type": "system"`` key back,
    an :class:`~claudecode.messages.UnknownMessage` is written as its raw line and a
    :class:`~claudecode.messages.MalformedLine` as its (possibly truncated) line.

    Raises:
        TypeError: ``msg`` contains something that cannot be encoded as JSON.
    """
    if isinstance(msg, UnknownMessage):
        return msg.raw.rstrip(b"\r\n") + b"\n"
    if isinstance(msg, MalformedLine):
        return msg.line.rstrip(b"\r\n") + b"\n"
    lenient = getattr(msg, "lenient", None)
    if lenient is not None:  # a leniently decoded line is written back as it came
        return bytes(lenient.raw).rstrip(b"\r\n") + b"\n"
    buf = bytearray()
    if isinstance(msg, SystemMessage):
        _encoder.encode_into(msg, buf)
        buf[:1] = _SYSTEM_PREFIX
    elif _has_unknown_block(msg):
        _encoder.encode_into(
            _unwrap_unknown_blocks(msgspec.to_builtins(msg, enc_hook=_enc_hook)), buf
        )
    else:
        _encoder.encode_into(msg, buf)
    buf += b"\n"
    return bytes(buf)


def _has_unknown_block(msg: object) -> bool:
    """Whether ``msg`` carries an UnknownBlock where content blocks live."""
    if isinstance(msg, (UserInput, AssistantMessage, UserMessage)):
        content = msg.message.content
        return isinstance(content, list) and any(type(b) is UnknownBlock for b in content)
    if isinstance(msg, StreamEvent):
        event = msg.event
        if isinstance(event, ContentBlockStart):
            return type(event.content_block) is UnknownBlock
        if isinstance(event, MessageStart):
            return any(type(b) is UnknownBlock for b in event.message.content)
    return False


def _unwrap_block(block: Any) -> Any:
    if isinstance(block, dict) and block.get("type") == UNKNOWN_BLOCK_TAG:
        return block.get("data", block)
    return block


def _unwrap_unknown_blocks(obj: Any) -> Any:
    """Put the original objects back in place of UnknownBlock wrappers (builtins form)."""
    message = obj.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        message["content"] = [_unwrap_block(b) for b in message["content"]]
    event = obj.get("event")
    if isinstance(event, dict):
        if "content_block" in event:
            event["content_block"] = _unwrap_block(event["content_block"])
        inner = event.get("message")
        if isinstance(inner, dict) and isinstance(inner.get("content"), list):
            inner["content"] = [_unwrap_block(b) for b in inner["content"]]
    return obj
