"""Batching the CLI's transcript_mirror frames into SessionStore.append calls.

Ported from claude-agent-sdk 0.2.189, ``_internal/transcript_mirror_batcher.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from ..._detached import DetachedTask, spawn_detached
from ..._log import get_logger
from .._types_sessions import SessionKey, SessionStore, SessionStoreEntry
from .memory_store import file_path_to_session_key

_log = get_logger("claudecode.sdk")


# Eager-flush thresholds. Exported for tests.
MAX_PENDING_ENTRIES = 500


MAX_PENDING_BYTES = 1 << 20  # 1 MiB


SEND_TIMEOUT_SECONDS = 60.0


# Bounded retry for transient adapter failures. Backoff list length must be
# MAX_ATTEMPTS - 1 (one delay between each pair of attempts).
MIRROR_APPEND_MAX_ATTEMPTS = 3


MIRROR_APPEND_BACKOFF_S = (0.2, 0.8)


@dataclass
class _MirrorEntry:
    file_path: str
    entries: list[SessionStoreEntry]
    bytes: int


@dataclass
class TranscriptMirrorBatcher:
    """Accumulates ``transcript_mirror`` frames and flushes them to a store."""

    store: SessionStore
    projects_dir: str
    on_error: Callable[[SessionKey | None, str], Awaitable[None]]
    send_timeout: float = SEND_TIMEOUT_SECONDS
    max_pending_entries: int = MAX_PENDING_ENTRIES
    max_pending_bytes: int = MAX_PENDING_BYTES

    _pending: list[_MirrorEntry] = field(default_factory=list)
    _pending_entries: int = 0
    _pending_bytes: int = 0
    _flush_task: DetachedTask | None = None
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    def enqueue(self, file_path: str, entries: list[SessionStoreEntry]) -> None:
        """Buffer a frame; schedule an eager flush if thresholds are exceeded."""
        # Approximate wire size — one stringify per frame (not per entry) keeps
        # this cheap relative to the json.loads the transport already did.
        size = len(json.dumps(entries))
        self._pending.append(_MirrorEntry(file_path, entries, size))
        self._pending_entries += len(entries)
        self._pending_bytes += size
        if (
            self._pending_entries > self.max_pending_entries
            or self._pending_bytes > self.max_pending_bytes
        ):
            # Fire-and-forget on the current backend via the SDK's sniffio-
            # dispatched spawner; the lock in _drain() serializes against any
            # in-flight flush so append ordering holds. _drain() is contracted
            # never to raise; spawn_detached logs if that contract is ever
            # violated (parity with asyncio's unretrieved-exception warning).
            self._flush_task = spawn_detached(self._drain(), name="session mirror flush")

    async def flush(self) -> None:
        """Flush all pending entries, serialized after any in-flight eager flush."""
        await self._drain()

    async def close(self) -> None:
        """Final flush before teardown. Never raises."""
        try:
            with anyio.CancelScope(shield=True):
                await self.flush()
        except Exception as e:  # pragma: no cover - defensive
            _log.debug("sdk.mirror_close_failed", error=repr(e))

    async def _drain(self) -> None:
        """Detach the pending buffer, await any prior flush, then send."""
        items = self._pending
        self._pending = []
        self._pending_entries = 0
        self._pending_bytes = 0
        errors: list[tuple[SessionKey, str]] = []
        async with self._lock:
            if not items:
                return
            try:
                await self._do_flush(items, errors)
            except Exception as e:  # pragma: no cover - defensive
                # _do_flush already wraps store.append; this guards any
                # remaining unguarded path so the "Never raises" contract
                # holds against future regressions.
                _log.error("sdk.mirror_flush_raised", error=repr(e))
                return
        # Report errors after releasing the lock so a slow on_error callback
        # cannot block subsequent drains (which only need the lock for
        # append-ordering).
        for key, msg in errors:
            try:
                await self.on_error(key, msg)
            except Exception as cb_err:  # pragma: no cover - defensive
                _log.error("sdk.mirror_on_error_raised", error=repr(cb_err))

    async def _do_flush(
        self, items: list[_MirrorEntry], errors: list[tuple[SessionKey, str]]
    ) -> None:
        # Coalesce by file_path so each unique file gets one append per flush
        # instead of one per enqueued frame. dict preserves first-seen order;
        # entries within a path keep enqueue order.
        by_path: dict[str, list[SessionStoreEntry]] = {}
        for item in items:
            bucket = by_path.get(item.file_path)
            if bucket is not None:
                bucket.extend(item.entries)
            else:
                by_path[item.file_path] = list(item.entries)

        for file_path, entries in by_path.items():
            if not entries:
                # Avoid creating phantom keys in adapters that touch storage
                # on append([]) — nothing to write.
                continue
            key = file_path_to_session_key(file_path, self.projects_dir)
            if key is None:
                # The CLI's CLAUDE_CONFIG_DIR differs from ours (custom env, container?).
                _log.warning(
                    "sdk.mirror_frame_dropped", file_path=file_path, projects_dir=self.projects_dir
                )
                continue
            last_err: Exception | None = None
            succeeded = False
            for attempt in range(MIRROR_APPEND_MAX_ATTEMPTS):
                if attempt > 0:
                    await anyio.sleep(MIRROR_APPEND_BACKOFF_S[attempt - 1])
                try:
                    with anyio.fail_after(self.send_timeout):
                        await self.store.append(key, entries)
                    succeeded = True
                    break
                except TimeoutError as e:
                    # Don't retry on timeout: the cancel scope cancels the
                    # task but cancellation is best-effort for adapters
                    # wrapping non-cancellable I/O, so the in-flight call may
                    # still land — a retry would launch a concurrent
                    # duplicate. Also keeps worst-case lock hold at
                    # ~send_timeout rather than ~3xsend_timeout + backoff.
                    last_err = e
                    _log.debug("sdk.mirror_append_timed_out", file_path=file_path)
                    break
                except Exception as e:
                    last_err = e
                    _log.debug(
                        "sdk.mirror_append_failed",
                        attempt=attempt + 1,
                        file_path=file_path,
                        error=repr(e),
                    )
            if not succeeded:
                _log.error("sdk.mirror_batch_dropped", file_path=file_path, error=repr(last_err))
                errors.append((key, str(last_err)))
