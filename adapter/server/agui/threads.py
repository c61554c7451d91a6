"""The thread store: AG-UI thread id -> Claude Code session, in a small SQLite file.

Each thread remembers the CLI session id it runs (so a run after a server restart resumes
it with ``--resume``), the agent it talks to (its runs keep that agent's settings) and its
messages (for ``agent/connect``'s ``MESSAGES_SNAPSHOT``). The
file lives in the server's state directory, private (0600); without a state directory the
store lives in memory. Calls run in a worker thread, one at a time.

Threads are kept per user (:func:`thread_key`): two users' threads never share a row, whatever
ids their pages pick.
"""

from __future__ import annotations

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
import msgspec

from ...owners import LOCAL, NOBODY, SERVER, current_caller

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


@dataclass
class ThreadRecord:
    """What survives a restart of one thread (``agent``: the name of its agent; ``None``
    for a thread saved before agents had names, which is the default agent's)."""

    thread_id: str
    cli_session_id: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    updated_at: float = 0.0
    agent: str | None = None


_encode = msgspec.json.Encoder().encode


class ThreadStore:
    """Threads in SQLite (``path``), or in memory (``None``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock: anyio.Lock | None = None
        if self.path is not None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
            os.chmod(self.path, 0o600)
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
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            return await anyio.to_thread.run_sync(fn, *args)

    async def load(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record, or ``None`` for a thread never saved."""
        row = await self._call(self._load, thread_id)
        if row is None:
            return None
        cli_session_id, messages, updated_at, agent = row
        try:
            decoded = json.loads(messages)
        except ValueError:
            decoded = []
        messages_list = decoded if isinstance(decoded, list) else []
        return ThreadRecord(thread_id, cli_session_id, messages_list, updated_at, agent)

    def _load(self, thread_id: str) -> Any:
        cursor = self._db.execute(
            "SELECT cli_session_id, messages, updated_at, agent FROM threads WHERE thread_id = ?",
            (thread_id,),
        )
        return cursor.fetchone()

    async def save(self, record: ThreadRecord) -> None:
        """Insert or update the record."""
        await self.save_many([record])

    async def save_many(self, records: list[ThreadRecord]) -> None:
        """Insert or update the records, in one transaction.

        Each record's messages are encoded before the next wait: a caller may pass live
        lists that change as soon as it runs again. Between two records the event loop
        runs on: fifty threads' messages in one go held every stream for milliseconds,
        twice a second while runs streamed.
        """
        when = time.time()
        rows = []
        for index, record in enumerate(records):
            if index:
                await anyio.lowlevel.checkpoint()
            record.updated_at = when
            payload = _encode(record.messages).decode()
            rows.append((record.thread_id, record.cli_session_id, payload, when, record.agent))
        if rows:
            await self._call(self._save, rows)

    def _save(self, rows: list[tuple[str, str | None, str, float, str | None]]) -> None:
        self._db.executemany(
            "INSERT INTO threads (thread_id, cli_session_id, messages, updated_at, agent) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET "
            "cli_session_id = excluded.cli_session_id, messages = excluded.messages, "
            "updated_at = excluded.updated_at, agent = excluded.agent",
            rows,
        )
        self._db.commit()
