"""What a line the typed decode refused is: malformed (with a guess of its type), of an
unknown type or subtype, or known with content blocks of unknown types (rewritten to
:class:`~claudecode.content.UnknownBlock`). Shared by the inbound and outbound decoders'
careful paths. No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias

from ..content import UNKNOWN_BLOCK_TAG
from ..messages import MalformedLine
from .wire import BLOCK_TYPES, MALFORMED_LINE_MAX

__all__ = (
    "classify",
    "malformed",
    "rewrite_unknown_blocks",
    "sniff_type",
    "str_at",
)

_Reason: TypeAlias = Literal["not_json", "wrong_shape"]


def malformed(line: bytes, line_number: int, reason: _Reason, error: object) -> MalformedLine:
    """A :class:`MalformedLine` for ``line``: its first bytes, why, and a guess of its type."""
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


def classify(
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


def str_at(obj: Any, key: str) -> str | None:
    if isinstance(obj, dict):
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return None


def _rewrite_blocks(blocks: Any) -> bool:
    changed = False
    if isinstance(blocks, list):
        for i, block in enumerate(blocks):
            changed |= _rewrite_block_at(blocks, i, block)
    return changed


def _rewrite_block_at(container: Any, key: Any, block: Any) -> bool:
    block_type = str_at(block, "type")
    if block_type is None or block_type in BLOCK_TYPES:
        return False
    container[key] = {"type": UNKNOWN_BLOCK_TAG, "block_type": block_type, "data": block}
    return True


def rewrite_unknown_blocks(obj: dict[str, Any]) -> bool:
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
