"""Lenient readers for JSON values of unknown shape.

Normalisers never trust the shape of a tool input or result: every field goes through one
of these, which return ``None`` (or a neutral value) instead of raising on a wrong type.
Integers are kept to the signed 64-bit range so that every payload stays JSON-encodable.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

__all__ = (
    "as_bool",
    "as_int",
    "as_list",
    "as_map",
    "as_str",
    "as_str_tuple",
    "content_text",
    "error_text",
    "first_str",
    "jsonable",
    "Missing",
    "require_str",
)

_JUST_STR = frozenset({str})
_INT_MIN = -(2**63)
_INT_MAX = 2**63 - 1
_TOOL_USE_ERROR = re.compile(r"^\s*<tool_use_error>(.*)</tool_use_error>\s*$", re.DOTALL)


#: What :func:`jsonable` decodes. A tuple, not ``A | B``: the union would be built anew on
#: every call.
_RAW_JSON: Final = (msgspec.Raw, bytes, bytearray, memoryview)


class Missing(Exception):
    """A required input field is absent or of the wrong type: fall back to ``generic``."""


def jsonable(value: object) -> Any:
    """Decode raw JSON (``bytes``, :class:`msgspec.Raw`) to Python values; pass others through."""
    if isinstance(value, _RAW_JSON):
        try:
            return msgspec.json.decode(bytes(value))
        except (msgspec.DecodeError, ValueError):
            return None
    return value


def as_map(value: object) -> Mapping[str, Any]:
    """``value`` if it is a mapping with string keys, else an empty mapping."""
    # ``type(...) is dict`` first: the usual decoded object skips the ABC's instance check
    if (type(value) is dict or isinstance(value, Mapping)) and (
        # one C-level pass for the usual exact-str keys; subclasses of str take the long way
        _JUST_STR.issuperset(map(type, value)) or all(isinstance(k, str) for k in value)
    ):
        return value
    return {}


def as_list(value: object) -> Sequence[Any]:
    """``value`` if it is a list or tuple, else an empty tuple."""
    if isinstance(value, (list, tuple)):
        return value
    return ()


def as_str(value: object) -> str | None:
    """``value`` if it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def require_str(value: object) -> str:
    """``value`` if it is a string; raise :class:`Missing` otherwise."""
    if isinstance(value, str):
        return value
    raise Missing


def first_str(mapping: Mapping[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` whose value in ``mapping`` is a string."""
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str):
            return value
    return None


def as_int(value: object) -> int | None:
    """An integer read from an int, an integral float or a decimal string; else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return None
        value = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if not text or len(text) > 20 or not text.lstrip("+-").isdigit() or not text.isascii():
            return None
        value = int(text)
    if isinstance(value, int) and _INT_MIN <= value <= _INT_MAX:
        return int(value)
    return None


def as_bool(value: object) -> bool:
    """``True`` only for the JSON value ``true``."""
    return value is True


def as_str_tuple(value: object) -> tuple[str, ...]:
    """The strings of a list, in order; other items and other values are dropped."""
    items = as_list(value)
    if set(map(type, items)) <= _JUST_STR:  # the usual case, checked in C
        return tuple(items)
    return tuple(item for item in items if isinstance(item, str))


def content_text(content: object) -> str:
    """The text of a ``tool_result`` content: a string, or the joined text blocks.

    Blocks may be dicts (``{"type": "text", "text": ...}``) or objects with a ``text``
    attribute (typed content blocks). Non-text blocks are skipped.
    """
    content = jsonable(content)
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in as_list(content):
        if type(block) is dict or isinstance(block, Mapping):
            text = block.get("text")
            kind = block.get("type", "text")
        else:
            text = getattr(block, "text", None)
            kind = getattr(block, "type", "text")
        if kind == "text" and isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def error_text(text: str, tool_use_result: object) -> str:
    """The readable error of a failed call: unwrap ``<tool_use_error>``, or use the result."""
    match = _TOOL_USE_ERROR.match(text)
    if match:
        return match.group(1).strip().removeprefix("Error: ")
    if text:
        return text
    if isinstance(tool_use_result, str):
        return tool_use_result.removeprefix("Error: ")
    return "error"
