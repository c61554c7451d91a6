"""Keep secrets off the CLI's command line.

Any local user can read a process's argv (``/proc/PID/cmdline``, ``ps``), and argv ends up
in debug logs. An MCP configuration often carries tokens (``env``, ``headers``) and settings
may too (``env``, ``apiKeyHelper``). So the inline JSON value of ``--mcp-config`` or
``--settings`` is written to a private temporary file (created 0600, only its owner can read
it) and the flag gets the file's path instead; the CLI accepts a path for both. The files
are removed when the session ends.

:func:`redact_argv` is what may be logged of an argv: inline JSON values shown by size only.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from typing import Final

__all__ = ("PrivateArgFiles", "redact_argv")

#: Flags whose inline JSON value moves to a private file.
FILE_FLAGS: Final = frozenset({"--mcp-config", "--settings"})


def _inline_json(value: str) -> bool:
    return value.lstrip().startswith(("{", "["))


class PrivateArgFiles:
    """The private files holding inline JSON arguments of one CLI process."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def externalize(self, argv: Sequence[str]) -> list[str]:
        """Return ``argv`` with each inline JSON value of :data:`FILE_FLAGS` in a file."""
        out = list(argv)
        for i, arg in enumerate(out):
            flag, eq, value = arg.partition("=")
            if flag in FILE_FLAGS and eq and _inline_json(value):
                out[i] = f"{flag}={self._write(value)}"
            elif arg in FILE_FLAGS and i + 1 < len(out) and _inline_json(out[i + 1]):
                out[i + 1] = self._write(out[i + 1])
        return out

    def _write(self, content: str) -> str:
        # mkstemp creates the file 0600 (O_EXCL, so nobody can have put a link there).
        fd, path = tempfile.mkstemp(prefix="claudecode-args-", suffix=".json")
        self.paths.append(path)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(content)
        return path

    def remove(self) -> None:
        """Delete the files (idempotent)."""
        paths, self.paths = self.paths, []
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` for a log line: inline JSON values replaced by their size."""
    out = []
    for arg in argv:
        flag, eq, value = arg.partition("=")
        if _inline_json(arg):
            out.append(f"<json: {len(arg)} chars>")
        elif eq and flag.startswith("--") and _inline_json(value):
            out.append(f"{flag}=<json: {len(value)} chars>")
        else:
            out.append(arg)
    return out
