"""``Transport``: the official SDK's abstract transport class, for imports and annotations.

The drop-in always runs the CLI itself from the options (``cli_path`` included); passing a
``transport=`` to :func:`~claudecode.sdk.query` or :class:`~claudecode.sdk.ClaudeSDKClient`
raises :class:`~claudecode.UsageError`. A custom transport goes under
:class:`claudecode.Session` instead, as a :class:`claudecode.Transport`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import Any

__all__ = ("Transport",)


class Transport(ABC):
    """Raw I/O with a Claude Code process or service (the SDK's interface)."""

    @abstractmethod
    async def connect(self) -> None:
        """Connect and get ready to read and write."""

    @abstractmethod
    async def write(self, data: str) -> None:
        """Write raw data (a JSON line)."""

    @abstractmethod
    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        """The parsed messages from the other side."""

    @abstractmethod
    async def close(self) -> None:
        """Close and release everything; must bound its own waits."""

    @abstractmethod
    def is_ready(self) -> bool:
        """Whether reads and writes may go ahead."""

    @abstractmethod
    async def end_input(self) -> None:
        """End the input stream (close stdin for a process)."""
