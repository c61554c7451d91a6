"""Decoding the CLI's stdout, one line into one typed message; never raises. No I/O.

The hot path (``stream_event``, ``assistant``, ``user`` lines) is a single typed decode with
a module-level :class:`msgspec.json.Decoder` over the inbound union. ``system`` lines are
matched by a tiny envelope in that union and decoded a second time with the union of system
subtypes. A huge ``user`` line keeps its huge tool result texts as
:class:`~claudecode.content.LargeText`.

Only when the typed decode fails does the careful path run: the line is decoded into plain
Python objects and classified (:mod:`claudecode._codec.line_shape`):

* not JSON                                   -> :class:`MalformedLine` ``reason="not_json"``
  (unless repairing lone surrogate escapes makes it JSON)
* JSON but not an object with a string type  -> :class:`MalformedLine` ``reason="wrong_shape"``
* unknown ``type``, or a known type with an unknown ``subtype`` / SSE event type / delta type
                                             -> :class:`UnknownMessage` carrying the raw line
* known type with content blocks of an unknown type -> blocks rewritten to
  :class:`~claudecode.content.UnknownBlock`, then decoded again
* anything else (wrong field types, missing fields) -> decoded leniently (what can be read,
  with the repairs noted), else ``reason="wrong_shape"``
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import msgspec

from ..content import LARGE_TEXT_BYTES, LargeText, ToolResultBlock
from ..lenient_info import Lenient
from ..messages import InboundMessage, MalformedLine, UnknownMessage, UserMessage, UserMessageBody
from .lenient import EssentialFieldError, lenient_decode
from .line_shape import classify, malformed, rewrite_unknown_blocks, str_at
from .wire import (
    DELTA_TYPES,
    EVENT_TYPES,
    INBOUND_CLASSES,
    INBOUND_REQUEST_SUBTYPES,
    INBOUND_TYPES,
    RESPONSE_SUBTYPES,
    SYSTEM_CLASSES,
    SYSTEM_SUBTYPES,
    RawToolResult,
    SystemEnvelope,
    any_decoder,
    content_decoder,
    inbound_decoder,
    raw_user_decoder,
    system_decoder,
)

__all__ = (
    "decode_line",
    "decode_line_fast",
    "decode_small_line",
    "SystemEnvelope",
)

#: A ``\\uD800``-``\\uDFFF`` escape (paired or lone); only looked for when a decode failed.
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")

_SURROGATE_REPAIR: Final = "lone surrogate escapes replaced by U+FFFD"

#: The hot path's typed decode, for loops over many lines (the protocol's): it returns an
#: inbound message or, for a ``system`` line, a :class:`SystemEnvelope`, and raises on
#: anything else. For every line it decodes to a message, :func:`decode_line` returns an
#: equal message (a trailing ``\r`` is JSON whitespace to both); for an envelope or an
#: exception, hand the line to :func:`decode_line`.
decode_line_fast: Final = inbound_decoder.decode


def decode_small_line(line: Any) -> Any:
    """:data:`decode_line_fast` for lines that may be huge: it refuses (raises) a line longer
    than :data:`~claudecode.content.LARGE_TEXT_BYTES`, which :func:`decode_line` decodes
    keeping a huge tool result as a :class:`~claudecode.content.LargeText`."""
    if len(line) > LARGE_TEXT_BYTES:
        raise ValueError("a huge line: decode it with decode_line")
    return inbound_decoder.decode(line)


def _decode_huge_user(line: bytes) -> UserMessage | None:
    """A huge ``user`` line with every huge tool result text kept as a :class:`LargeText`;
    ``None`` when the line is anything else (or needs the careful path): decode it as usual."""
    try:
        wire = raw_user_decoder.decode(line)
    except Exception:
        return None
    content: Any = wire.message.content
    if isinstance(content, list):
        blocks: list[Any] = []
        for wire_block in content:
            block: Any = wire_block
            if block.__class__ is RawToolResult:
                raw = block.content
                if not raw:
                    value: Any = None  # no content key
                elif len(raw) > LARGE_TEXT_BYTES and bytes(memoryview(raw)[:1]) == b'"':
                    value = LargeText(raw)
                else:
                    try:
                        value = content_decoder.decode(raw)
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
        msg = inbound_decoder.decode(line)
        if msg.__class__ is SystemEnvelope:
            return system_decoder.decode(line)
        return msg  # type: ignore[return-value]  # not the envelope, so an InboundMessage
    except msgspec.ValidationError as exc:
        return _slow_path(line, line_number, exc)
    except Exception as exc:  # DecodeError, RecursionError on absurd nesting, ...
        if _SURROGATE_ESCAPE.search(line) is not None:
            fixed = _replace_lone_surrogates(line)
            if fixed is not None:
                return _with_repair(decode_line(fixed, line_number), line, _SURROGATE_REPAIR)
        return malformed(line, line_number, "not_json", exc)


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
        obj = any_decoder.decode(line)
    except Exception as err:
        return malformed(line, line_number, "not_json", err)
    try:
        kind = classify(obj, INBOUND_TYPES, _inbound_subtype)
        if isinstance(kind, str):
            return malformed(line, line_number, "wrong_shape", kind)
        if kind is not None:
            return UnknownMessage(type=kind[0], subtype=kind[1], raw=bytes(line))
        if rewrite_unknown_blocks(obj):
            patched = msgspec.json.encode(obj)
            try:
                msg = inbound_decoder.decode(patched)
                if isinstance(msg, SystemEnvelope):  # pragma: no cover - no blocks in system
                    return system_decoder.decode(patched)
                return msg
            except msgspec.ValidationError:
                pass  # something else is wrong too: repair it below
        return _lenient(line, obj)
    except Exception as err:
        return malformed(line, line_number, "wrong_shape", err)


def _lenient(line: bytes, obj: dict[str, Any]) -> InboundMessage:
    """Decode a known type after the strict decode failed, keeping what can be read."""
    typ: str = obj["type"]
    subtype = str_at(obj, "subtype")
    if typ == "system":
        cls = SYSTEM_CLASSES.get(subtype) if subtype is not None else None
    else:
        cls = INBOUND_CLASSES[typ]
    if cls is None:  # a system line without a subtype: no class to decode it as
        return UnknownMessage(type=typ, subtype=None, raw=bytes(line), reason="no string 'subtype'")
    try:
        msg, repairs = lenient_decode(obj, cls)
    except EssentialFieldError as err:
        if typ == "control_request":
            subtype = str_at(obj.get("request"), "subtype")
        return UnknownMessage(type=typ, subtype=subtype, raw=bytes(line), reason=str(err))
    repaired: InboundMessage = msgspec.structs.replace(
        msg, lenient=Lenient(raw=bytes(line), repairs=repairs)
    )
    return repaired


def _inbound_subtype(typ: str, obj: dict[str, Any]) -> str | None:
    """Return the unknown subtype of a known inbound type, or None if it is known/absent."""
    sub: str | None
    if typ == "system":
        sub = str_at(obj, "subtype")
        return sub if sub is not None and sub not in SYSTEM_SUBTYPES else None
    if typ == "control_request":
        sub = str_at(obj.get("request"), "subtype")
        return sub if sub is not None and sub not in INBOUND_REQUEST_SUBTYPES else None
    if typ == "control_response":
        sub = str_at(obj.get("response"), "subtype")
        return sub if sub is not None and sub not in RESPONSE_SUBTYPES else None
    if typ == "stream_event":
        event = obj.get("event")
        sub = str_at(event, "type")
        if sub is not None and sub not in EVENT_TYPES:
            return sub
        if sub == "content_block_delta":
            delta_type = str_at(event.get("delta"), "type")  # type: ignore[union-attr]
            if delta_type is not None and delta_type not in DELTA_TYPES:
                return delta_type
    return None
