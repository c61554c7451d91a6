"""Decoding lines written to the CLI's stdin (for fake CLIs and tests); never raises. No I/O."""

from __future__ import annotations

from typing import Any

import msgspec

from ..messages import MalformedLine, UnknownMessage
from ..outbound import OutboundControlRequest, OutboundMessage, RawControl
from .line_shape import classify, malformed, rewrite_unknown_blocks, str_at
from .wire import (
    OUTBOUND_REQUEST_SUBTYPES,
    OUTBOUND_TYPES,
    RESPONSE_SUBTYPES,
    ControlRequestWire,
    any_decoder,
    outbound_decoder,
)

__all__ = ("decode_outbound_line",)


def _outbound_subtype(typ: str, obj: dict[str, Any]) -> str | None:
    if typ == "control_response":
        sub = str_at(obj.get("response"), "subtype")
        return sub if sub is not None and sub not in RESPONSE_SUBTYPES else None
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
        msg = outbound_decoder.decode(line)
    except msgspec.ValidationError as exc:
        return _outbound_slow_path(line, line_number, exc)
    except Exception as exc:
        return malformed(line, line_number, "not_json", exc)
    if isinstance(msg, ControlRequestWire):
        return OutboundControlRequest(request_id=msg.request_id, request=msg.request)
    return msg


def _outbound_slow_path(
    line: bytes, line_number: int, exc: Exception
) -> OutboundMessage | UnknownMessage | MalformedLine:
    try:
        obj = any_decoder.decode(line)
    except Exception as err:
        return malformed(line, line_number, "not_json", err)
    try:
        kind = classify(obj, OUTBOUND_TYPES, _outbound_subtype)
        if isinstance(kind, str):
            return malformed(line, line_number, "wrong_shape", kind)
        if kind is not None:
            return UnknownMessage(type=kind[0], subtype=kind[1], raw=bytes(line))
        if obj["type"] == "control_request":
            raw = _raw_control_request(obj)
            if raw is not None:
                return raw
        elif rewrite_unknown_blocks(obj):
            return decode_outbound_line(msgspec.json.encode(obj), line_number)
    except Exception as err:
        return malformed(line, line_number, "wrong_shape", err)
    return malformed(line, line_number, "wrong_shape", exc)


def _raw_control_request(obj: dict[str, Any]) -> OutboundControlRequest | None:
    request_id = obj.get("request_id")
    request = obj.get("request")
    subtype = str_at(request, "subtype")
    if not isinstance(request_id, str) or subtype is None or subtype in OUTBOUND_REQUEST_SUBTYPES:
        return None
    payload = {k: v for k, v in request.items() if k != "subtype"}  # type: ignore[union-attr]
    return OutboundControlRequest(request_id=request_id, request=RawControl(subtype, payload))
