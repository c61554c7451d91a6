"""Content blocks: the items of a message's ``content`` list, tagged by ``"type"``.

The same blocks appear in both directions: in ``assistant`` and ``user`` lines from the CLI,
in ``content_block_start`` stream events, and in the content we send in a user message
(text and images).

Unknown block types
-------------------
The Messages API grows new block types from time to time (server tools, citations, ...). A
line that carries a block type this module does not know must still decode, so the codec
uses a two-step strategy:

1. The hot path decodes the whole line with the typed union below (one pass, no dicts).
2. Only if that fails, the codec decodes the line into plain Python objects, replaces every
   block whose ``type`` is not a known tag by ``{"type": "__unknown__", "block_type": <the
   original type>, "data": <the original block>}``, and converts the result. Such a block
   comes out as :class:`UnknownBlock`, with the original type in :attr:`UnknownBlock.block_type`
   and the original JSON object in :attr:`UnknownBlock.data`.

So a consumer sees typed blocks for everything known and an :class:`UnknownBlock` for the
rest, and the common case pays nothing for the fallback.

Huge tool results
-----------------
A ``tool_result`` whose text is longer than :data:`LARGE_TEXT_BYTES` on the wire (a log file
read whole, a command printing megabytes) arrives with its ``content`` as a
:class:`LargeText`: the undecoded JSON string, kept as bytes until someone asks for the text.
CPython stores a string with 1, 2 or 4 bytes per character by its widest character, so 64 MiB
of mostly-ASCII output with one emoji would take 256 MiB as a ``str``; as a ``LargeText`` it
costs its wire bytes, and :meth:`LargeText.head` decodes only the beginning (what a display
shows). ``str(content)`` gives the whole text.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import msgspec

__all__ = (
    "ContentBlock",
    "DocumentBlock",
    "ImageBlock",
    "known_block_types",
    "LARGE_TEXT_BYTES",
    "LargeText",
    "RedactedThinkingBlock",
    "ServerToolUseBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "UNKNOWN_BLOCK_TAG",
    "UnknownBlock",
    "WebSearchToolResultBlock",
)

#: The tag the codec gives to blocks of a type it does not know (see the module docstring).
UNKNOWN_BLOCK_TAG: Final = "__unknown__"

#: A ``tool_result`` content string longer than this on the wire (its JSON literal, quotes and
#: escapes included) is delivered as a :class:`LargeText` instead of a ``str``.
LARGE_TEXT_BYTES: Final = 8 * 1024 * 1024

_string_decoder: Final = msgspec.json.Decoder(str)
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _decode_literal(literal: bytes, *, repair: str | None = "replace") -> str:
    """The text of a JSON string literal. What msgspec refuses (a lone surrogate escape as
    JavaScript writes for a cut emoji; with ``repair="replace"`` also invalid UTF-8) reads as
    U+FFFD, as the codec's repairs do; without ``repair``, or when it is no string literal
    at all, ``ValueError``."""
    try:
        return _string_decoder.decode(literal)
    except ValueError:
        if repair is None:
            raise
    text = json.loads(literal.decode("utf-8", repair))
    if not isinstance(text, str):
        raise ValueError("not a JSON string")
    return _LONE_SURROGATE.sub("\ufffd", text)


class LargeText:
    """A huge text kept as its JSON string literal until it is read (see the module docstring).

    ``str(text)`` decodes all of it (each time: keep the result if you need it twice);
    :meth:`head` decodes only the beginning. Encoding a message that holds one writes the
    literal back unchanged. Equal to another ``LargeText`` with the same literal; never equal
    to a ``str`` (compare ``str(text)`` for that).
    """

    __slots__ = ("_literal",)

    def __init__(self, literal: bytes | msgspec.Raw) -> None:
        """Wrap ``literal``: a JSON string, quotes included (a ``Raw`` is kept without a copy)."""
        self._literal = literal if isinstance(literal, msgspec.Raw) else msgspec.Raw(literal)

    @classmethod
    def from_text(cls, text: str) -> LargeText:
        """A ``LargeText`` holding ``text`` (encoded once)."""
        return cls(msgspec.json.encode(text))

    @property
    def literal(self) -> msgspec.Raw:
        """The JSON string literal, as it came on the wire."""
        return self._literal

    @property
    def nbytes(self) -> int:
        """The size of the literal: an upper bound of the text's UTF-8 size (plus 2)."""
        return len(self._literal)

    def __str__(self) -> str:
        literal = bytes(self._literal)
        try:
            return _decode_literal(literal)
        except ValueError:  # not a string literal (made by hand): its characters as they are
            return literal.decode("utf-8", "replace")

    def head(self, max_bytes: int) -> str:
        """The beginning of the text without decoding the rest.

        At least ``max_bytes`` UTF-8 bytes of it when the text is longer (possibly a few
        more), else the whole text; never a broken character or escape.
        """
        literal = self._literal
        # An escape is at most 6 wire bytes for at least 1 byte of text ("\\u0001").
        end = 6 * max(max_bytes, 0) + 16
        if end >= len(literal):
            return str(self)
        prefix = bytes(memoryview(literal)[:end])
        # Back off over a cut escape or UTF-8 sequence: at most 12 bytes ("\\ud83d\\ude00");
        # repairs only when no cut decodes cleanly (a lone surrogate in the text itself).
        for repair in (None, "strict", "replace"):
            for cut in range(end, end - 13, -1):
                try:
                    return _decode_literal(prefix[:cut] + b'"', repair=repair)
                except ValueError:
                    continue
        return prefix.decode("utf-8", "replace")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LargeText):
            return bytes(self._literal) == bytes(other._literal)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(bytes(self._literal))

    def __repr__(self) -> str:
        return f"<LargeText of {len(self._literal):,} bytes: {self.head(40)[:40]!r}...>"


class _Block(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Base of every content block (not part of the public API)."""


class TextBlock(_Block, frozen=True, tag="text"):
    """Plain text."""

    text: str
    #: Citations attached by the API, kept as plain JSON objects.
    citations: list[Any] | None = None


class ThinkingBlock(_Block, frozen=True, tag="thinking"):
    """Extended-thinking text with its signature (``signature`` is empty while streaming)."""

    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Block, frozen=True, tag="redacted_thinking"):
    """Thinking the API returned encrypted; ``data`` is opaque."""

    data: str


class ToolUseBlock(_Block, frozen=True, tag="tool_use"):
    """A tool call by the model: ``input`` is the tool's JSON arguments."""

    id: str
    name: str
    input: dict[str, Any]


if TYPE_CHECKING:
    ToolResultContent: TypeAlias = str | list[Any] | LargeText | None
else:  # what the decoder reads; a LargeText is made by the codec for huge strings only
    ToolResultContent: TypeAlias = str | list[Any] | None


class ToolResultBlock(_Block, frozen=True, tag="tool_result"):
    """The result of a tool call, as sent back to the model.

    ``content`` is a string, a list of content items (kept as plain JSON), or absent; a
    string longer than :data:`LARGE_TEXT_BYTES` on the wire comes as a :class:`LargeText`.
    """

    tool_use_id: str
    content: ToolResultContent = None
    is_error: bool | None = None


class ImageBlock(_Block, frozen=True, tag="image"):
    """An image; ``source`` is e.g. ``{"type": "base64", "media_type": ..., "data": ...}``."""

    source: dict[str, Any]


class DocumentBlock(_Block, frozen=True, tag="document"):
    """A document (PDF or text); ``source`` as in the Messages API."""

    source: dict[str, Any]
    title: str | None = None
    context: str | None = None
    citations: dict[str, Any] | None = None


class ServerToolUseBlock(_Block, frozen=True, tag="server_tool_use"):
    """A call of a server-side tool (web search, ...), executed by the API itself."""

    id: str
    name: str
    input: dict[str, Any]


class WebSearchToolResultBlock(_Block, frozen=True, tag="web_search_tool_result"):
    """Results of a server-side web search; ``content`` kept as plain JSON."""

    tool_use_id: str
    content: Any = None


class UnknownBlock(_Block, frozen=True, tag=UNKNOWN_BLOCK_TAG):
    """A block of a type this version does not know.

    Produced by the codec's fallback path only. ``block_type`` is the ``type`` the block had
    on the wire and ``data`` is the whole original JSON object (``type`` included).
    """

    block_type: str
    data: dict[str, Any]


#: Every content block type, tagged by ``"type"``.
ContentBlock: TypeAlias = (
    TextBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ToolUseBlock
    | ToolResultBlock
    | ImageBlock
    | DocumentBlock
    | ServerToolUseBlock
    | WebSearchToolResultBlock
    | UnknownBlock
)

_KNOWN: Final = frozenset(
    (
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "tool_result",
        "image",
        "document",
        "server_tool_use",
        "web_search_tool_result",
    )
)


def known_block_types() -> frozenset[str]:
    """Return the wire ``type`` values that decode into a specific block class."""
    return _KNOWN
