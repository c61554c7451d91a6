"""Many adapter sessions at once, keyed by id, with a cap and idle reaping."""

from __future__ import annotations

import dataclasses
import time
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from claudecode import UsageError
from claudecode.internal import get_logger

from .config import SessionConfig
from .errors import TooManySessionsError, UnknownSessionError
from .session import AgentSession

__all__ = ("SessionManager", "TooManySessionsError", "UnknownSessionError")

_log = get_logger("claudecode.adapter.manager")


class SessionManager:
    """Runs sessions side by side; each lives in the manager's task group.

    Args:
        defaults: the :class:`SessionConfig` that :meth:`create` starts from.
        max_sessions: live sessions allowed at once.
        idle_timeout: seconds a session may stay idle (no turn running or queued, no
            permission request open, no background task of the CLI's running or about to
            report) before it is closed; ``None`` keeps idle sessions forever.
    """

    def __init__(
        self,
        defaults: SessionConfig | None = None,
        *,
        max_sessions: int = 32,
        idle_timeout: float | None = 900.0,
    ) -> None:
        self.defaults = defaults or SessionConfig()
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, AgentSession] = {}
        self._closers: dict[str, anyio.Event] = {}
        self._starting = 0
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        if self.idle_timeout is not None:
            self._tg.start_soon(self._reaper, name="adapter idle reaper")
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
        with anyio.CancelScope(shield=True):
            for closer in self._closers.values():
                closer.set()
            with anyio.move_on_after(15):
                for session in list(self._sessions.values()):
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
        """Every live session."""
        return list(self._sessions.values())

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
        if len(self._sessions) + self._starting >= self.max_sessions:
            raise TooManySessionsError(
                f"{self.max_sessions} sessions are live already; close one first"
            )
        cfg = dataclasses.replace(config or self.defaults, **changes)
        session = AgentSession(cfg, session_id=session_id)
        if session.id in self._sessions:
            raise UsageError(f"a session {session.id!r} exists already")
        self._starting += 1
        try:
            await self._tg.start(self._run, session, name=f"adapter session {session.id}")
        finally:
            self._starting -= 1
        return session

    async def _run(self, session: AgentSession, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        closer = anyio.Event()
        async with session:
            self._sessions[session.id] = session
            self._closers[session.id] = closer
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
