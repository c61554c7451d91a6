"""The audit log: who did what to which session, as JSON lines.

:class:`AuditLog` writes one JSON object per line to a file (created ``0600``: it names
users, sessions and tools) and the same record to the structured log (logger
``claudecode.audit``, event ``audit``). The ownership layer (:mod:`adapter.owners`) and the
terminal guard write to it; every record has ``time`` (UTC, ISO 8601), ``action``, ``user``
and ``via`` (the front end: ``rest``, ``ws``, ``agui``, ``pty``, ``internal``), and what the
action is about (``session``, ``tool``, ``decision``, ``owner`` ...).

Writes are synchronous appends of one short line to an open file: an audit record is
never queued (a crash loses nothing written before it) and never dropped. :meth:`AuditLog.reopen`
(``serve`` calls it on SIGHUP) opens the path again, for log rotation: ``logrotate`` moves
the file away, then signals, and the records after that go to a new file at the path.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
from typing import Any

from claudecode.internal import get_logger

__all__ = ("AuditLog",)

_log = get_logger("claudecode.audit")


class AuditLog:
    """Audit records to ``path`` (``None``: to the structured log only).

    The file is opened for appending and created ``0600``; an existing file's mode is
    narrowed to ``0600`` too. :meth:`reopen` opens the path again (after a rotation);
    :meth:`close` closes it (records after that go to the log only).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = None if path is None else os.fspath(path)
        self._fd: int | None = None
        self._closed = False
        self._lock = threading.Lock()
        if self.path is not None:
            self._fd = self._open(self.path)

    @staticmethod
    def _open(path: str) -> int:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, 0o600)
        try:
            os.fchmod(fd, 0o600)
        except OSError:
            os.close(fd)
            raise
        return fd

    def reopen(self) -> None:
        """Open the path again (a file that was moved away keeps what it holds; the records
        from now on go to the file at the path, created ``0600`` if it is not there). A path
        that cannot be opened now keeps the old file and says so in the log; nothing is
        raised (a signal handler calls this)."""
        if self.path is None or self._closed:
            return
        try:
            fd = self._open(self.path)
        except OSError as exc:
            _log.error("audit.reopen_failed", path=self.path, error=str(exc))
            return
        with self._lock:
            closed = self._closed
            if closed:
                stale: int | None = fd  # closed meanwhile: the new file goes too
            else:
                stale, self._fd = self._fd, fd
        if stale is not None:
            os.close(stale)
        if not closed:
            _log.info("audit.reopened", path=self.path)

    def write(self, action: str, **fields: Any) -> None:
        """Record ``action`` with ``fields`` (``None`` values are left out)."""
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
        record: dict[str, Any] = {"time": now, "action": action}
        record.update((k, v) for k, v in fields.items() if v is not None)
        _log.info("audit", **record)
        if self._fd is None:
            return
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is not None:
                os.write(self._fd, line)

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            self._closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
