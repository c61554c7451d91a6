"""A worker: runs sessions (CLI processes) for the cluster.

``async with ClusterWorker(nats, config, defaults) as worker: await worker.serve_forever()``.
The worker

* renews its heartbeat key (its load and labels) every ``heartbeat_interval``;
* answers creation requests on the workers' queue group and on its own subject (declining
  when at ``max_sessions`` or when the request's labels are not its own);
* for each session it runs: publishes the events to the session's stream
  (:class:`~adapter.cluster.EventPublisher`), keeps the session's registry record current,
  and answers the session's commands (prompt, permission answers, interrupt, model / mode,
  close) with an ack or a typed error;
* sweeps the registry for sessions of dead workers (:mod:`adapter.cluster.recovery`).

Anything malformed that arrives is logged and answered with a ``bad_request`` error; it
never ends the worker.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import anyio.abc

from claudecode import UsageError
from claudecode.internal import get_logger

from ..config import SessionConfig
from ..manager import PoolStatus, SessionManager, TooManySessionsError
from ..session import AgentSession
from ._acks import AckInbox
from ._claims import ResumeClaims, claimed_cli_session
from ._commands import session_command
from ._gate import PublishGate, timer_linger
from ._hosted import Hosted, cli_env, respond
from ._liveness import Heartbeat, host_token
from ._reaper import OrphanReaper
from ._records import RecordWriter
from ._sessions import check_deadline, config_for, marked, named
from .config import ClusterConfig, NatsSettings, valid_token
from .eventlog import EventPublisher, ensure_event_stream
from .fencing import FencedError
from .registry import Registry
from .transcripts import TranscriptMirror, ensure_transcript_stream, restore_transcript
from .wire import (
    Close,
    CreateExpiredError,
    CreateSession,
    ErrorBody,
    Label,
    Reply,
    SessionRecord,
    WireError,
    decode_command,
    error_body,
)

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.client import Client as NATS
    from nats.aio.msg import Msg

__all__ = ("ClusterWorker",)

_log = get_logger("claudecode.adapter.cluster.worker")

#: Batches a publish window must be expected to gather before a ready batch waits for it.
#: With the 2 ms window: from 1,500 batches a second; ten sessions at the CLI's top pace
#: (1,000 a second) go at once, as they did with the 1.5 ms setting and two per window
#: (waiting there added ~2 ms at p50 to halve the writes of a worker that is not busy).
_MIN_BATCH = 3.0


class ClusterWorker:
    """Runs sessions for the cluster (see the module docstring).

    Args:
        nats: how to connect (:class:`NatsSettings`), or a connected nats-py client (not
            closed by the worker).
        config: the deployment's names and limits.
        defaults: the :class:`~adapter.SessionConfig` a :class:`~adapter.SessionSpec` is
            applied to (CLI path, policy, environment...).
        worker_id: this worker's name (default: host name and a random suffix).
        max_sessions: sessions run at once; creation requests beyond are declined.
        idle_timeout: seconds an idle session lives (``None``: forever).
        labels: placement labels this worker carries (e.g. ``{"repo": "api"}``).
        resume_lost: start lost sessions of dead workers here (or elsewhere).
        reap_orphans: start a watchdog process that stops this worker's CLIs (and what
            they started) when the worker dies without closing them, e.g. killed with
            SIGKILL (:mod:`adapter.cluster._reaper`; Linux). The ``worker`` command sets it.
        warm: CLIs kept started with ``defaults`` (each with its CLI session id chosen in
            advance), handed to creates whose spec asks for nothing else; see
            :class:`~adapter.SessionManager`. They count against ``max_sessions``.
    """

    def __init__(
        self,
        nats: NatsSettings | NATS,
        config: ClusterConfig | None = None,
        defaults: SessionConfig | None = None,
        *,
        worker_id: str | None = None,
        max_sessions: int = 32,
        idle_timeout: float | None = 900.0,
        labels: Mapping[str, str] | None = None,
        resume_lost: bool = True,
        reap_orphans: bool = False,
        warm: int = 0,
    ) -> None:
        self.config = config or ClusterConfig()
        self._reaper = OrphanReaper() if reap_orphans else None
        self.id = worker_id or f"{host_token()}-{uuid.uuid4().hex[:8]}"
        if not valid_token(self.id):
            raise ValueError(f"worker id {self.id!r}: use letters, digits, '_' or '-'")
        self._settings = nats if isinstance(nats, NatsSettings) else None
        self._nc: Any = None if isinstance(nats, NatsSettings) else nats
        self.defaults = defaults or SessionConfig()
        self.max_sessions = max_sessions
        self.labels = dict(labels or {})
        self.resume_lost = resume_lost
        self._manager = SessionManager(
            self.defaults,
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
            warm=warm,
            warm_config=self._warm_config,
        )
        self._hosted: dict[str, Hosted] = {}
        self._gate = PublishGate(timer_linger(self.config.publish_linger), min_batch=_MIN_BATCH)
        self._acks: AckInbox | None = None
        self._starting = 0
        self._started_at = time.time()
        self._stack: contextlib.AsyncExitStack | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._subs: list[Any] = []
        self._stopped = anyio.Event()
        self.registry: Registry | None = None
        self._records_writer: RecordWriter | None = None
        self._claims: ResumeClaims | None = None
        self._beat = Heartbeat(self)

    # -- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            if self._reaper is not None:
                # First in, last out: it stops after every session was closed.
                self._reaper.start()
                stack.push_async_callback(self._stop_reaper)
            if self._nc is None:
                assert self._settings is not None
                self._nc = await self._settings.connect(
                    name=self._settings.name or f"bridge-worker {self.id}",
                    reconnected_cb=self._reconnected,
                )
                stack.push_async_callback(self._nc.close)
            nc = self._nc
            js = nc.jetstream(timeout=self.config.request_timeout)
            self._js = js
            await ensure_event_stream(js, self.config)
            await ensure_transcript_stream(js, self.config)
            self._acks = AckInbox(nc)
            await self._acks.start()
            stack.push_async_callback(self._acks.close)
            self.registry = Registry(js, self.config, on_session=self._on_record)
            self._records_writer = RecordWriter(
                self.id,
                self.registry,
                closed_retention=self.config.closed_retention,
                on_fenced=self._fence,
            )
            await self.registry.open()
            self._claims = ResumeClaims(js, self.config, self.registry)
            await self._claims.open()
            await stack.enter_async_context(self._manager)
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            stack.push_async_callback(self._shutdown)
            # Ready to take sessions before the first heartbeat makes us a candidate.
            self._subs.append(
                await nc.subscribe(
                    self.config.create_subject, queue=self.config.worker_queue, cb=self._on_create
                )
            )
            self._subs.append(
                await nc.subscribe(self.config.worker_create_subject(self.id), cb=self._on_create)
            )
            self._subs.append(
                await nc.subscribe(self.config.worker_alive_subject(self.id), cb=self._on_alive)
            )
            await nc.flush()
            await self._beat.once()
            self._tg.start_soon(self._beat.run, name=f"worker {self.id} heartbeats")
            await self._tg.start(self.registry.run)
            self._tg.start_soon(self._beat.sweep, name=f"worker {self.id} sweeper")
        except BaseException:
            await stack.__aexit__(None, None, None)
            raise
        self._stack = stack
        _log.info("cluster.worker_started", worker=self.id, labels=self.labels)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            # Not inside a shielded scope: the task group's scope must be the innermost one
            # when it exits (the shutdown steps shield themselves).
            await stack.__aexit__(exc_type, exc, tb)

    async def serve_forever(self) -> None:
        """Wait until :meth:`stop` is called (or the task is cancelled)."""
        await self._stopped.wait()

    def stop(self) -> None:
        """Make :meth:`serve_forever` return."""
        self._stopped.set()

    async def _stop_reaper(self) -> None:
        assert self._reaper is not None
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._reaper.stop)

    async def _shutdown(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._shutdown_steps()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        _log.info("cluster.worker_stopped", worker=self.id)

    async def _shutdown_steps(self) -> None:
        # Stop taking sessions, close the running ones (their events end), then go.
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs.clear()
        with anyio.move_on_after(30):
            for session_id in list(self._hosted):
                with contextlib.suppress(Exception):
                    await self._manager.close(session_id)
            for hosted in list(self._hosted.values()):
                await hosted.ended.wait()
        if self.registry is not None:
            with contextlib.suppress(Exception):
                await self.registry.forget_worker(self.id)
            await self.registry.close()

    @property
    def session_ids(self) -> list[str]:
        """The sessions this worker runs."""
        return list(self._hosted)

    # -- heartbeats and the sweep ------------------------------------------------------

    async def _on_alive(self, msg: Msg) -> None:
        # A sweep found our heartbeat key gone (NATS lost it, or our beats did not get
        # through): saying we run keeps our sessions from being declared lost.
        if msg.reply:
            with contextlib.suppress(Exception):  # the connection may be going
                await msg.respond(b"")

    async def _reconnected(self) -> None:
        if self.registry is not None:
            self.registry.reconnected()
        _log.info("cluster.nats_reconnected", worker=self.id)
        if self._tg is not None:
            self._tg.start_soon(self._beat.now)  # not in nats-py's callback

    # -- creation ----------------------------------------------------------------------

    async def _on_create(self, msg: Msg) -> None:
        # Starting a CLI takes seconds: answer in a task so requests do not queue up.
        if self._tg is None:
            return
        self._tg.start_soon(self._create, msg)

    async def _create(self, msg: Msg) -> None:
        try:
            command = decode_command(msg.data)
        except WireError as exc:
            _log.warning("cluster.malformed_command", subject=msg.subject, error=str(exc))
            await respond(msg, Reply(error=ErrorBody("bad_request", str(exc))))
            return
        if not isinstance(command, CreateSession):
            await respond(msg, Reply(error=ErrorBody("bad_request", "expected a create request")))
            return
        try:
            check_deadline(self.id, command, "on receipt", command.session_id)
        except CreateExpiredError as exc:
            await respond(msg, Reply(error=exc.body))
            return
        if len(self._hosted) + self._starting >= self.max_sessions:
            await respond(msg, Reply(error=ErrorBody("declined", f"worker {self.id} is full")))
            return
        if any(self.labels.get(k) != v for k, v in command.spec.labels.items()):
            await respond(
                msg, Reply(error=ErrorBody("declined", f"worker {self.id} lacks the labels"))
            )
            return
        self._starting += 1
        try:
            reply = await self._start(command)
        except TooManySessionsError as exc:
            reply = Reply(error=ErrorBody("declined", str(exc)))
        except CreateExpiredError as exc:
            reply = Reply(error=exc.body)
        except Exception as exc:
            _log.info("cluster.create_failed", worker=self.id, error=repr(exc))
            reply = Reply(error=error_body(exc))
        finally:
            self._starting -= 1
        await respond(msg, reply)

    async def _start(self, command: CreateSession) -> Reply:
        session_id = command.session_id or uuid.uuid4().hex
        if not valid_token(session_id):
            raise UsageError(f"session id {session_id!r}: use letters, digits, '_' or '-'")
        if session_id in self._hosted:
            raise UsageError(f"a session {session_id!r} exists already")
        if command.first_seq < 1:
            raise UsageError("first_seq must be at least 1")
        config = marked(config_for(self.defaults, command.spec), self._mark())
        # A warm CLI comes with the CLI session id it was started with (claimed below,
        # before its CLI wrote anything).
        warm = self._manager.take_warm(config, session_id=session_id)
        config = named(config) if warm is None else warm.config
        # Claimed (pending) before the CLI starts and before the id is anywhere to be seen:
        # a fresh session's or a fork's here, where its id is made; a resume's claim was made
        # by the gateway (this finds it), or is kept from before the session was lost.
        assert self._claims is not None
        claimed = claimed_cli_session(config)
        try:
            claim = None if claimed is None else await self._claims.claim(claimed, session_id)
        except BaseException:
            if warm is not None:
                with anyio.CancelScope(shield=True):
                    await self._manager.close(session_id)
            raise
        try:
            return await self._start_claimed(command, session_id, config, claimed, claim, warm)
        except BaseException:
            # A claim made here goes; a resume's stays with whoever made it (the gateway
            # drops it when the create fails, the sweep when the lost session ends).
            if claimed is not None and (config.resume is None or config.fork_session):
                with anyio.CancelScope(shield=True):
                    await self._claims.release(claimed, session_id)
            raise

    def pool_status(self) -> PoolStatus:
        """How the warm pool stands (``size`` 0: there is none)."""
        return self._manager.pool_status()

    def _mark(self) -> Mapping[str, str]:
        return self._reaper.env if self._reaper is not None else {}

    def _warm_config(self) -> SessionConfig:
        """A pooled CLI's config: the defaults, marked and named, as a fresh one's here."""
        return named(marked(self.defaults, self._mark()))

    async def _start_claimed(
        self,
        command: CreateSession,
        session_id: str,
        config: SessionConfig,
        claimed: str | None,
        claim: int | None,
        warm: AgentSession | None,
    ) -> Reply:
        if config.resume is not None:
            # A CLI session this machine may never have run: bring its file from the mirror.
            await restore_transcript(
                self._js,
                self.config,
                config.resume,
                config.cwd or os.getcwd(),
                cli_env(config),
            )
        if warm is not None:
            session = warm
        else:
            session = await self._manager.create(config, session_id=session_id)
        hosted = Hosted(session, command.spec, command.first_seq, command.created_at or time.time())
        hosted.title, hosted.archived, hosted.cost_usd = (
            command.title,
            command.archived,
            command.cost_usd,
        )
        self._hosted[session_id] = hosted
        try:

            async def enqueue(msg: Msg) -> None:
                try:
                    hosted.commands.send_nowait(msg)
                except anyio.WouldBlock:
                    busy = ErrorBody("usage", "too many commands waiting for this session")
                    await respond(msg, Reply(error=busy))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    ended = ErrorBody("unknown_session", f"session {session_id!r} has ended")
                    await respond(msg, Reply(error=ended))

            hosted.sub = await self._nc.subscribe(
                self.config.command_subject(session_id), cb=enqueue
            )
            await self._nc.flush()
            # The writers learn where the session's subjects stand before the record makes
            # the session known (and so can be declared lost): fencing needs their start.
            hosted.publisher = EventPublisher(
                self._js,
                self.config,
                session_id,
                first_seq=hosted.offset + 1,
                on_published=hosted.published,
                gate=self._gate,
                acks=self._acks,
            )
            await hosted.publisher.prime()
            hosted.mirror = self._mirror(hosted)
            if hosted.mirror is not None:
                await hosted.mirror.prime()
            record = hosted.record(self.id)
            assert self.registry is not None
            # The commit point: starting the CLI may have taken longer than the sender
            # waits. Past the deadline nobody will learn of this session (a fresh one's id
            # may be the gateway's own; a resume's recovery has closed the session), so it
            # ends here, as any failure before the record does.
            check_deadline(self.id, command, "before registering", session_id)
            if command.created_at:  # a lost session resumed here: its record exists
                hosted.revision = await self.registry.put(record)
            else:
                # A new session's id must be nobody's yet: a create this worker answers
                # late (its gateway gave up, and the id was placed again on another
                # worker) ends here rather than run a second CLI for one session id.
                hosted.revision = await self.registry.create(record)
            if claimed is not None and claim is not None:
                # The record is there: the claim lasts until the session ends.
                assert self._claims is not None
                await self._claims.confirm(claimed, session_id, claim)
                hosted.claimed = claimed
        except BaseException:
            self._hosted.pop(session_id, None)
            hosted.commands.close()
            hosted.inbox.close()
            with anyio.CancelScope(shield=True):
                if hosted.sub is not None:
                    with contextlib.suppress(Exception):
                        await hosted.sub.unsubscribe()
                await self._manager.close(session_id)
                if hosted.revision is not None:  # known already: say it ended
                    with contextlib.suppress(Exception):
                        await self._records.write(hosted, ttl=self.config.closed_retention)
            raise
        assert self._tg is not None
        self._tg.start_soon(self._host, hosted, name=f"worker host {session_id}")
        self._tg.start_soon(self._beat.now)  # the load changed: tell the gateways now
        _log.info("cluster.session_started", worker=self.id, session_id=session_id)
        return Reply(info=record.info)

    # -- one session -------------------------------------------------------------------

    async def _host(self, hosted: Hosted) -> None:
        session = hosted.session
        publisher, mirror = hosted.publisher, hosted.mirror
        assert publisher is not None
        try:
            with hosted.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._run_commands, hosted)
                    async with anyio.create_task_group() as syncing:
                        syncing.start_soon(self._fenced, hosted, self._records.sync, hosted)
                        if mirror is not None:
                            syncing.start_soon(self._fenced, hosted, mirror.run)
                        await self._fenced(hosted, publisher.run, session)
                        syncing.cancel_scope.cancel()
                    if mirror is not None:
                        with anyio.move_on_after(10), contextlib.suppress(Exception):
                            await self._fenced(hosted, mirror.flush)  # the CLI's last lines
                    # The events ended: the final record, then let a running close answer.
                    await self._records.final(hosted)
                    hosted.commands.close()
                    with anyio.move_on_after(10):
                        await hosted.drained.wait()
                    tg.cancel_scope.cancel()
        finally:
            hosted.commands.close()
            with anyio.CancelScope(shield=True):
                if hosted.sub is not None:
                    # drain, not unsubscribe: commands already received get their answer
                    # (unless the session is another worker's now).
                    with contextlib.suppress(Exception):
                        await (hosted.sub.unsubscribe() if hosted.fenced else hosted.sub.drain())
                if hosted.fenced:
                    # Its CLI goes, quietly: whatever it still emits is published nowhere.
                    with anyio.move_on_after(30), contextlib.suppress(Exception):
                        await self._manager.close(session.id)
                else:
                    await self._records.final(hosted)
                self._hosted.pop(session.id, None)
                hosted.ended.set()
                if self._tg is not None and self._subs:
                    self._tg.start_soon(self._beat.now)
                _log.info("cluster.session_ended", worker=self.id, session_id=session.id)
                if hosted.claimed is not None and not hosted.fenced:
                    # After the end, which never waits for it (bounded: NATS may be away).
                    assert self._claims is not None
                    await self._claims.release(hosted.claimed, session.id)

    async def _fenced(
        self, hosted: Hosted, run: Callable[..., Awaitable[None]], *args: Any
    ) -> None:
        """Run a writer of the session's events / transcript / record; when JetStream
        refuses its write because another process wrote in between, fence the session."""
        try:
            await run(*args)
        except FencedError as exc:
            self._fence(hosted, str(exc))

    def _fence(self, hosted: Hosted, reason: str) -> None:
        """The session moved to another worker: stop everything this worker does for it
        (no more events, transcript lines or records) and close its CLI."""
        if hosted.fenced:
            return
        hosted.fenced = True
        hosted.finalized.set()
        _log.warning(
            "cluster.session_fenced", worker=self.id, session_id=hosted.session.id, reason=reason
        )
        hosted.scope.cancel()

    def _on_record(self, record: SessionRecord) -> None:
        # The registry copy changed: a record of one of our sessions written by someone else
        # since our last write (declared lost, or running elsewhere) fences it here.
        info = record.info
        hosted = self._hosted.get(info.id)
        if hosted is None or hosted.revision is None or self.registry is None:
            return
        found = self.registry.sessions.get(info.id)
        if found is None or found[1] <= hosted.revision:
            return
        if info.owner != self.id or info.status == "lost":
            self._fence(hosted, f"the registry says the session is {info.status} on {info.owner}")

    @property
    def _records(self) -> RecordWriter:
        assert self._records_writer is not None, "the worker is not running"
        return self._records_writer

    def _mirror(self, hosted: Hosted) -> TranscriptMirror | None:
        config = hosted.session.config
        cli_session_id = config.cli_session_id or (None if config.fork_session else config.resume)
        if cli_session_id is None:
            return None  # no id known up front (_start names every session it starts)
        return TranscriptMirror(self._js, self.config, cli_session_id, cli_env(config))

    async def _run_commands(self, hosted: Hosted) -> None:
        async with hosted.inbox:
            async for msg in hosted.inbox:
                await self._on_command(hosted, msg)
        hosted.drained.set()

    async def _on_command(self, hosted: Hosted, msg: Msg) -> None:
        session = hosted.session
        try:
            command = decode_command(msg.data)
        except WireError as exc:
            _log.warning("cluster.malformed_command", session_id=session.id, error=str(exc))
            await respond(msg, Reply(error=ErrorBody("bad_request", str(exc))))
            return
        try:
            if isinstance(command, Close):
                await self._manager.close(session.id)
                with anyio.move_on_after(10):  # answer once the registry says closed
                    await hosted.finalized.wait()
            elif isinstance(command, Label):
                hosted.label(command.title, command.archived)
            elif not await session_command(session, command, hosted):
                raise UsageError(f"{type(command).__name__} is not a session command")
        except Exception as exc:
            await respond(msg, Reply(error=error_body(exc)))
            return
        hosted.changed.set()
        await respond(msg, Reply(info=hosted.record(self.id).info))
