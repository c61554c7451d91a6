"""Text from the model or from tools, made safe to write to a terminal.

A tool's output (or the model) can contain terminal control sequences: ``\\x1b]0;...\\x07``
sets the window title, ``\\x1b[2J`` clears the screen, bidirectional overrides reorder what a
person reads. :func:`escape_control` shows every such character as a visible escape
(``\\x1b``, ``\\u202e``) and keeps newlines and tabs; :func:`escape_json_line` does the same
for a line of JSON (the characters JSON itself leaves raw: DEL, C1 controls, bidi controls).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ("UNSAFE_CHARACTERS", "escape_control", "escape_json_line")

#: Code points shown escaped: C0 controls but tab and newline, DEL, C1 controls, and the
#: bidirectional marks, embeddings, overrides and isolates.
UNSAFE_CHARACTERS: Final[frozenset[int]] = frozenset(
    [
        *range(0x00, 0x09),
        *range(0x0B, 0x20),
        *range(0x7F, 0xA0),
        0x061C,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ]
)


def _visible(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TABLE: Final = {code: _visible(code) for code in UNSAFE_CHARACTERS}
_UNSAFE_RE: Final = re.compile(
    "[" + "".join(re.escape(chr(code)) for code in sorted(UNSAFE_CHARACTERS)) + "]"
)


def escape_control(text: str) -> str:
    """``text`` with every unsafe character shown as an escape; ``\\r\\n`` becomes ``\\n``."""
    if _UNSAFE_RE.search(text) is None:
        return text  # the common case: nothing to do
    return text.replace("\r\n", "\n").translate(_TABLE)


# In JSON text these characters can only occur inside strings, where \uXXXX is equivalent.
_JSON_RAW: Final = re.compile(
    rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)


def escape_json_line(line: bytes) -> bytes:
    """A line of JSON (as msgspec writes it) with the control characters JSON leaves raw
    written as ``\\uXXXX`` escapes; the decoded value is unchanged."""
    return _JSON_RAW.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), line)
