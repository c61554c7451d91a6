"""Many adapter sessions at once, keyed by id, with a cap, idle reaping and a warm pool.

The warm pool (``warm=N``) keeps N sessions started and initialized ahead of any request,
with the manager's defaults: starting the CLI (Node) and its ``initialize`` takes seconds,
handing out a pooled one takes none. :meth:`SessionManager.create` hands one out when the
config asked for equals the defaults (any other config starts cold), and a replacement starts
in the background a second later (so that it does not take the CPU from the first turn of the
session just handed out). Pooled sessions count against ``max_sessions`` (a cold create that finds
the cap reached stops a pooled one to make room), are invisible to :meth:`get` and
:meth:`sessions` until handed out (nobody owns them), are stopped and replaced when idle past
``idle_timeout`` (so a pooled CLI is never older than that), and are closed with the rest.
A pooled session that fails to start or dies in the pool is replaced after a growing pause
(1 s doubling to a minute), so a CLI that cannot start does not spin.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
import uuid
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from claudecode import UsageError
from claudecode.internal import get_logger

from .config import SessionConfig
from .errors import TooManySessionsError, UnknownSessionError
from .session import AgentSession

__all__ = ("PoolStatus", "SessionManager", "TooManySessionsError", "UnknownSessionError")

_log = get_logger("claudecode.adapter.manager")


@dataclasses.dataclass(frozen=True)
class PoolStatus:
    """The warm pool at one moment: ``size`` wanted, ``warm`` ready to hand out,
    ``starting`` on their way, ``in_use`` handed out and still open."""

    size: int
    warm: int
    starting: int
    in_use: int


#: Seconds a replacement waits after a hand-out: starting a CLI (Node) takes most of a core
#: for a few hundred ms, and the session just handed out is about to run its first turn.
_REFILL_DELAY = 1.0
#: Pause after a pooled session failed to start or died in the pool, doubled per failure.
_POOL_RETRY_FIRST = 1.0
_POOL_RETRY_MAX = 60.0


def _comparable(config: SessionConfig) -> SessionConfig:
    """``config`` with its directory spelled one way (a ``str`` or a ``Path``, relative or
    not, name the same directory)."""
    if config.cwd is None:
        return config
    return dataclasses.replace(config, cwd=os.path.abspath(config.cwd))


def _named(config: SessionConfig) -> SessionConfig:
    """``config`` with the id of the CLI session it starts chosen now (a fork's too: the CLI
    takes ``--session-id`` with ``--resume --fork-session``)."""
    if config.cli_session_id is None and (config.resume is None or config.fork_session):
        return dataclasses.replace(config, cli_session_id=str(uuid.uuid4()))
    return config


class SessionManager:
    """Runs sessions side by side; each lives in the manager's task group.

    Args:
        defaults: the :class:`SessionConfig` that :meth:`create` starts from.
        max_sessions: live sessions allowed at once.
        idle_timeout: seconds a session may stay idle (no turn running or queued, no
            permission request open, no background task of the CLI's running or about to
            report) before it is closed; ``None`` keeps idle sessions forever.
        warm: sessions kept started with ``defaults``, handed out by :meth:`create` (see
            the module docs); 0, the default, starts every session on demand.
        warm_config: makes the config of each pooled session (by default the
            ``defaults``), e.g. with a CLI session id of its own chosen in advance.
        name_sessions: give every new CLI session an id chosen here (a pooled one when it
            starts, one started on demand at once) unless its config names one, so that
            the id is known before the CLI's first turn (an ACP agent answers
            ``session/new`` with it) and a config that names none still takes a pooled one.
    """

    def __init__(
        self,
        defaults: SessionConfig | None = None,
        *,
        max_sessions: int = 32,
        idle_timeout: float | None = 900.0,
        warm: int = 0,
        warm_config: Callable[[], SessionConfig] | None = None,
        name_sessions: bool = False,
    ) -> None:
        if warm < 0:
            raise ValueError(f"warm must be 0 or more, not {warm}")
        self.defaults = defaults or SessionConfig()
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.warm = warm
        self._warm_config = warm_config
        self.name_sessions = name_sessions
        self._sessions: dict[str, AgentSession] = {}
        self._closers: dict[str, anyio.Event] = {}
        self._starting = 0
        self._tg: anyio.abc.TaskGroup | None = None
        #: Pooled sessions ready to hand out, oldest first; not in _sessions.
        self._pool: dict[str, AgentSession] = {}
        self._pool_starting = 0
        #: Sessions handed out from the pool and still open.
        self._from_pool: set[AgentSession] = set()
        self._pool_changed = anyio.Event()
        self._pool_failures = 0
        self._pool_retry_at = 0.0
        self._refill_at = 0.0
        self._last_status: PoolStatus | None = None
        self._closing = False

    async def __aenter__(self) -> Self:
        self._closing = False
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        if self.idle_timeout is not None:
            self._tg.start_soon(self._reaper, name="adapter idle reaper")
        if self.warm:
            self._tg.start_soon(self._fill_pool, name="adapter warm pool")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tg, self._tg = self._tg, None
        if tg is None:
            return
        # No replacement starts from here on; a pooled session still starting is closed as
        # soon as it is up (in _run).
        self._closing = True
        with anyio.CancelScope(shield=True):
            for closer in self._closers.values():
                closer.set()
            with anyio.move_on_after(15):
                for session in [*self._sessions.values(), *self._pool.values()]:
                    await session.wait_closed()
        tg.cancel_scope.cancel()
        await tg.__aexit__(None, None, None)

    def get(self, session_id: str) -> AgentSession:
        """The live session ``session_id``.

        Raises:
            UnknownSessionError: there is none.
        """
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSessionError(f"no session {session_id!r}") from None

    def sessions(self) -> list[AgentSession]:
        """Every live session (the pooled ones not yet handed out are nobody's: not listed)."""
        return list(self._sessions.values())

    def pool_status(self) -> PoolStatus:
        """How the warm pool stands."""
        return PoolStatus(
            size=self.warm,
            warm=len(self._pool),
            starting=self._pool_starting,
            in_use=len(self._from_pool),
        )

    def _live_count(self) -> int:
        return len(self._sessions) + self._starting + len(self._pool) + self._pool_starting

    async def create(
        self, config: SessionConfig | None = None, *, session_id: str | None = None, **changes: Any
    ) -> AgentSession:
        """Start a session (from ``config``, or the defaults with ``changes``) and return it
        once the CLI is connected.

        Raises:
            TooManySessionsError: ``max_sessions`` are live.
            claudecode.ClaudeCodeError: the CLI could not be started.
        """
        if self._tg is None:
            raise UsageError("the SessionManager is not running (use `async with`)")
        if session_id is not None and session_id in self._sessions:
            raise UsageError(f"a session {session_id!r} exists already")
        cfg = dataclasses.replace(config or self.defaults, **changes)
        pooled = self.take_warm(cfg, session_id=session_id)
        if pooled is not None:
            return pooled
        if self.name_sessions:
            cfg = _named(cfg)
        if self._live_count() >= self.max_sessions and not self._evict_pooled():
            raise TooManySessionsError(
                f"{self.max_sessions} sessions are live already; close one first"
            )
        session = AgentSession(cfg, session_id=session_id)
        if session.id in self._sessions:
            raise UsageError(f"a session {session.id!r} exists already")
        self._starting += 1
        try:
            await self._tg.start(self._run, session, name=f"adapter session {session.id}")
        finally:
            self._starting -= 1
        return session

    async def _run(
        self,
        session: AgentSession,
        *,
        pooled: bool = False,
        task_status: anyio.abc.TaskStatus[None],
    ) -> None:
        closer = anyio.Event()
        async with session:
            (self._pool if pooled else self._sessions)[session.id] = session
            self._closers[session.id] = closer
            if self._closing:
                closer.set()
            task_status.started()
            try:
                async with anyio.create_task_group() as tg:

                    async def ended() -> None:
                        await session.wait_closed()
                        tg.cancel_scope.cancel()

                    tg.start_soon(ended)
                    await closer.wait()
                    tg.cancel_scope.cancel()
            finally:
                self._sessions.pop(session.id, None)
                self._closers.pop(session.id, None)
                if self._pool.pop(session.id, None) is not None:
                    self._pool_ended(session)
                self._from_pool.discard(session)
                self._pool_report()

    # -- the warm pool ------------------------------------------------------------------

    def take_warm(
        self, config: SessionConfig, *, session_id: str | None = None
    ) -> AgentSession | None:
        """Hand out a ready pooled session that runs ``config``, under ``session_id``
        (:meth:`create` does this first); ``None`` when none is ready.

        A pooled session runs ``config`` when its config equals it, or, for a ``config``
        that names no ``cli_session_id``, equals it but for the CLI session id the pool
        chose in advance (see ``warm_config``). No await: two creates at once never get the
        same one.
        """
        if not self._pool or self._tg is None:
            return None
        wanted = _comparable(config)
        anyid = config.cli_session_id is None
        for pooled_id, session in self._pool.items():
            if session.status != "connected":
                continue  # it is ending (its CLI exited): _run's end notices
            pooled = _comparable(session.config)
            if pooled != wanted and not (
                anyid and dataclasses.replace(pooled, cli_session_id=None) == wanted
            ):
                continue
            if session_id is not None and session_id in self._sessions:
                raise UsageError(f"a session {session_id!r} exists already")
            del self._pool[pooled_id]
            closer = self._closers.pop(pooled_id)
            session.adopt(session_id)
            self._closers[session.id] = closer
            self._sessions[session.id] = session
            self._from_pool.add(session)
            self._pool_failures = 0  # one that lived to be used: the CLI works
            self._refill_at = time.monotonic() + _REFILL_DELAY
            _log.info("adapter.pool_handed_out", session_id=session.id)
            self._pool_report()
            return session
        return None

    def _evict_pooled(self) -> bool:
        """Stop one pooled session (the newest) to make room for a cold start."""
        if not self._pool:
            return False
        pooled_id, _ = self._pool.popitem()
        self._closers[pooled_id].set()
        _log.info("adapter.pool_evicted", session_id=pooled_id)
        self._pool_report()
        return True

    def _pool_ended(self, session: AgentSession) -> None:
        """A pooled session ended before it was handed out."""
        if not self._closing:
            self._pool_failed(f"ended in the pool: {session.status_reason or session.status}")

    def _pool_failed(self, reason: str) -> None:
        self._pool_failures += 1
        pause = min(_POOL_RETRY_MAX, _POOL_RETRY_FIRST * 2 ** (self._pool_failures - 1))
        self._pool_retry_at = time.monotonic() + pause
        _log.warning("adapter.pool_failed", reason=reason, retry_in=pause)

    def _pool_report(self) -> None:
        """Wake the filler; log the pool's state when it changed."""
        self._pool_changed.set()
        self._pool_log()

    def _pool_log(self) -> None:
        if not self.warm:
            return
        status = self.pool_status()
        if status != self._last_status:
            self._last_status = status
            _log.info("adapter.pool", **dataclasses.asdict(status))

    async def _fill_pool(self) -> None:
        while True:
            self._pool_changed = anyio.Event()
            wait = max(self._pool_retry_at, self._refill_at) - time.monotonic()
            if wait <= 0:
                while (
                    not self._closing
                    and len(self._pool) + self._pool_starting < self.warm
                    and self._live_count() < self.max_sessions
                ):
                    assert self._tg is not None
                    self._pool_starting += 1
                    self._tg.start_soon(self._start_pooled, name="adapter warm session")
                self._pool_log()
                await self._pool_changed.wait()
            else:
                with anyio.move_on_after(wait):
                    await self._pool_changed.wait()

    async def _start_pooled(self) -> None:
        try:
            config = self.defaults if self._warm_config is None else self._warm_config()
            if self.name_sessions:
                config = _named(config)
            session = AgentSession(config)
            assert self._tg is not None
            await self._tg.start(
                functools.partial(self._run, session, pooled=True),
                name=f"adapter session {session.id}",
            )
        except Exception as exc:
            self._pool_failed(f"{type(exc).__name__}: {exc}")
        finally:
            self._pool_starting -= 1
            self._pool_report()

    async def close(self, session_id: str) -> None:
        """Close the session ``session_id`` and wait until it ended."""
        session = self.get(session_id)
        closer = self._closers.get(session_id)
        if closer is not None:
            closer.set()
        await session.wait_closed()

    async def _reaper(self) -> None:
        assert self.idle_timeout is not None
        period = max(0.05, min(self.idle_timeout / 4, 5.0))
        while True:
            await anyio.sleep(period)
            now = time.monotonic()
            for session in list(self._sessions.values()):
                idle = (
                    session.status in ("idle", "connected")
                    and not session.pending_permissions
                    and not session.background_work
                )
                if idle and now - session.last_activity > self.idle_timeout:
                    _log.info("adapter.idle_reaped", session_id=session.id)
                    closer = self._closers.get(session.id)
                    if closer is not None:
                        closer.set()
            # A pooled CLI idle that long is replaced by a fresh one.
            for pooled_id, session in list(self._pool.items()):
                if now - session.last_activity > self.idle_timeout:
                    del self._pool[pooled_id]
                    _log.info("adapter.pool_reaped", session_id=pooled_id)
                    self._closers[pooled_id].set()
                    self._pool_report()
