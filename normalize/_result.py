"""The tool result as the family normalisers see it: text, error flag, structured data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._coerce import as_map, error_text
from ._truncate import truncate_text

__all__ = ("ToolResult",)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One ``tool_result`` block plus the ``tool_use_result`` sent next to it.

    Attributes:
        text: The text of the block's content (text blocks joined).
        is_error: The block's ``is_error``.
        data: The structured ``tool_use_result`` (any JSON value; often a dict, a string
            ``"Error: ..."`` on failures, or ``None``).
        max_bytes: The byte cap for each output text.
    """

    text: str
    is_error: bool
    data: Any
    max_bytes: int

    @property
    def structured(self) -> Mapping[str, Any]:
        """``data`` when it is an object, else an empty mapping."""
        return as_map(self.data)

    @property
    def error(self) -> str | None:
        """The error text when the result is an error, else ``None``."""
        return error_text(self.text, self.data) if self.is_error else None

    def cut(self, text: str | None) -> tuple[str | None, bool]:
        """``text`` truncated to ``max_bytes``, and whether it was cut."""
        if text is None:
            return None, False
        return truncate_text(text, self.max_bytes)
