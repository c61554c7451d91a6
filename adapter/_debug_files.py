"""A session's ``--debug-dir`` files: what crossed the CLI's pipes, and the events it gave.

Two JSON Lines files per session, ``<id>.protocol.jsonl`` (every message from the CLI as
``{"dir": "from_cli", "msg": ...}`` and every prompt sent as ``{"dir": "to_cli", ...}``) and
``<id>.events.jsonl`` (every event, stamped). They hold prompts and tool output, so they are
private to the user: 0600 files in a 0700 directory when we create it (an existing
directory is left as the user made it). Writing never raises into the session.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from claudecode import encode_message
from claudecode.internal import LiteInbound, StreamEventLite

from .events import Event, encode_event

__all__ = ("DebugFiles", "private_append")


def private_append(path: Path) -> IO[bytes]:
    """``path`` opened for appending, readable and writable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode otherwise
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


class DebugFiles:
    """The two files of one session, open for its lifetime (enter it on the session's stack)."""

    def __init__(self, directory: str | os.PathLike[str], session_id: str) -> None:
        self._directory = Path(directory)
        self._session_id = session_id
        self._stack = contextlib.ExitStack()
        self._protocol: IO[bytes] | None = None
        self._events: IO[bytes] | None = None

    def __enter__(self) -> DebugFiles:
        self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        base = self._directory / self._session_id
        self._protocol = self._stack.enter_context(private_append(Path(f"{base}.protocol.jsonl")))
        self._events = self._stack.enter_context(private_append(Path(f"{base}.events.jsonl")))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def rename(self, session_id: str) -> None:
        """Name the files after ``session_id`` (the open files follow; a file of that name
        that exists already is kept, and these keep their names)."""
        for suffix in (".protocol.jsonl", ".events.jsonl"):
            target = self._directory / f"{session_id}{suffix}"
            if not target.exists():
                with contextlib.suppress(OSError):
                    (self._directory / f"{self._session_id}{suffix}").rename(target)
        self._session_id = session_id

    def from_cli(self, batch: Sequence[LiteInbound]) -> None:
        """Record a batch the CLI wrote (the session reads whole stream events while these
        files are open: a lite one has nothing worth writing)."""
        assert self._protocol is not None
        for message in batch:
            if isinstance(message, StreamEventLite):
                continue
            with contextlib.suppress(Exception):
                line = encode_message(message).rstrip()
                self._protocol.write(b'{"dir":"from_cli","msg":' + line + b"}\n")

    def to_cli(self, record: dict[str, Any]) -> None:
        """Record what the session sent (a prompt: its text and how many images)."""
        assert self._protocol is not None
        self._protocol.write(json.dumps({"dir": "to_cli", **record}).encode() + b"\n")

    def events(self, events: Sequence[Event]) -> None:
        """Record stamped events."""
        assert self._events is not None
        for event in events:
            self._events.write(encode_event(event) + b"\n")
