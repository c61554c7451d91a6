"""The gateway side: a :class:`~adapter.SessionBackend` whose sessions run on workers.

:class:`ClusterBackend` keeps no session state of its own — the registry is a KV bucket,
events come from the session's JetStream stream, commands go to the owning worker as NATS
requests — so any number of gateways serve the same sessions and a load balancer in front
of them needs no sticky routing. It also sweeps the registry for sessions of dead workers,
like the workers do (:mod:`adapter.cluster.recovery`).
"""

from __future__ import annotations

import contextlib
import math
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

import anyio
import anyio.abc

from claudecode import UsageError
from claudecode.internal import get_logger

from ..backend import (
    BackendUnavailableError,
    CliSessionInUseError,
    EventStream,
    SessionInfo,
    SessionSpec,
    clean_title,
)
from ..images import PromptImages, as_images
from ..manager import UnknownSessionError
from ..policies import PermissionDecision
from ._claims import ResumeClaims
from ._ends import EndClaims
from ._feeds import SessionFeed, open_stream
from ._labels import relabel_closed, remove_closed
from ._watchers import Watchers
from .config import ClusterConfig, NatsSettings, valid_token
from .eventlog import ClusterEventStream, ensure_event_stream
from .placement import place_session
from .recovery import sweep_lost_sessions
from .registry import Registry
from .transcripts import TranscriptCache, ensure_transcript_stream
from .wire import (
    AnswerPermission,
    AnswerQuestion,
    Close,
    Command,
    CreateSession,
    DeclineQuestion,
    Interrupt,
    Label,
    Prompt,
    Reply,
    SetEffort,
    SetModel,
    SetPermissionMode,
    WireError,
    decode_reply,
    encode,
    raise_error,
)

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.client import Client as NATS

__all__ = ("ClusterBackend", "ClusterUnavailableError")

_log = get_logger("claudecode.adapter.cluster.backend")

_T = TypeVar("_T")

#: Seconds an answer of NATS counts as recent for readiness: within them a probe sends
#: nothing (any message the connection received says NATS answers, and so does the outcome
#: of the last probe, either way).
READY_FRESH = 2.0

#: Seconds readiness waits for NATS to answer a probe (when nothing recent says it answers).
READY_BOUND = 2.0


class ClusterUnavailableError(BackendUnavailableError):
    """NATS is out of reach, or the owning worker did not answer in time."""


def _nats_failed(what: str, exc: BaseException) -> ClusterUnavailableError:
    """The error a call that nats-py failed raises: ``what`` failed, and how; retry."""
    return ClusterUnavailableError(f"{what} ({exc!r}); retry")


class _ClaimRefusedError(Exception):
    """Another session holds the CLI session a create claims (carries the error to raise)."""

    def __init__(self, error: CliSessionInUseError) -> None:
        super().__init__(str(error))
        self.error = error


#: What a subscription ended by a NATS outage raises, and what calls raise meanwhile.
_NATS_LOST = (
    "the gateway lost its connection to NATS; retry when it is back (subscribe again with "
    "after_seq: nothing is lost)"
)


class ClusterBackend:
    """Sessions on the cluster's workers, reached through NATS (a drop-in
    :class:`~adapter.SessionBackend`).

    Args:
        nats: how to connect (:class:`NatsSettings`), or a connected nats-py client (not
            closed by the backend).
        config: the deployment's names and limits (the same as the workers').
        resume_lost: resume sessions of dead workers on other workers.
        subscriber_buffer: events a subscriber may have waiting before it is dropped.
        history: keep a local copy of the transcripts the workers mirror, so front ends
            list, load and resume the cluster's stored sessions (:attr:`history_dir`).
    """

    def __init__(
        self,
        nats: NatsSettings | NATS,
        config: ClusterConfig | None = None,
        *,
        resume_lost: bool = True,
        subscriber_buffer: int = 10_000,
        history: bool = True,
    ) -> None:
        self.config = config or ClusterConfig()
        # Known from the start (front ends read it when their routes are made), created
        # private when the backend starts, removed when it stops.
        self._history_dir = (
            Path(tempfile.gettempdir()) / f"bridge-history-{uuid.uuid4().hex}" if history else None
        )
        self._history: TranscriptCache | None = None
        self._settings = nats if isinstance(nats, NatsSettings) else None
        self._nc: Any = None if isinstance(nats, NatsSettings) else nats
        self.resume_lost = resume_lost
        self.subscriber_buffer = subscriber_buffer
        self._watchers = Watchers()
        self._stack: contextlib.AsyncExitStack | None = None
        self.registry: Registry | None = None
        self._claims: ResumeClaims | None = None
        self._ends: EndClaims | None = None
        self._connected = False
        #: Open subscriptions, ended with ClusterUnavailableError when NATS goes away.
        self._streams: set[ClusterEventStream] = set()
        #: One consumer per session shared by its subscribers here (adapter.cluster._feeds).
        self._feeds: dict[str, SessionFeed] = {}
        # Readiness: when NATS last answered (or did not answer) a probe, the connection's
        # received-message count and when it was read; one probe at a time.
        self._answered_at = -math.inf
        self._unanswered_at = -math.inf
        self._received: tuple[int, float] = (-1, -math.inf)
        self._probe_lock = anyio.Lock()

    # -- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            if self._nc is None:
                assert self._settings is not None
                self._nc = await self._settings.connect(
                    name=self._settings.name or "bridge-gateway",
                    disconnected_cb=self._disconnected,
                    reconnected_cb=self._reconnected,
                )
                stack.push_async_callback(self._nc.close)
            self._connected = True
            self._js = self._nc.jetstream(timeout=self.config.request_timeout)
            await ensure_event_stream(self._js, self.config)
            if self._history_dir is not None:
                await ensure_transcript_stream(self._js, self.config)
                self._history_dir.mkdir(mode=0o700)
                stack.callback(shutil.rmtree, self._history_dir, ignore_errors=True)
                self._history = TranscriptCache(self._js, self.config, self._history_dir)
                await self._history.start()
                stack.push_async_callback(self._history.close)
            self.registry = Registry(self._js, self.config, on_session=self._watchers.publish)
            await self.registry.open()
            self._claims = ResumeClaims(self._js, self.config, self.registry)
            await self._claims.open()
            self._ends = EndClaims(self._js, self.config)
            tg = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tg.cancel_scope.cancel)
            await tg.start(self.registry.run)
            tg.start_soon(self._sweeper, self.registry)
            tg.start_soon(self._claim_sweeper)
        except BaseException:
            await stack.__aexit__(None, None, None)
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            self._connected = False
            if self.registry is not None:
                with anyio.CancelScope(shield=True):
                    await self.registry.close()
            await stack.__aexit__(exc_type, exc, tb)

    async def _disconnected(self) -> None:
        running = self._stack is not None
        if running and self._connected:
            _log.warning("cluster.nats_disconnected", subscriptions=len(self._streams))
        self._connected = False
        if running:
            # Tell every subscriber now (their front ends tell their clients) rather than
            # leave them waiting on a stream that may stay silent for long; they subscribe
            # again with after_seq once NATS is back, and the stream has kept everything.
            for stream in list(self._streams):
                stream.abort(ClusterUnavailableError(_NATS_LOST))
            # Those subscriptions start afresh: no new subscriber joins a consumer that
            # lived through the outage (it goes once its aborted members have left).
            for feed in list(self._feeds.values()):
                feed.retire()

    async def _reconnected(self) -> None:
        if self.registry is not None:
            self.registry.reconnected()
        self._connected = True
        _log.info("cluster.nats_reconnected")

    @property
    def history_dir(self) -> Path:
        """Where the copy of the cluster's stored sessions is (``projects/<project>/<CLI
        session id>.jsonl``, like the CLI's own directory; see
        :class:`~adapter.HistoryBackend`).

        Raises:
            AttributeError: made with ``history=False`` (so it is no
                :class:`~adapter.HistoryBackend`).
        """
        if self._history_dir is None:
            raise AttributeError("this ClusterBackend keeps no history (history=False)")
        return self._history_dir

    @property
    def ready(self) -> bool:
        """Connected to NATS (for a readiness probe)."""
        return self._stack is not None and self._connected and bool(self._nc.is_connected)

    async def readiness(self) -> dict[str, Any]:
        """What ``/readyz`` reports for a gateway: NATS connected and answering (within
        :data:`READY_FRESH` + :data:`READY_BOUND` seconds: a NATS connected but stopped is
        not ready), workers and sessions."""
        registry = self.registry
        workers = list(registry.workers.values()) if registry is not None else []
        sessions = [r.info for r, _ in registry.sessions.values()] if registry else []
        connected = self.ready
        answering = connected and await self._answering()
        return {
            "ready": answering,
            "nats": "connected" if answering else "not answering" if connected else "disconnected",
            "workers": len(workers),
            "sessions": sum(1 for s in sessions if s.state not in ("closed", "errored")),
            "max_sessions": sum(w.max_sessions for w in workers),
        }

    async def _answering(self) -> bool:
        """Whether NATS answers: a message received lately, or the outcome of a probe less
        than :data:`READY_FRESH` seconds old, or of one sent now (:data:`READY_BOUND`)."""
        now = time.monotonic()
        count, read_at = self._received
        received = int(self._nc.stats["in_msgs"])
        self._received = (received, now)
        if received != count and now - read_at <= READY_FRESH:
            return True  # something arrived since a read of the count that is recent
        async with self._probe_lock:  # concurrent callers share one probe's outcome
            now = time.monotonic()
            if now - self._answered_at < READY_FRESH:
                return True
            if now - self._unanswered_at < READY_FRESH:
                return False
            from nats.errors import NoRespondersError

            answered = False
            # A request nobody serves: the server itself answers "no responders" at once.
            # (Not nats-py's flush: a PONG that arrives after its timeout breaks the
            # client's read loop, which sets the result of the cancelled future.)
            try:
                await self._nc.request(
                    f"{self.config.prefix}.ready-probe", b"", timeout=READY_BOUND
                )
                answered = True  # somebody serves it after all: NATS answered too
            except NoRespondersError:
                answered = True
            except Exception as exc:  # no answer in time, or the connection went meanwhile
                _log.debug("cluster.ready_probe_failed", error=repr(exc))
            if answered:
                self._answered_at = time.monotonic()
            else:
                self._unanswered_at = time.monotonic()
                _log.info("cluster.nats_not_answering", bound=READY_BOUND)
            return answered

    def _require(self) -> Registry:
        if self.registry is None or self._stack is None:
            raise UsageError("the ClusterBackend is not running (use `async with`)")
        return self.registry

    def _require_nats(self) -> Registry:
        registry = self._require()
        if not self.ready:
            raise ClusterUnavailableError(_NATS_LOST)
        return registry

    async def _sweeper(self, registry: Registry) -> None:
        # The registry is handed over, not looked up when the task first runs: a backend
        # left without a checkpoint after entering runs it first while exiting.
        claims = self._claims
        assert claims is not None
        while True:
            await anyio.sleep(self.config.heartbeat_interval)
            await sweep_lost_sessions(
                self._nc, registry, self.config, resume=self.resume_lost, claims=claims
            )

    async def _claim_sweeper(self) -> None:
        # Apart from the lost-session sweep, which must never wait on this one.
        claims = self._claims
        assert claims is not None
        interval = self.config.claim_sweep_interval
        while True:
            await anyio.sleep(interval)
            with anyio.move_on_after(max(interval, self.config.request_timeout)):
                try:
                    await claims.sweep()
                except Exception as exc:
                    _log.warning("cluster.claim_sweep_failed", error=repr(exc))

    # -- SessionBackend ------------------------------------------------------------------

    async def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionInfo:
        """Start a session on the least loaded worker that carries ``spec.labels``.

        Raises:
            TooManySessionsError: every worker is full (or none carries the labels).
            ClusterUnavailableError: NATS is out of reach.
            CliSessionInUseError: ``spec`` resumes (without ``fork``) a CLI session that an
                open session of the cluster holds, or that another create (through any
                gateway) is resuming right now (:mod:`adapter.cluster._claims`).
        """
        registry = self._require_nats()
        claims = self._claims
        assert claims is not None
        if session_id is not None:
            if not valid_token(session_id):
                raise UsageError(f"session id {session_id!r}: use letters, digits, '_' or '-'")
            if await self._unless_nats_fails(registry.get(session_id)) is not None:
                raise UsageError(f"a session {session_id!r} exists already")
        session_id = session_id or uuid.uuid4().hex
        command = CreateSession(spec=spec, session_id=session_id)
        # Claimed before the session is placed: of two creates through any gateways, one
        # wins. (A fresh session's or a fork's CLI session is claimed by its worker.)
        claim = None if spec.fork else spec.resume
        try:
            if claim is not None:
                await self._claim(claims, claim, session_id)
            reply = await place_session(self._nc, registry, self.config, command)
            if reply.error is not None:
                if reply.error.type == "unavailable":
                    raise ClusterUnavailableError(f"{reply.error.message}; retry")
                raise_error(reply.error)
            if reply.info is None:
                raise ClusterUnavailableError("the worker's answer had no session")
        except _ClaimRefusedError as refused:
            raise refused.error from None  # another session's claim: nothing of ours
        except BaseException:
            if claim is not None:
                # Only while pending: a confirmed claim is a worker's session that started
                # (its answer was lost), and that worker releases it when it ends. Also when
                # the claim failed: its write may have landed all the same.
                with anyio.CancelScope(shield=True):
                    await claims.release(claim, session_id, pending_only=True)
            raise
        return reply.info

    @classmethod
    async def _claim(cls, claims: ResumeClaims, cli_session_id: str, session_id: str) -> None:
        try:
            # NATS did not answer, or refused the write: unavailable.
            await cls._unless_nats_fails(
                claims.claim(cli_session_id, session_id),
                f"the claim of CLI session {cli_session_id} failed",
            )
        except CliSessionInUseError as exc:
            raise _ClaimRefusedError(exc) from None

    @staticmethod
    async def _unless_nats_fails(call: Awaitable[_T], what: str = "NATS did not answer") -> _T:
        """``await call``, raising :class:`ClusterUnavailableError` (``what`` says what
        failed) for nats-py's errors."""
        from nats.errors import Error as NatsError

        try:
            return await call
        except (NatsError, TimeoutError) as exc:
            raise _nats_failed(what, exc) from None

    async def info(self, session_id: str) -> SessionInfo:
        """The session's record in the registry.

        Raises:
            UnknownSessionError: there is no such session.
            ClusterUnavailableError: NATS is out of reach or does not answer.
        """
        found = await self._unless_nats_fails(self._require_nats().get(session_id))
        if found is None or found[0].info.removed:
            raise UnknownSessionError(f"no session {session_id!r}")
        return found[0].info

    async def list(self) -> list[SessionInfo]:
        """Every session in the registry (closed ones for ``closed_retention`` seconds)."""
        registry = self._require()
        await registry.wait_loaded()
        infos = [r.info for r, _ in registry.sessions.values() if not r.info.removed]
        infos.sort(key=lambda info: (info.created_at, info.id))
        return infos

    @asynccontextmanager
    async def subscribe(
        self, session_id: str, *, after_seq: int | None = None
    ) -> AsyncIterator[EventStream]:
        """The session's events from its stream (see :class:`~adapter.SessionBackend`).

        When the gateway loses NATS the stream ends, after the events it holds, with
        :class:`ClusterUnavailableError`; subscribe again with ``after_seq`` once
        :attr:`ready`.
        """
        found = await self._unless_nats_fails(self._require_nats().get(session_id))
        if found is None or found[0].info.removed:
            raise UnknownSessionError(f"no session {session_id!r}")
        stream = ClusterEventStream(session_id, after_seq, max_pending=self.subscriber_buffer)
        self._streams.add(stream)
        try:
            await self._unless_nats_fails(open_stream(self._feeds, stream, self._js, self.config))
            if not self.ready:  # lost before the stream was in _streams
                stream.abort(ClusterUnavailableError(_NATS_LOST))
            yield stream
        finally:
            self._streams.discard(stream)
            with anyio.CancelScope(shield=True):
                await stream.close()

    async def _command(
        self, session_id: str, command: Command, timeout: float | None = None
    ) -> Reply:
        from nats.errors import Error as NatsError
        from nats.errors import NoRespondersError, TimeoutError

        registry = self._require_nats()
        if not valid_token(session_id):
            raise UnknownSessionError(f"no session {session_id!r}")
        timeout = timeout or self.config.request_timeout
        try:
            msg = await self._nc.request(
                self.config.command_subject(session_id), encode(command), timeout=timeout
            )
        except NoRespondersError:
            found = await self._unless_nats_fails(registry.get(session_id))
            if found is None:
                raise UnknownSessionError(f"no session {session_id!r}") from None
            info = found[0].info
            if info.status == "lost":
                raise UsageError(
                    f"session {session_id} is being moved to another worker; retry shortly"
                ) from None
            raise UsageError(f"session {session_id} is {info.state}") from None
        except TimeoutError:
            found = await self._unless_nats_fails(registry.get(session_id))
            if found is not None and found[0].info.state == "closed":
                raise UsageError(f"session {session_id} is closed") from None
            raise ClusterUnavailableError(
                f"no answer from session {session_id}'s worker within {timeout} s"
            ) from None
        except NatsError as exc:  # the connection closed or its buffer is full meanwhile
            raise _nats_failed("NATS failed", exc) from None
        try:
            reply = decode_reply(msg.data)
        except WireError as exc:
            _log.warning("cluster.malformed_reply", session_id=session_id, error=str(exc))
            raise ClusterUnavailableError("the worker sent a malformed reply") from None
        if reply.error is not None:
            raise_error(reply.error)
        return reply

    async def prompt(self, session_id: str, text: str, *, images: PromptImages = ()) -> None:
        """Send a prompt to the session's worker."""
        await self._command(session_id, Prompt(text=text, images=as_images(images)))

    async def answer_permission(
        self, session_id: str, pending_id: str, decision: PermissionDecision
    ) -> None:
        """Answer an open permission request on the session's worker."""
        await self._command(
            session_id,
            AnswerPermission(
                pending_id=pending_id,
                behavior=decision.behavior,
                message=decision.message,
                interrupt=decision.interrupt,
                updated_input=decision.updated_input,
            ),
        )

    async def answer_question(
        self, session_id: str, pending_id: str, answers: Mapping[str, Sequence[str]]
    ) -> None:
        """Answer an open question on the session's worker."""
        body = {text: list(picks) for text, picks in answers.items()}
        await self._command(session_id, AnswerQuestion(pending_id=pending_id, answers=body))

    async def decline_question(
        self, session_id: str, pending_id: str, message: str | None = None
    ) -> None:
        """Decline an open question on the session's worker."""
        await self._command(session_id, DeclineQuestion(pending_id=pending_id, message=message))

    async def interrupt(self, session_id: str) -> None:
        """Interrupt the running turn."""
        await self._command(session_id, Interrupt())

    async def set_model(self, session_id: str, model: str | None) -> None:
        """Use ``model`` from the next turn on."""
        await self._command(session_id, SetModel(model=model))

    async def set_effort(self, session_id: str, effort: str | None) -> None:
        """Use ``effort`` from the next model request on (``None``: the model's default)."""
        await self._command(session_id, SetEffort(effort=effort))

    async def set_permission_mode(self, session_id: str, mode: str) -> None:
        """Switch the CLI's permission mode."""
        await self._command(session_id, SetPermissionMode(mode=mode))

    async def close(self, session_id: str) -> None:
        """End the session and wait until it ended; its CLI session may be resumed again."""
        await self._command(session_id, Close(), timeout=self.config.create_timeout)
        found = await self._unless_nats_fails(self._require().get(session_id))
        if found is not None and found[0].info.cli_session_id and self._claims is not None:
            await self._claims.release(found[0].info.cli_session_id, session_id)

    async def label(
        self, session_id: str, *, title: str | None = None, archived: bool | None = None
    ) -> SessionInfo:
        """Rename and/or archive a session (see :class:`~adapter.backend.LabelBackend`): an
        open one on its worker, a closed one in its record (:mod:`._labels`)."""
        title = clean_title(title) if title is not None else None
        if (await self.info(session_id)).state != "closed":
            try:
                reply = await self._command(session_id, Label(title=title, archived=archived))
                assert reply.info is not None
                return reply.info
            except UsageError:
                if (await self.info(session_id)).state != "closed":
                    raise  # not closed meanwhile: a refusal to report as it is
        retention = self.config.closed_retention
        relabel = relabel_closed(
            self._require_nats(), session_id, title=title, archived=archived, retention=retention
        )
        return await self._unless_nats_fails(relabel)

    async def forget(self, session_id: str) -> None:
        """Delete a closed session (see :class:`~adapter.backend.LabelBackend`)."""
        if (await self.info(session_id)).state != "closed":
            raise UsageError(f"session {session_id!r} is open: close it first")
        await self._unless_nats_fails(remove_closed(self._require_nats(), session_id))

    async def claim_end(self, session_id: str) -> bool:
        """Whether this gateway records the session's end (:class:`~adapter.SharedBackend`;
        :mod:`adapter.cluster._ends`)."""
        self._require()
        assert self._ends is not None
        return await self._ends.claim(session_id)

    def watch(self) -> contextlib.AbstractAsyncContextManager[AsyncIterator[SessionInfo]]:
        """Registry changes as :class:`~adapter.SessionInfo` snapshots (see
        :class:`~adapter.SessionBackend`)."""
        self._require()
        return self._watchers.watch()
