"""Encoding: any outbound message (and, for fake CLIs and tests, any inbound one) as compact
JSON plus ``b"\\n"``, with one reused :class:`msgspec.json.Encoder`. A content block decoded as
:class:`~claudecode.content.UnknownBlock` is written back as its original object. No I/O.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ..content import UNKNOWN_BLOCK_TAG, LargeText, UnknownBlock
from ..messages import (
    AssistantMessage,
    InboundMessage,
    MalformedLine,
    StreamEvent,
    UnknownMessage,
    UserMessage,
)
from ..outbound import OutboundMessage, RawControl, UserInput
from ..stream_events import ContentBlockStart, MessageStart
from ..system_messages import SystemMessage

__all__ = ("encode_message",)


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
