"""The terminal session manager: one interface for every agent.

``async with TerminalManager() as terminals:`` owns a task group in which every session's
tasks run; leaving the block stops every session (SIGTERM / SIGHUP, SIGKILL after the grace)
and reaps every child.
"""

from __future__ import annotations

import builtins
import math
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType

import anyio
import msgspec
from anyio.abc import TaskGroup

from claudecode.internal import get_logger

from ._agents import AGENTS, Agent, AgentStatus
from ._env import build_env
from ._errors import (
    AgentUnavailableError,
    InvalidTerminalSizeError,
    TerminalError,
    TerminalExistsError,
    TerminalRunningError,
    TooManyTerminalsError,
    UnknownAgentError,
    UnknownTerminalError,
)
from ._options import SessionOptions
from ._session import TerminalSession
from ._types import TerminalInfo
from ._viewer import TerminalViewer

__all__ = ("TerminalManager", "TerminalStartError")

_log = get_logger("claudecode.terminals")

_MAX_SIZE = 1000


class TerminalStartError(TerminalError):
    """The program could not be started (bad working directory, exec failure, ...)."""

    http_status = 400

    def __init__(self, agent: str, reason: str) -> None:
        super().__init__(f"could not start {agent!r}: {reason}")
        self.agent = agent
        self.reason = reason


def _check_size(cols: int, rows: int) -> None:
    if not (
        isinstance(cols, int)
        and isinstance(rows, int)
        and 0 < cols <= _MAX_SIZE
        and 0 < rows <= _MAX_SIZE
    ):
        raise InvalidTerminalSizeError(cols, rows)


def _workdir(agent: str, cwd: str | None) -> str:
    workdir = os.path.abspath(os.path.expanduser(cwd)) if cwd else os.getcwd()
    if not os.path.isdir(workdir):
        raise TerminalStartError(agent, f"{workdir} is not a directory")
    return workdir


class TerminalManager:
    """Starts, drives and stops terminal sessions (any agent CLI, or a shell, on a pty).

    Args:
        agents: the agents that may be started (default :data:`~terminals.AGENTS`).
        search_path: a ``PATH``-style string to find agent programs on (default: ``PATH``
            of ``env``).
        env: the base environment of every program (default: this process's).
        max_sessions: how many sessions may run at once.
        stop_grace: seconds between the stop signal and SIGKILL.
        spawn_timeout: a program that prints nothing and does not exit within this many
            seconds is stopped by the watchdog (``None``: no watchdog).
        screen: keep a server-side screen per session (new viewers get the current screen;
            busy / waiting / idle come from it). Without it a new viewer gets the latest raw
            output and the state only reflects activity.
        scrollback: lines of history each screen keeps.
        accept_trust: answer an agent's folder-trust prompt with "yes" once (Claude Code's
            "Quick safety check"), unless a ``start`` call says otherwise.
        viewer_max_bytes: unread output after which a viewer is dropped.
        keep_ended: how many ended sessions ``list`` / ``get`` still report.
    """

    def __init__(
        self,
        *,
        agents: Mapping[str, Agent] | None = None,
        search_path: str | None = None,
        env: Mapping[str, str] | None = None,
        max_sessions: int = 32,
        stop_grace: float = 5.0,
        spawn_timeout: float | None = 30.0,
        screen: bool = True,
        scrollback: int = 1000,
        accept_trust: bool = True,
        viewer_max_bytes: int = 4 << 20,
        keep_ended: int = 64,
    ) -> None:
        self._agents = dict(AGENTS if agents is None else agents)
        self._env = dict(os.environ if env is None else env)
        self._search_path = search_path
        self._max_sessions = max_sessions
        self._accept_trust = accept_trust
        self._keep_ended = keep_ended
        self._options = SessionOptions(
            screen=screen,
            scrollback=scrollback,
            spawn_timeout=spawn_timeout,
            stop_grace=stop_grace,
            viewer_max_bytes=viewer_max_bytes,
        )
        self._sessions: dict[str, TerminalSession] = {}
        self._listeners: list[Callable[[TerminalInfo], None]] = []
        self._tg: TaskGroup | None = None
        self._closing = False

    async def __aenter__(self) -> TerminalManager:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._tg is not None
        try:
            with anyio.CancelScope(shield=True):
                await self.close_all()
        finally:
            tg, self._tg = self._tg, None
            tg.cancel_scope.cancel()
            result = await tg.__aexit__(exc_type, exc, tb)
        return result

    # -- agents --------------------------------------------------------------------------------

    def agents(self) -> list[AgentStatus]:
        """Every declared agent, whether it can start here, and what to install if not."""
        return [self.agent_status(name) for name in self._agents]

    def agent_status(self, agent: str) -> AgentStatus:
        """Whether ``agent`` can start (raises :class:`UnknownAgentError`)."""
        declared = self._agent(agent)
        return AgentStatus(
            name=declared.name,
            available=(path := self._resolve(declared)) is not None,
            path=path,
            install_hint=declared.install_hint,
        )

    def available(self, agent: str) -> bool:
        """Whether ``agent`` can start here."""
        return self.agent_status(agent).available

    def _agent(self, agent: str) -> Agent:
        declared = self._agents.get(agent)
        if declared is None:
            raise UnknownAgentError(agent, tuple(self._agents))
        return declared

    def _resolve(self, agent: Agent) -> str | None:
        return agent.resolve(self._search_path, environ=self._env)

    # -- sessions ------------------------------------------------------------------------------

    async def start(
        self,
        session_id: str,
        agent: str,
        cwd: str | None = None,
        cols: int = 80,
        rows: int = 24,
        skip_permissions: bool = False,
        *,
        env: Mapping[str, str] | None = None,
        accept_trust: bool | None = None,
    ) -> TerminalInfo:
        """Start ``agent`` in a new terminal of ``cols`` x ``rows`` in ``cwd``.

        Raises :class:`TerminalExistsError` (a live session has that id; an ended one is
        replaced), :class:`UnknownAgentError`, :class:`AgentUnavailableError` (names what to
        install), :class:`TooManyTerminalsError`, :class:`InvalidTerminalSizeError`,
        :class:`TerminalStartError`.
        """
        if self._tg is None or self._closing:
            raise TerminalError("the terminal manager is not running (use `async with`)")
        existing = self._sessions.get(session_id)
        if existing is not None and existing.active:
            raise TerminalExistsError(session_id)
        _check_size(cols, rows)
        declared = self._agent(agent)
        if sum(1 for s in self._sessions.values() if s.active) >= self._max_sessions:
            raise TooManyTerminalsError(self._max_sessions)
        executable = self._resolve(declared)
        if executable is None:
            raise AgentUnavailableError(declared.name, declared.install_hint)
        workdir = _workdir(declared.name, cwd)
        try:
            session = TerminalSession(
                session_id=session_id,
                agent=declared,
                argv=declared.argv(executable, skip_permissions=skip_permissions),
                cwd=workdir,
                env=build_env(self._env, declared, dict(env) if env else None),
                cols=cols,
                rows=rows,
                accept_trust=self._accept_trust if accept_trust is None else accept_trust,
                options=self._options,
                on_change=self._changed,
            )
        except OSError as exc:
            raise TerminalStartError(declared.name, exc.strerror or str(exc)) from exc
        self._sessions.pop(session_id, None)
        self._sessions[session_id] = session
        self._forget_old_ended()
        self._tg.start_soon(self._run_session, session, name=f"terminal {session_id}")
        _log.info(
            "terminal.started",
            session_id=session_id,
            agent=declared.name,
            pid=session.pid,
            cwd=workdir,
        )
        self._changed(session)
        return session.info()

    async def _run_session(self, session: TerminalSession) -> None:
        # The manager's task group runs every session: an exception escaping one would
        # cancel them all. A session ends its own failures (TerminalSession.run); this is the
        # last guard, so that whatever escapes ends that session only.
        try:
            await session.run()
        except Exception:
            _log.exception("terminal.session_task_failed", session_id=session.id)

    def _session(self, session_id: str) -> TerminalSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise UnknownTerminalError(session_id)
        return session

    async def send_input(self, session_id: str, data: bytes | str) -> None:
        """Type ``data`` (text is UTF-8 encoded). Raises :class:`UnknownTerminalError` or
        :class:`TerminalClosedError`."""
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        await self._session(session_id).send_input(payload)

    async def resize(self, session_id: str, cols: int, rows: int) -> bool:
        """Resize the terminal. Raises :class:`UnknownTerminalError` /
        :class:`InvalidTerminalSizeError`; a failure of the resize itself (the session
        ended, the ioctl failed) is logged and answered ``False``."""
        session = self._session(session_id)
        _check_size(cols, rows)
        return session.resize(cols, rows)

    async def signal(self, session_id: str, sig: int) -> bool:
        """Send ``sig`` to the terminal's foreground job; ``False`` if nothing got it."""
        return self._session(session_id).signal_foreground(sig)

    async def stop(self, session_id: str) -> TerminalInfo:
        """Stop the session (stop signal to its process group, SIGKILL after the grace) and
        return its final snapshot once the child is reaped. Stopping an ended session
        returns its snapshot."""
        return await self._session(session_id).stop()

    def remove(self, session_id: str) -> TerminalInfo:
        """Take an ended session off the list; its last snapshot (``removed``), which the
        listeners get too. Raises :class:`UnknownTerminalError`, or
        :class:`TerminalRunningError` while it runs (stop it first)."""
        session = self._session(session_id)
        if session.active:
            raise TerminalRunningError(session_id)
        del self._sessions[session_id]
        info = msgspec.structs.replace(session.info(), removed=True)
        for listener in list(self._listeners):
            try:
                listener(info)
            except Exception:
                _log.exception("terminal.listener_failed", session_id=session_id)
        return info

    async def wait(self, session_id: str) -> TerminalInfo:
        """Wait until the session ends by itself; its final snapshot."""
        return await self._session(session_id).wait()

    def get(self, session_id: str) -> TerminalInfo:
        """The session's snapshot (raises :class:`UnknownTerminalError`)."""
        return self._session(session_id).info()

    def list(self) -> builtins.list[TerminalInfo]:
        """Every session: the running ones and the most recently ended ones."""
        return [session.info() for session in self._sessions.values()]

    def screen_text(self, session_id: str) -> str:
        """The session's rendered screen as text."""
        return self._session(session_id).screen_text()

    def screen_lines(self, session_id: str) -> builtins.list[str]:
        """The session's rendered screen, one string per row."""
        return self._session(session_id).screen_lines()

    def scrollback_lines(self, session_id: str) -> builtins.list[str]:
        """The session's scrollback, oldest first."""
        return self._session(session_id).scrollback_lines()

    def attach(
        self, session_id: str, *, scrollback: int | None = None, max_bytes: int | None = None
    ) -> AbstractAsyncContextManager[TerminalViewer]:
        """``async with terminals.attach(id) as viewer:`` — the current screen (with up to
        ``scrollback`` lines of history; ``None``: all the screen keeps), then live output
        and control events. ``max_bytes`` overrides the manager's ``viewer_max_bytes``. An
        ended session's viewer gets its last screen and its exit."""
        return self._attach(self._session(session_id), scrollback, max_bytes)

    @asynccontextmanager
    async def _attach(
        self, session: TerminalSession, scrollback: int | None, max_bytes: int | None
    ) -> AsyncIterator[TerminalViewer]:
        viewer = session.attach(scrollback=scrollback, max_bytes=max_bytes)
        try:
            yield viewer
        finally:
            session.detach(viewer)

    async def close_all(self) -> None:
        """Stop every running session (concurrently) and wait until all are reaped."""
        self._closing = True
        try:
            async with anyio.create_task_group() as tg:
                for session in list(self._sessions.values()):
                    if session.active:
                        tg.start_soon(session.stop)
        finally:
            self._closing = False

    # -- changes -------------------------------------------------------------------------------

    def add_listener(self, listener: Callable[[TerminalInfo], None]) -> Callable[[], None]:
        """Call ``listener`` with a session's snapshot whenever it changes (started, state,
        size, viewers, ended). Returns a function that removes the listener. Listeners run
        on the event loop and must not block."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _changed(self, session: TerminalSession) -> None:
        if not self._listeners:
            return
        info = session.info()
        for listener in list(self._listeners):
            try:
                listener(info)
            except Exception:
                _log.exception("terminal.listener_failed", session_id=session.id)

    def _forget_old_ended(self) -> None:
        ended = [s for s in self._sessions.values() if not s.active]
        excess = len(ended) - self._keep_ended
        if excess > 0:
            ended.sort(key=lambda s: s.ended_at or math.inf)
            for session in ended[:excess]:
                del self._sessions[session.id]
