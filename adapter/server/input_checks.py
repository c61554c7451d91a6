"""Checks every front end applies to what a client sends, before anything acts on it.

* :func:`decode_json`: JSON that is valid, UTF-8, and nested at most :data:`MAX_JSON_DEPTH`
  levels. Deeper documents are refused here rather than deep inside the decoder or a later
  encoder (a ``RecursionError`` there is an internal error, not the client's); invalid
  UTF-8 is a decoding error like any other. Raises :class:`msgspec.DecodeError` or
  :class:`msgspec.ValidationError` with a message for the client.
* :func:`nul_field`: the first of a request's text fields holding a NUL character. Those
  fields become command-line arguments, environment values or paths, none of which can
  carry NUL (the operating system refuses them, far from the request).
* :func:`utf8_length`: the size of a text frame in bytes, as its limit counts it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any, Final, TypeVar

import msgspec

__all__ = (
    "MAX_ID_LENGTH",
    "MAX_JSON_DEPTH",
    "JSONRejected",
    "SPEC_TEXT_FIELDS",
    "decode_json",
    "nul_field",
    "too_deep",
    "utf8_length",
)

T = TypeVar("T")

#: How deep a request's JSON may nest: far more than any real payload (a tool's JSON Schema
#: nests a few levels), far less than the interpreter's recursion limit that decoding and
#: every later encoder of the value run under.
MAX_JSON_DEPTH: Final = 128

#: The longest identifier (``request_id``, ``session_id``) a WebSocket client may send:
#: identifiers are echoed in replies and error messages, so their size is bounded.
MAX_ID_LENGTH: Final = 256

#: A session spec's text fields that reach the CLI's command line or the file system.
SPEC_TEXT_FIELDS: Final = (
    "cwd",
    "model",
    "policy",
    "permission_mode",
    "resume",
    "resume_session_at",
    "cli_session_id",
)

# Everything but quotes and brackets; then a table that makes openers 1 and closers -1 (0xff).
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


class JSONRejected(msgspec.DecodeError):
    """JSON refused for what it is, not for a syntax error: too deep, or not UTF-8."""


def too_deep(data: bytes | str) -> bool:
    """Whether valid JSON ``data`` nests deeper than :data:`MAX_JSON_DEPTH` (for a decoder
    of one's own; :func:`decode_json` checks it)."""
    # The common case first: too few brackets to nest that deep.
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= MAX_JSON_DEPTH:
            return False
        raw = data.encode("utf-8", "surrogatepass")
    else:
        if data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
            return False
        raw = data
    # Every pass is a C loop: drop the escapes (an escaped backslash first, so that what
    # follows it stays), keep quotes and brackets, keep what is between every other quote
    # (outside strings, once no quote is escaped), count the brackets.
    structure = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    brackets = b"".join(structure.split(b'"')[::2]).translate(_SIGNS)  # outside strings
    return max(itertools.accumulate(memoryview(brackets).cast("b")), default=0) > MAX_JSON_DEPTH


def decode_json(data: bytes | str, kind: type[T] | Any = Any) -> T:
    """``data`` decoded as ``kind`` (see the module docs).

    Raises:
        JSONRejected: not UTF-8, or nested too deeply (a :class:`msgspec.DecodeError`).
        msgspec.DecodeError: not JSON.
        msgspec.ValidationError: valid JSON that does not fit ``kind`` (naming the field).
    """
    try:
        decoded: T = msgspec.json.decode(data, type=kind)
    except RecursionError:
        raise JSONRejected(f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    except UnicodeDecodeError:
        raise JSONRejected("not valid UTF-8") from None
    if too_deep(data):
        raise JSONRejected(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return decoded


def nul_field(obj: Any, names: Iterable[str]) -> str | None:
    """The first of ``obj``'s attributes ``names`` that is a string holding NUL, or ``None``."""
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, str) and "\x00" in value:
            return name
    return None


def utf8_length(text: str | bytes) -> int:
    """``text``'s size in bytes (UTF-8 for a string), without encoding it when its length
    in characters already tells (every character is one to four bytes)."""
    if isinstance(text, bytes):
        return len(text)
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))
