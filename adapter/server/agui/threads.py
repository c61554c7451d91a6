"""The thread store: AG-UI thread id -> Claude Code session, and its messages.

Each thread remembers the CLI session id it runs (so a run after a server restart resumes
it with ``--resume``) and the agent it talks to (its runs keep that agent's settings), in a
small SQLite file, and its messages (for ``agent/connect``'s
``MESSAGES_SNAPSHOT``), in an append-only log per thread (:mod:`.threadlog`) in a directory
beside it: a save appends what changed since the last one, so a long run does not rewrite
its whole thread twice a second. Both live in the server's state directory, private (0600
files in a 0700 directory); without a state directory the store lives in memory. Calls run
in a worker thread, one at a time.

Threads are kept per user (:func:`thread_key`): two users' threads never share a row, whatever
ids their pages pick.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread

from ...owners import LOCAL, NOBODY, SERVER, current_caller
from .snapshot import MessageLog
from .threadlog import LogRecord, encode_record, read_log, replay

__all__ = ("ThreadRecord", "ThreadStore", "thread_key")


def thread_key(thread_id: str) -> str:
    """Where the caller's thread ``thread_id`` is kept: threads are per user, so another
    user's thread id is simply a new thread (ids cannot be probed, nor runs joined). The
    implicit local user, and a service used with no caller at all (outside the server),
    keep the plain ids (threads saved before identities existed stay found)."""
    principal = current_caller().principal
    if principal is LOCAL or principal is SERVER or principal is NOBODY:
        return thread_id
    return f"{principal.name}\x1f{thread_id}"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread_id TEXT PRIMARY KEY,
    cli_session_id TEXT,
    messages TEXT NOT NULL DEFAULT '[]',
    updated_at REAL NOT NULL,
    agent TEXT
)
"""
# (``messages`` is what an older version kept whole: read when a thread has no log yet.)

#: A log is compacted (rewritten as one ``reset`` record) once it has grown past this
#: many times the size of its last compaction, plus the slack below.
_COMPACT_RATIO = 4
_COMPACT_SLACK = 1 << 20


@dataclass
class ThreadRecord:
    """What survives a restart of one thread (``agent``: the name of its agent; ``None``
    for a thread saved before agents had names, which is the default agent's)."""

    thread_id: str
    cli_session_id: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    updated_at: float = 0.0
    agent: str | None = None


#: A thread's row: thread id, CLI session id, updated at, agent.
_Row = tuple[str, str | None, float, str | None]


@dataclass
class _Write:
    key: str
    data: bytes
    reset: bool  # data is a whole log (replaces the file), else appended


class ThreadStore:
    """Threads in SQLite (``path``) with their message logs in ``<path>.d/``, or in memory
    (``None``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.logs: Path | None = None
        self._lock: anyio.Lock | None = None
        # Per thread key, as queued: the log's length (0: its next save writes it whole) and
        # the size of its last ``reset`` record (for compaction).
        self._ends: dict[str, int] = {}
        self._bases: dict[str, int] = {}
        # Per thread key, as written (the worker's): the length of the good records in the
        # file; a key not here is read before its first append.
        self._files: dict[str, int] = {}
        self._broken: set[str] = set()  # logs a write failed on, until a reset
        self._rows: dict[str, _Row] = {}  # queued for SQLite
        self._writes: list[_Write] = []  # queued for the logs, in order
        self._forgotten: list[str] = []  # keys whose state the worker drops next
        self._memory: dict[str, bytes] = {}  # the logs without a state directory
        if self.path is not None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
            os.chmod(self.path, 0o600)
            self.logs = self.path.with_name(self.path.name + ".d")
            self.logs.mkdir(mode=0o700, exist_ok=True)
            os.chmod(self.logs, 0o700)
        self._db = sqlite3.connect(
            ":memory:" if self.path is None else str(self.path), check_same_thread=False
        )
        if self.path is not None:
            # WAL with NORMAL sync: durable across a process crash, one fsync per checkpoint
            # instead of per save.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(threads)")}
        if "agent" not in columns:  # a file written before threads had agents
            self._db.execute("ALTER TABLE threads ADD COLUMN agent TEXT")
        self._db.commit()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    async def _call(self, fn: Any, *args: Any) -> Any:
        """Write what is queued, then call ``fn``, in the worker thread (one call at a
        time). The queue is taken here, in the event loop's thread, which alone adds to it."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            rows, self._rows = list(self._rows.values()), {}
            writes, self._writes = self._writes, []
            forgotten, self._forgotten = self._forgotten, []

            def call() -> Any:
                self._flush(rows, writes)
                for key in forgotten:
                    self._files.pop(key, None)
                    self._broken.discard(key)
                return fn(*args)

            return await anyio.to_thread.run_sync(call)

    async def load(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record, or ``None`` for a thread never saved."""
        row, messages, end = await self._call(self._load, thread_id)
        if not any(write.key == thread_id for write in self._writes):
            self._ends[thread_id] = self._bases[thread_id] = end
        if row is None and messages is None:
            return None
        cli_session_id, old_messages, updated_at, agent = row or (None, "[]", 0.0, None)
        if messages is None:  # no log yet: what an older version saved whole
            try:
                decoded = json.loads(old_messages)
            except ValueError:
                decoded = []
            messages = decoded if isinstance(decoded, list) else []
        return ThreadRecord(thread_id, cli_session_id, messages, updated_at, agent)

    def _load(self, thread_id: str) -> tuple[Any, list[dict[str, Any]] | None, int]:
        cursor = self._db.execute(
            "SELECT cli_session_id, messages, updated_at, agent FROM threads WHERE thread_id = ?",
            (thread_id,),
        )
        row = cursor.fetchone()
        data = self._read(thread_id)
        records, end = read_log(data)
        self._files[thread_id] = end
        return row, replay(records) if end else None, end

    def forget(self, thread_id: str) -> None:
        """Drop what the store keeps in memory about a thread its caller no longer holds
        (it stays saved; a later :meth:`load` reads it again): a server's threads come and
        go, and this state must not grow with every thread it ever had."""
        self._ends.pop(thread_id, None)
        self._bases.pop(thread_id, None)
        self._forgotten.append(thread_id)

    async def save(self, record: ThreadRecord) -> None:
        """Insert or update the record, with its messages whole."""
        await self.save_many([record])

    async def save_many(self, records: list[ThreadRecord]) -> None:
        """Insert or update the records, with their messages whole."""
        for record in records:
            self._queue(
                record, _Write(record.thread_id, encode_record(_reset(record.messages)), True)
            )
        await self._call(_nothing)

    async def save_threads(self, threads: list[tuple[ThreadRecord, MessageLog]]) -> None:
        """Save the threads: each record's fields, and what its log changed since it was
        last saved (appended), or the whole log (the thread's first save, and when its file
        has grown enough to compact).

        Each log is drained and encoded before the next wait (the caller passes live logs
        that change as soon as it runs again), and queued in that order: two saves under
        way at once write a thread's changes in the order they were drained. Between two
        threads the event loop runs on: fifty threads in one go held every stream for
        milliseconds, twice a second while runs streamed.
        """
        for index, (record, log) in enumerate(threads):
            if index:
                await anyio.lowlevel.checkpoint()
            key = record.thread_id
            end = self._ends.get(key, 0)
            if not end or end > self._bases.get(key, 0) * _COMPACT_RATIO + _COMPACT_SLACK:
                log.clear_dirty()
                data = encode_record(_reset(log.messages(copy_=False)))
                self._queue(record, _Write(key, data, True))
                continue
            change = log.drain()
            self._queue(
                record, None if change is None else _Write(key, encode_record(change), False)
            )
        await self._call(_nothing)

    def _queue(self, record: ThreadRecord, write: _Write | None) -> None:
        record.updated_at = time.time()
        self._rows[record.thread_id] = (
            record.thread_id,
            record.cli_session_id,
            record.updated_at,
            record.agent,
        )
        if write is not None:
            self._writes.append(write)
            if write.reset:
                self._ends[write.key] = self._bases[write.key] = len(write.data)
            else:
                self._ends[write.key] = self._ends.get(write.key, 0) + len(write.data)

    def _flush(self, rows: list[_Row], writes: list[_Write]) -> None:
        """Write what was queued (in the worker thread)."""
        failed: BaseException | None = None
        for write in writes:
            if write.key in self._broken and not write.reset:
                continue  # its log already misses a record: only a reset mends it
            try:
                self._put_log(write)
                self._broken.discard(write.key)
            except Exception as exc:
                # Whatever this thread's log holds now, its next save writes it whole.
                self._broken.add(write.key)
                self._ends[write.key] = 0
                failed = failed or exc
        if rows:
            self._db.executemany(
                "INSERT INTO threads (thread_id, cli_session_id, messages, updated_at, agent) "
                "VALUES (?, ?, '[]', ?, ?) ON CONFLICT(thread_id) DO UPDATE SET "
                "cli_session_id = excluded.cli_session_id, messages = '[]', "
                "updated_at = excluded.updated_at, agent = excluded.agent",
                rows,
            )
            self._db.commit()
        if failed is not None:
            raise failed

    # -- the log files -------------------------------------------------------------------

    def _log_path(self, key: str) -> Path | None:
        if self.logs is None:
            return None
        # Hashed: a thread id is the page's to pick, a file name must not be.
        return self.logs / (hashlib.sha256(key.encode()).hexdigest()[:40] + ".log")

    def _read(self, key: str) -> bytes:
        path = self._log_path(key)
        if path is None:
            return self._memory.get(key, b"")
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return b""

    def _put_log(self, write: _Write) -> None:
        path = self._log_path(write.key)
        if write.reset:
            if path is None:
                self._memory[write.key] = write.data
            else:
                _replace(path, write.data)
            self._files[write.key] = len(write.data)
            return
        # Where the good records end: past a torn record, if the last write was one (a
        # crash), the next one goes where the torn one began.
        end = self._files.get(write.key)
        if end is None:
            end = read_log(self._read(write.key))[1]
        if path is None:
            self._memory[write.key] = self._memory.get(write.key, b"")[:end] + write.data
        else:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.ftruncate(fd, end)
                os.lseek(fd, end, os.SEEK_SET)
                _write_all(fd, write.data)
            finally:
                os.close(fd)
        self._files[write.key] = end + len(write.data)


def _nothing() -> None:
    pass


def _reset(messages: list[dict[str, Any]]) -> LogRecord:
    return {"reset": True, "put": messages}


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` as the file at ``path``: in full and synced before it replaces the
    old one, so a crash leaves one or the other."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
