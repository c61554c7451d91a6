"""A ``SessionStore`` (``claudecode.sdk``, the official SDK's protocol) kept in JetStream,
so a session mirrored on one machine resumes on any other that reaches the same NATS.

One stream, ``<PREFIX>_SDK_SESSIONS``; each transcript is one subject,
``<prefix>.sdksession.<project key>.<session id>[.<subpath>]`` (each token base64url, so
any key is a valid subject token), and each :meth:`append` one or more messages holding a
JSON array of entries, stamped with the store's write time (``Bridge-Mtime``, Unix ms).
:meth:`load` reads the subject back in order; listings come from the stream's per-subject
counts. Use it as ``ClaudeAgentOptions(session_store=JetStreamSessionStore(js))``.
"""

from __future__ import annotations

import base64
import binascii
import time
from typing import TYPE_CHECKING, cast

import msgspec

from claudecode.sdk.types import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
)

from ._streams import ensure_stream

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext

__all__ = ("JetStreamSessionStore",)

MTIME_HEADER = "Bridge-Mtime"
#: Payload bytes per message, under NATS's default 1 MiB limit with room for headers.
_CHUNK_BYTES = 512 * 1024


def _token(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=") or "_"


def _text(token: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


class JetStreamSessionStore:
    """Session transcripts in a JetStream stream (see the module docstring)."""

    def __init__(self, js: JetStreamContext, *, prefix: str = "bridge", replicas: int = 1):
        self._js = js
        self._stream = f"{prefix.upper()}_SDK_SESSIONS"
        self._root = f"{prefix}.sdksession"
        self._replicas = replicas
        self._ready = False
        self._last_mtime = 0

    async def ensure(self) -> None:
        """Create the stream if needed (done on first use too)."""
        from nats.js import api

        config = api.StreamConfig(
            name=self._stream,
            subjects=[f"{self._root}.>"],
            storage=api.StorageType.FILE,
            num_replicas=self._replicas,
        )
        await ensure_stream(self._js, config)
        self._ready = True

    def _subject(self, key: SessionKey | SessionListSubkeysKey) -> str:
        subject = f"{self._root}.{_token(key['project_key'])}.{_token(key['session_id'])}"
        subpath = key.get("subpath")
        return f"{subject}.{_token(subpath)}" if isinstance(subpath, str) and subpath else subject

    def _mtime(self) -> int:
        now = max(int(time.time() * 1000), self._last_mtime + 1)
        self._last_mtime = now
        return now

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Add ``entries`` to the transcript of ``key`` (in as many messages as needed)."""
        if not self._ready:
            await self.ensure()
        subject, mtime = self._subject(key), str(self._mtime())
        chunk: list[bytes] = []
        size = 0
        for entry in entries:
            encoded = msgspec.json.encode(entry)
            if chunk and size + len(encoded) > _CHUNK_BYTES:
                await self._publish(subject, chunk, mtime)
                chunk, size = [], 0
            chunk.append(encoded)
            size += len(encoded) + 1
        if chunk or not entries:  # an empty append still creates the transcript
            await self._publish(subject, chunk, mtime)

    async def _publish(self, subject: str, chunk: list[bytes], mtime: str) -> None:
        payload = b"[" + b",".join(chunk) + b"]"
        await self._js.publish(subject, payload, stream=self._stream, headers={MTIME_HEADER: mtime})

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of the transcript of ``key``, in order (``None``: none stored)."""
        from nats.js.errors import NotFoundError

        if not self._ready:
            await self.ensure()
        subject, seq = self._subject(key), 1
        entries: list[SessionStoreEntry] = []
        found = False
        while True:
            try:
                msg = await self._js.get_msg(self._stream, seq=seq, subject=subject, next=True)
            except NotFoundError:
                break
            assert msg.seq is not None
            seq, found = msg.seq + 1, True
            batch = msgspec.json.decode(msg.data or b"[]")
            entries += [cast("SessionStoreEntry", e) for e in batch if isinstance(e, dict)]
        return entries if found else None

    async def _subjects(self, pattern: str) -> dict[str, int]:
        if not self._ready:
            await self.ensure()
        info = await self._js.stream_info(self._stream, subjects_filter=pattern)
        subjects: dict[str, int] = dict(info.state.subjects or {})
        return subjects

    async def _last_mtime_of(self, subject: str) -> int:
        msg = await self._js.get_last_msg(self._stream, subject)
        try:
            return int((msg.headers or {}).get(MTIME_HEADER, "0"))
        except ValueError:
            return 0

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The sessions of a project (main transcripts only) and their last write times."""
        prefix = f"{self._root}.{_token(project_key)}."
        listed: list[SessionStoreListEntry] = []
        for subject in await self._subjects(prefix + "*"):
            session_id = _text(subject[len(prefix) :])
            if session_id is not None:
                mtime = await self._last_mtime_of(subject)
                listed.append({"session_id": session_id, "mtime": mtime})
        return listed

    async def delete(self, key: SessionKey) -> None:
        """Remove a transcript; a main transcript takes its subkeys with it."""
        if not self._ready:
            await self.ensure()
        subject = self._subject(key)
        await self._js.purge_stream(self._stream, subject=subject)
        if not key.get("subpath"):
            await self._js.purge_stream(self._stream, subject=f"{subject}.>")

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session (sub-agent transcripts, metadata)."""
        prefix = self._subject(key) + "."
        subpaths = (_text(s[len(prefix) :]) for s in await self._subjects(prefix + "*"))
        return [s for s in subpaths if s is not None]

    def __repr__(self) -> str:
        return f"JetStreamSessionStore(stream={self._stream!r})"
