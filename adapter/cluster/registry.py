"""The session registry and the workers' heartbeats, in two JetStream key-value buckets.

``<prefix>_sessions`` maps a session id to its :class:`~adapter.cluster.wire.SessionRecord`
(the public :class:`~adapter.SessionInfo` — owner, status, state, cwd, CLI session id,
model, times — and the :class:`~adapter.SessionSpec` that started it). The owning worker
writes it when the session's state changes. ``<prefix>_workers`` holds one key per worker,
renewed every ``heartbeat_interval``; the bucket's age limit is ``heartbeat_ttl`` and the
server leaves a delete marker when a key expires, so a worker that stops renewing (killed,
cut off) disappears from every watcher within that bound.

:class:`Registry` keeps a live local copy of both buckets (KV watchers) for placement and
for noticing lost sessions; :meth:`Registry.sweep` finds sessions whose owner is gone.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from claudecode import UsageError
from claudecode.internal import get_logger

from .config import ClusterConfig
from .fencing import EXPECTED_LAST_SUBJECT_SEQ
from .wire import SessionRecord, WireError, WorkerInfo, decode_record, decode_worker, encode

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext
    from nats.js.kv import KeyValue

__all__ = ("Registry", "open_buckets")

_log = get_logger("claudecode.adapter.cluster.registry")

_DELETES = ("DEL", "PURGE")
#: Seconds of clock difference, beyond a heartbeat interval, that a worker's beat may show
#: before this process warns about the two machines' clocks.
_CLOCK_MARGIN = 2.0


async def open_buckets(js: JetStreamContext, config: ClusterConfig) -> tuple[KeyValue, KeyValue]:
    """The sessions and workers buckets, created when missing, and updated when their
    replication or the heartbeat TTL differ from ``config`` (as the streams get their
    limits: a deployment restarted with other values gets them)."""
    from nats.js.errors import BucketNotFoundError

    try:
        sessions = await js.key_value(config.sessions_bucket)
    except BucketNotFoundError:
        sessions = await js.create_key_value(
            bucket=config.sessions_bucket, history=1, replicas=config.replicas
        )
    else:
        await _keep_bucket(js, config.sessions_bucket, config.replicas)
    try:
        workers = await js.key_value(config.workers_bucket)
    except BucketNotFoundError:
        workers = await js.create_key_value(
            bucket=config.workers_bucket,
            history=1,
            ttl=config.heartbeat_ttl,
            replicas=config.replicas,
            # A delete marker when a heartbeat expires, so watchers see the worker go.
            limit_marker_ttl=max(1.0, config.heartbeat_ttl),
        )
    else:
        await _keep_bucket(js, config.workers_bucket, config.replicas, config.heartbeat_ttl)
    return sessions, workers


async def _keep_bucket(
    js: JetStreamContext, bucket: str, replicas: int, ttl: float | None = None
) -> None:
    # A bucket's replication and age limit (the workers bucket's: the heartbeat TTL) are
    # fixed when it is made; without this a deployment moved to a NATS cluster would keep
    # single copies, and one given another TTL would expire heartbeats after the old one.
    current = (await js.stream_info(f"KV_{bucket}")).config
    changes: dict[str, object] = {}
    if current.num_replicas != replicas:
        changes["num_replicas"] = replicas
    if ttl is not None and (current.max_age is None or abs(current.max_age - ttl) > 1e-6):
        changes["max_age"] = ttl
        changes["duplicate_window"] = min(current.duplicate_window or ttl, ttl)
        changes["subject_delete_marker_ttl"] = max(1.0, ttl)
    if not changes:
        return
    await js.update_stream(dataclasses.replace(current, **changes))  # type: ignore[arg-type]
    before = {name: getattr(current, name) for name in changes}
    _log.info("cluster.bucket_changed", bucket=bucket, before=before, after=changes)


class Registry:
    """A live copy of the sessions and workers buckets.

    ``on_session`` is called with every session record that changes (and ``None`` records
    are never passed: a deleted key is dropped from :attr:`sessions`).
    """

    def __init__(
        self,
        js: JetStreamContext,
        config: ClusterConfig,
        *,
        on_session: Callable[[SessionRecord], None] | None = None,
    ) -> None:
        self._js = js
        self.config = config
        self.sessions: dict[str, tuple[SessionRecord, int]] = {}
        self.workers: dict[str, WorkerInfo] = {}
        self._on_session = on_session
        self._sessions_kv: KeyValue | None = None
        self._workers_kv: KeyValue | None = None
        self._loaded = anyio.Event()
        self._watchers: list[Any] = []
        #: When a session's owner was first seen missing (monotonic seconds).
        self._missing_since: dict[str, float] = {}
        #: Workers whose clock was found far off this process's (warned once each).
        self._clock_warned: set[str] = set()
        self._judge_after = 0.0

    @property
    def sessions_kv(self) -> KeyValue:
        """The sessions bucket."""
        assert self._sessions_kv is not None, "the registry is not started"
        return self._sessions_kv

    @property
    def workers_kv(self) -> KeyValue:
        """The workers bucket."""
        assert self._workers_kv is not None, "the registry is not started"
        return self._workers_kv

    async def open(self) -> None:
        """Open (create) the buckets without watching them."""
        self._sessions_kv, self._workers_kv = await open_buckets(self._js, self.config)

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Watch both buckets (until cancelled); ``started`` once the first copy is loaded."""
        if self._sessions_kv is None:
            await self.open()
        async with anyio.create_task_group() as tg:
            loaded = [anyio.Event(), anyio.Event()]
            tg.start_soon(self._watch, self.sessions_kv, self._session_entry, loaded[0])
            tg.start_soon(self._watch, self.workers_kv, self._worker_entry, loaded[1])
            for event in loaded:
                await event.wait()
            self._loaded.set()
            task_status.started()

    async def _watch(self, kv: KeyValue, apply: Callable[[Any], None], loaded: anyio.Event) -> None:
        # A KV watcher delivers the current value of every key, then None, then changes.
        while True:
            try:
                watcher = await kv.watchall()
            except Exception as exc:
                _log.warning("cluster.watch_failed", bucket=kv._name, error=repr(exc))
                await anyio.sleep(1.0)
                continue
            self._watchers.append(watcher)
            try:
                async for entry in watcher:
                    if entry is None:
                        loaded.set()
                        continue
                    apply(entry)
            finally:
                self._watchers.remove(watcher)
                with anyio.CancelScope(shield=True):
                    await _stop(watcher)

    def _session_entry(self, entry: Any) -> None:
        key = entry.key
        if entry.operation in _DELETES or not entry.value:
            self.sessions.pop(key, None)
            return
        try:
            record = decode_record(entry.value)
        except WireError as exc:
            _log.warning("cluster.malformed_record", session_id=key, error=str(exc))
            return
        if record.info.id != key:
            _log.warning("cluster.malformed_record", session_id=key, error="id mismatch")
            return
        self.sessions[key] = (record, entry.revision)
        if self._on_session is not None:
            self._on_session(record)

    def _worker_entry(self, entry: Any) -> None:
        key = entry.key
        if entry.operation in _DELETES or not entry.value:
            if self.workers.pop(key, None) is not None:
                _log.info("cluster.worker_gone", worker=key)
            return
        try:
            worker = decode_worker(entry.value)
        except WireError as exc:
            _log.warning("cluster.malformed_heartbeat", worker=key, error=str(exc))
            return
        if key not in self.workers:
            _log.info("cluster.worker_seen", worker=key)
        self.workers[key] = worker
        self._check_clock(worker)

    def _check_clock(self, worker: WorkerInfo) -> None:
        # A beat is read within milliseconds of its writing, or up to a heartbeat interval
        # later when the watcher starts: anything beyond that and a margin is the clocks.
        # Create deadlines are wall-clock times, so a worker whose clock is far ahead
        # refuses creates that are still awaited (and one far behind takes late ones).
        if not worker.clock or worker.id in self._clock_warned:
            return
        skew = worker.clock - time.time()
        if abs(skew) <= self.config.heartbeat_interval + _CLOCK_MARGIN:
            return
        self._clock_warned.add(worker.id)
        _log.warning(
            "cluster.worker_clock_off",
            worker=worker.id,
            ahead_by=round(skew, 3),
            hint="synchronise the machines' clocks (NTP): create deadlines compare them",
        )

    async def wait_loaded(self) -> None:
        """Wait until both buckets were read once."""
        await self._loaded.wait()

    # -- reads and writes ------------------------------------------------------------------

    async def get(self, session_id: str) -> tuple[SessionRecord, int] | None:
        """The session's record and revision, read from the bucket (not the copy)."""
        from nats.js.errors import KeyDeletedError, KeyNotFoundError

        try:
            entry = await self.sessions_kv.get(session_id)
        except (KeyNotFoundError, KeyDeletedError):
            return None
        if not entry.value:
            return None
        try:
            return decode_record(entry.value), int(entry.revision or 0)
        except WireError as exc:
            _log.warning("cluster.malformed_record", session_id=session_id, error=str(exc))
            return None

    async def put(
        self, record: SessionRecord, *, ttl: float | None = None, revision: int | None = None
    ) -> int:
        """Write a session's record; returns its new revision.

        ``ttl``: the key expires after that many seconds. ``revision``: write only if the
        key is still at that revision (the writer's own last write), else JetStream refuses
        it (see :func:`~adapter.cluster.fencing.is_wrong_last_sequence`).
        """
        if ttl is None:
            if revision is None:
                return int(await self.sessions_kv.put(record.info.id, encode(record)))
            return int(await self.sessions_kv.update(record.info.id, encode(record), revision))
        subject = f"$KV.{self.config.sessions_bucket}.{record.info.id}"
        headers = None if revision is None else {EXPECTED_LAST_SUBJECT_SEQ: str(revision)}
        ack = await self._js.publish(
            subject, encode(record), msg_ttl=max(1.0, ttl), headers=headers
        )
        return int(ack.seq)

    async def create(self, record: SessionRecord) -> int:
        """Write a new session's first record; returns its revision.

        Raises:
            UsageError: the key holds a record already (another worker started a session
                with this id: the bucket decides which one is the session).
        """
        from nats.js.errors import KeyWrongLastSequenceError

        try:
            return int(await self.sessions_kv.create(record.info.id, encode(record)))
        except KeyWrongLastSequenceError:
            raise UsageError(f"a session {record.info.id!r} exists already") from None

    async def claim(self, record: SessionRecord, revision: int) -> bool:
        """Write ``record`` only if the key is still at ``revision`` (one process wins)."""
        from nats.js.errors import KeyWrongLastSequenceError

        try:
            await self.sessions_kv.update(record.info.id, encode(record), last=revision)
        except KeyWrongLastSequenceError:
            return False
        return True

    async def heartbeat(self, worker: WorkerInfo) -> None:
        """Renew a worker's key."""
        await self.workers_kv.put(worker.id, encode(worker))

    async def forget_worker(self, worker_id: str) -> None:
        """Remove a worker's key (a clean shutdown)."""
        await self.workers_kv.delete(worker_id)

    # -- placement and failure -------------------------------------------------------------

    def candidates(self, labels: dict[str, str], *, exclude: str | None = None) -> list[str]:
        """Live workers that carry every label, least loaded first; those that look full
        come last rather than not at all (this copy's load can be ahead of the worker's:
        :meth:`note_placed` counts a session its last heartbeat may count already), and a
        worker that is full declines."""

        def full(w: WorkerInfo) -> bool:
            return 0 < w.max_sessions <= w.sessions

        chosen = [
            w
            for w in self.workers.values()
            if w.id != exclude and all(w.labels.get(k) == v for k, v in labels.items())
        ]
        chosen.sort(key=lambda w: (full(w), w.sessions / max(1, w.max_sessions), w.sessions, w.id))
        return [w.id for w in chosen]

    def note_placed(self, worker_id: str) -> None:
        """Count a session just placed on a worker until its next heartbeat says so, so a
        burst of creations spreads instead of piling onto the worker that looked idlest."""
        worker = self.workers.get(worker_id)
        if worker is not None:
            self.workers[worker_id] = msgspec.structs.replace(worker, sessions=worker.sessions + 1)

    def reconnected(self, now: float | None = None) -> None:
        """This process is back on NATS after an outage: judge no worker for a heartbeat
        TTL and an interval. Heartbeat keys expired meanwhile (NATS itself was down, or so
        was this process's link) while their workers were as cut off as this process; they
        beat again once reconnected."""
        now = time.monotonic() if now is None else now
        self._judge_after = now + self.config.heartbeat_ttl + self.config.heartbeat_interval
        self._missing_since.clear()

    def lost_sessions(self, now: float | None = None) -> list[tuple[SessionRecord, int]]:
        """Sessions that are live in the registry but whose owner has had no heartbeat for
        at least one heartbeat interval (seen twice, so a record that arrived before its
        worker's first heartbeat is not taken for lost); none shortly after
        :meth:`reconnected`."""
        now = time.monotonic() if now is None else now
        if now < self._judge_after:
            return []
        lost: list[tuple[SessionRecord, int]] = []
        seen_missing: set[str] = set()
        for record, revision in list(self.sessions.values()):
            info = record.info
            if info.state == "closed" or info.status == "lost" or info.owner is None:
                continue
            if info.owner in self.workers:
                continue
            seen_missing.add(info.id)
            since = self._missing_since.setdefault(info.id, now)
            if now - since >= self.config.heartbeat_interval:
                lost.append((record, revision))
        for key in list(self._missing_since):
            if key not in seen_missing:
                del self._missing_since[key]
        return lost

    async def close(self) -> None:
        """Stop the watchers."""
        for watcher in list(self._watchers):
            await _stop(watcher)


async def _stop(watcher: Any) -> None:
    try:
        await watcher.stop()
    except Exception as exc:
        _log.debug("cluster.watch_stop_failed", error=repr(exc))
