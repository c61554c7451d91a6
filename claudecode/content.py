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
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

import msgspec

__all__ = (
    "ContentBlock",
    "DocumentBlock",
    "ImageBlock",
    "known_block_types",
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


class ToolResultBlock(_Block, frozen=True, tag="tool_result"):
    """The result of a tool call, as sent back to the model.

    ``content`` is a string, a list of content items (kept as plain JSON), or absent.
    """

    tool_use_id: str
    content: str | list[Any] | None = None
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
