"""Lenient decoding: keep what can be read of a line whose strict decode failed.

The strict decoders in :mod:`claudecode._codec` reject a whole line when one field has the
wrong type or a required field is missing. A field nobody needs (an integer ``timestamp``, a
``null`` cost) must not cost the line — least of all a tool call or a turn's result. So when
the strict decode of a line of a *known* type fails, :func:`lenient_decode` repairs the
object step by step, guided by msgspec's own error paths, and decodes it again:

* a field of the wrong type (or an unknown value) is dropped, so it takes its default;
  a wrong element of a list is dropped from the list;
* a required field that is missing (or was dropped) is filled with the zero value of its
  type (``""``, ``0``, ``{}``, ``[]``, ``None`` where allowed);
* an object whose class cannot be told (a content block or delta without its ``type``) is
  dropped from its list, or counts as a missing field of its parent.

Every repair is recorded. The few :data:`ESSENTIAL_FIELDS` are the exception: a message
without one of them cannot be used (a tool call without its content, a permission request
without its tool name, an answer without its request id), so a repair that touches one gives
up and the caller delivers the line as an :class:`~claudecode.messages.UnknownMessage` with
the raw line. Only the slow path runs this code: a line that decodes strictly never does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from ..messages import AssistantMessage, StreamEvent, UserMessage
from ..messages_control import (
    CanUseToolRequest,
    ControlCancelRequest,
    HookCallbackRequest,
    InboundControlRequest,
    InboundControlResponse,
    McpMessageRequest,
)
from ..outbound import ControlFailure, ControlSuccess
from ..stream_events import ContentBlockDelta, ContentBlockStart, ContentBlockStop, MessageStart

__all__ = ("ESSENTIAL_FIELDS", "EssentialFieldError", "lenient_convert", "lenient_decode")

#: Fields (wire names) without which a message cannot be used, per class. A line whose
#: strict decode fails on one of these arrives as an ``UnknownMessage`` with the raw line.
#: The ``type`` of every line and the ``subtype`` of ``system`` lines and control requests
#: are essential too: they choose the class.
ESSENTIAL_FIELDS: Final[Mapping[type, frozenset[str]]] = {
    InboundControlRequest: frozenset({"request_id", "request"}),
    CanUseToolRequest: frozenset({"tool_name", "input"}),
    HookCallbackRequest: frozenset({"callback_id"}),
    McpMessageRequest: frozenset({"server_name", "message"}),
    InboundControlResponse: frozenset({"response"}),
    ControlSuccess: frozenset({"request_id"}),
    ControlFailure: frozenset({"request_id"}),
    ControlCancelRequest: frozenset({"request_id"}),
    AssistantMessage: frozenset({"message"}),
    UserMessage: frozenset({"message"}),
    StreamEvent: frozenset({"event"}),
    MessageStart: frozenset({"message"}),
    ContentBlockStart: frozenset({"index", "content_block"}),
    ContentBlockDelta: frozenset({"index", "delta"}),
    ContentBlockStop: frozenset({"index"}),
}

#: At most this many repairs per line; a line that needs more is malformed.
MAX_REPAIRS: Final = 64

_ERROR = re.compile(r"^(?P<text>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.S)
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")
_TOKEN = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


class EssentialFieldError(ValueError):
    """A line cannot be used: one of its essential fields is missing or unreadable."""


def _essential(cls: type) -> frozenset[str]:
    return ESSENTIAL_FIELDS.get(cls, frozenset())


@cache
def _decoder(cls: type) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(cls)


@cache
def _info(cls: type) -> mi.Type:
    return mi.type_info(cls)


def lenient_decode(obj: dict[str, Any], cls: type) -> tuple[Any, tuple[str, ...]]:
    """Decode the JSON object ``obj`` as ``cls``, repairing it as needed (``obj`` is changed).

    Returns:
        The decoded message and the repairs made (empty when none was needed).

    Raises:
        EssentialFieldError: an essential field is missing or unreadable.
        msgspec.ValidationError: the object could not be repaired.
    """
    decoder = _decoder(cls)
    repairs: list[str] = []
    while True:
        try:
            return decoder.decode(msgspec.json.encode(obj)), tuple(repairs)
        except msgspec.ValidationError as exc:
            if len(repairs) >= MAX_REPAIRS:
                raise
            repairs.append(_repair(obj, cls, str(exc)))


def lenient_convert(payload: Mapping[str, Any], cls: type) -> tuple[Any, tuple[str, ...]]:
    """:func:`lenient_decode` for a control answer's payload (a copy is repaired)."""
    obj = msgspec.json.decode(msgspec.json.encode(dict(payload)))
    return lenient_decode(obj, cls)


def _repair(obj: dict[str, Any], cls: type, error: str) -> str:
    """Change ``obj`` so that the error ``error`` goes away; return what was done."""
    match = _ERROR.match(error)
    assert match is not None  # the pattern matches any text
    text, path_text = match.group("text"), match.group("path") or "$"
    tokens = _tokens(path_text)
    missing = _MISSING.match(text)
    if missing is not None:
        name = missing.group("field")
        holder = _node(obj, tokens)
        struct = _struct_at(cls, obj, tokens)
        if struct is None or not isinstance(holder, dict):
            # The holder's class cannot be told (its tag is missing): drop the holder.
            return _drop(obj, cls, tokens, f"{path_text}: {text}")
        if name in _essential(struct.cls):
            raise EssentialFieldError(f"essential field `{name}` missing at {path_text}")
        field = next((f for f in struct.fields if f.encode_name == name), None)
        if field is None or name == struct.cls.__struct_config__.tag_field:
            return _drop(obj, cls, tokens, f"{path_text}: {text}")
        holder[name] = _zero(field.type)
        return f"{path_text}.{name}: missing, filled with {holder[name]!r}"
    return _drop(obj, cls, tokens, f"{path_text}: {text}")


def _drop(obj: dict[str, Any], cls: type, tokens: list[str | int | None], what: str) -> str:
    """Remove the value at ``tokens`` (a dict key or a list element)."""
    # A "[...]" token (a dict value whose key msgspec does not say) cannot be located:
    # drop the dict that holds it instead.
    if None in tokens:
        tokens = tokens[: tokens.index(None)]
    if not tokens:
        raise EssentialFieldError(f"the message itself is unreadable ({what})")
    parent_tokens, last = tokens[:-1], tokens[-1]
    parent = _node(obj, parent_tokens)
    if isinstance(last, str):
        struct = _struct_at(cls, obj, parent_tokens)
        if struct is not None and last in _essential(struct.cls):
            raise EssentialFieldError(f"essential field `{last}` unreadable ({what})")
        if isinstance(parent, dict) and last in parent:
            del parent[last]
            return f"{what}; dropped"
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        del parent[last]
        return f"{what}; element dropped"
    raise EssentialFieldError(f"cannot repair ({what})")


def _tokens(path: str) -> list[str | int | None]:
    out: list[str | int | None] = []
    for key, index in _TOKEN.findall(path[1:]):
        if key:
            out.append(key)
        elif index == "...":
            out.append(None)
        else:
            out.append(int(index))
    return out


def _node(obj: Any, tokens: list[str | int | None]) -> Any:
    node = obj
    for token in tokens:
        if isinstance(token, str) and isinstance(node, dict):
            node = node.get(token)
        elif isinstance(token, int) and isinstance(node, list) and token < len(node):
            node = node[token]
        else:
            return None
    return node


def _resolve(t: mi.Type, node: Any) -> mi.Type:
    """The member of a union that ``node`` is meant to be (by tag for structs)."""
    if not isinstance(t, mi.UnionType):
        return t
    for member in t.types:
        if isinstance(member, mi.StructType) and isinstance(node, dict):
            tag_field = member.tag_field
            if tag_field is None or node.get(tag_field) == member.tag:
                return member
        elif (isinstance(member, mi.DictType) and isinstance(node, dict)) or (
            isinstance(member, mi.ListType) and isinstance(node, list)
        ):
            return member
    return t


def _struct_at(cls: type, obj: Any, tokens: list[str | int | None]) -> mi.StructType | None:
    t: mi.Type = _info(cls)
    node = obj
    for token in tokens:
        t = _resolve(t, node)
        if isinstance(t, mi.StructType) and isinstance(token, str):
            field = next((f for f in t.fields if f.encode_name == token), None)
            if field is None:
                return None
            t = field.type
        elif isinstance(t, mi.ListType | mi.VarTupleType) and isinstance(token, int):
            t = t.item_type
        elif isinstance(t, mi.DictType):
            t = t.value_type
        else:
            return None
        node = _node(node, [token])
    t = _resolve(t, node)
    return t if isinstance(t, mi.StructType) else None


def _zero(t: mi.Type) -> Any:
    """The zero value of a type, for a required field that is missing."""
    if isinstance(t, mi.UnionType):
        if any(isinstance(m, mi.NoneType) for m in t.types):
            return None
        return _zero(t.types[0])
    if isinstance(t, mi.StrType):
        return ""
    if isinstance(t, mi.BoolType):
        return False
    if isinstance(t, mi.IntType):
        return 0
    if isinstance(t, mi.FloatType):
        return 0.0
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return []
    if isinstance(t, mi.DictType):
        return {}
    if isinstance(t, mi.StructType):
        return {t.tag_field: t.tag} if t.tag_field is not None else {}
    if isinstance(t, mi.LiteralType):
        return t.values[0]
    return None
