"""The tool result as the family normalisers see it: text, error flag, structured data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._coerce import as_map, error_text
from ._truncate import truncate_text

__all__ = ("ToolResult",)


class ToolResult:
    """One ``tool_result`` block plus the ``tool_use_result`` sent next to it.

    Attributes:
        text: The text of the block's content (text blocks joined).
        is_error: The block's ``is_error``.
        data: The structured ``tool_use_result`` (any JSON value; often a dict, a string
            ``"Error: ..."`` on failures, or ``None``).
        max_bytes: The byte cap for each output text.
    """

    # A plain class with its own __init__ rather than a frozen dataclass: compiled (mypyc),
    # a dataclass keeps the generated Python __init__ (one per tool result); the fields are
    # Final, so the type checker still refuses an assignment.
    __slots__ = ("data", "is_error", "max_bytes", "text")

    def __init__(self, *, text: str, is_error: bool, data: Any, max_bytes: int) -> None:
        self.text: Final = text
        self.is_error: Final = is_error
        self.data: Final = data
        self.max_bytes: Final = max_bytes

    def __repr__(self) -> str:
        return (
            f"ToolResult(text={self.text!r}, is_error={self.is_error!r}, data={self.data!r}, "
            f"max_bytes={self.max_bytes!r})"
        )

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
