"""The in-process session backend: :class:`LocalBackend` over a :class:`SessionManager`.

``async with LocalBackend(defaults) as backend:`` runs sessions in this process and serves
them through the data-only :class:`~adapter.backend.SessionBackend` interface the front ends
use. Besides delegating, it keeps what the interface promises and an ``AgentSession`` alone
does not:

* a :class:`~adapter.backend.SessionInfo` per session, with the UI ``state`` derived from
  the adapter status and the open permission requests (``waiting`` wins over ``busy``);
* an observer per session that follows its events as they are published (model,
  permission mode, CLI session id, cost) and reports every change that matters to
  :meth:`LocalBackend.watch` watchers, and a monitor task that retires the session when it
  ends;
* closed sessions remembered for a while (``closed_ttl`` seconds, at most ``closed_max``):
  :meth:`~LocalBackend.info` still answers and :meth:`~LocalBackend.subscribe` replays their
  recorded history, so a page reloaded just after a session ended still shows it.

Watchers are bounded: each holds at most one pending snapshot per session (a newer one
replaces an undelivered older one), so a slow watcher costs memory proportional to the
number of sessions, never to the number of changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio
import anyio.abc
import msgspec

from claudecode import UsageError
from claudecode.internal import get_logger

from ._frontend_tools import FrontendTools
from ._local_watch import Watcher, prompt_title, ui_state
from .backend import (
    FRONTEND_TOOL_SERVER,
    CliSessionInUseError,
    EventStream,
    FrontendToolBackend,
    LabelBackend,
    SessionBackend,
    SessionInfo,
    SessionSpec,
    clean_title,
)
from .config import SessionConfig
from .events import Complete, Event, ModeChanged, SessionStatus
from .images import PromptImages
from .manager import PoolStatus, SessionManager, UnknownSessionError
from .policies import PermissionDecision
from .session import AgentSession
from .specs import config_for

__all__ = ("LocalBackend",)

_log = get_logger("claudecode.adapter.local")

#: Events whose content the monitor records.
_TRACKED = frozenset({SessionStatus, ModeChanged, Complete})
#: Seconds close() waits for the monitor to have seen the session's last event.
_MONITOR_GRACE = 5.0


@dataclasses.dataclass
class _Entry:
    """What the backend knows of one session beyond the AgentSession itself."""

    session: AgentSession
    created_at: float
    frontend: FrontendTools | None = None
    model: str | None = None
    permission_mode: str | None = None
    cli_session_id: str | None = None
    title: str | None = None
    origin: str | None = None
    named_agent: str | None = None
    cost_usd: float = 0.0
    archived: bool = False
    user: str | None = None
    closed_at: float | None = None
    last_sent: tuple[Any, ...] | None = None
    #: Set once the monitor has seen the session's last event (its last change is sent).
    monitored: anyio.Event = dataclasses.field(default_factory=anyio.Event)


class LocalBackend:
    """Sessions in this process, behind the :class:`~adapter.backend.SessionBackend` interface.

    Args:
        defaults: the :class:`SessionConfig` every session starts from; a
            :class:`~adapter.backend.SessionSpec` overrides its ``cwd``, ``model``, ``policy``
            (by name), ``permission_mode``, the resume fields and ``cli_session_id``, and
            adds its ``mcp_servers`` to the defaults' ``mcp_config``.
        max_sessions: live sessions allowed at once.
        idle_timeout: seconds an idle session lives on (``None``: forever).
        closed_ttl: seconds a closed session is still reported and replayable.
        closed_max: closed sessions remembered at most (the oldest are forgotten first).
        warm: sessions kept started and initialized with ``defaults``, handed out by
            :meth:`create` to a spec that asks for nothing else (same directory, model,
            mode, policy; no resume, MCP servers or frontend tools), and replaced in the
            background (see :class:`~adapter.SessionManager`); they count against
            ``max_sessions`` and are not listed until handed out.
        name_sessions: every new CLI session's id is chosen here, known from ``create``'s
            answer (:class:`~adapter.SessionManager`'s ``name_sessions``).
    """

    def __init__(
        self,
        defaults: SessionConfig | None = None,
        *,
        max_sessions: int = 32,
        idle_timeout: float | None = 900.0,
        closed_ttl: float = 600.0,
        closed_max: int = 64,
        warm: int = 0,
        name_sessions: bool = False,
    ) -> None:
        self.defaults = defaults or SessionConfig()
        self.closed_ttl = closed_ttl
        self.closed_max = closed_max
        self._manager = SessionManager(
            self.defaults,
            max_sessions=max_sessions,
            idle_timeout=idle_timeout,
            warm=warm,
            name_sessions=name_sessions,
        )
        self._live: dict[str, _Entry] = {}
        #: CLI session ids a create() in flight resumes: claimed before its first await.
        self._claimed: set[str] = set()
        self._closed: OrderedDict[str, _Entry] = OrderedDict()
        self._watchers: list[Watcher] = []
        self._all_retired: anyio.Event | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    @property
    def max_sessions(self) -> int:
        """Live sessions allowed at once."""
        return self._manager.max_sessions

    def pool_status(self) -> PoolStatus:
        """How the warm pool stands (``size`` 0: there is none)."""
        return self._manager.pool_status()

    # -- lifecycle -------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._tg is not None:
            raise UsageError("the LocalBackend is running already")
        tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            await self._manager.__aenter__()
        except BaseException:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
            raise
        self._tg = tg
        self._all_retired = anyio.Event()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every session (their CLIs are reaped), end the watchers. Idempotent."""
        tg, self._tg = self._tg, None
        if tg is None:
            return
        assert self._all_retired is not None
        if not self._live:
            self._all_retired.set()
        try:
            # The manager shields its own closing of the sessions.
            await self._manager.__aexit__(None, None, None)
            # The monitors end with their sessions; let them record it.
            with anyio.move_on_after(5, shield=True):
                await self._all_retired.wait()
        finally:
            # Not inside the shielded scope: the task group's scope must be the innermost
            # one when it exits.
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
            for entry in list(self._live.values()):
                self._retire(entry)
            for watcher in self._watchers:
                watcher.end()
            self._watchers.clear()

    # -- the SessionBackend interface -------------------------------------------------

    def config_for(self, spec: SessionSpec) -> SessionConfig:
        """The :class:`SessionConfig` a session created from ``spec`` runs with
        (:func:`adapter.specs.config_for` over this backend's defaults).

        Raises:
            UsageError: ``spec.policy`` names no built-in policy, or
                :func:`~adapter.backend.check_spec` refuses the spec.
        """
        return config_for(self.defaults, spec)

    async def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionInfo:
        """Start a session from ``spec`` and return once its CLI is connected.

        Raises:
            CliSessionInUseError: ``spec`` resumes (without ``fork``) a CLI session that an
                open session here holds, or that another create is resuming right now.
        """
        tg = self._require_running()
        config = self.config_for(spec)
        if session_id is not None and session_id in self._live:
            raise UsageError(f"a session {session_id!r} exists already")
        frontend: FrontendTools | None = None
        if spec.frontend_tools:
            frontend = FrontendTools(spec.frontend_tools, timeout=config.permission_timeout)
            # The page offered these tools itself: calling them needs no approval.
            names = {f"mcp__{FRONTEND_TOOL_SERVER}__{name}" for name in spec.frontend_tools}
            policy = dataclasses.replace(
                config.policy, read_only_tools=config.policy.read_only_tools | names
            )
            config = dataclasses.replace(
                config, mcp_servers=[*config.mcp_servers, frontend], policy=policy
            )
        # Two CLIs resuming one conversation would both append to its transcript: the check
        # and the claim happen with no await between them, so of two creates at once one wins.
        claim = None if config.fork_session else config.resume
        if claim is not None:
            self._claim(claim)
        try:
            session = await self._manager.create(config, session_id=session_id)
        finally:
            if claim is not None:
                self._claimed.discard(claim)
        self._closed.pop(session.id, None)
        entry = _Entry(
            session=session,
            frontend=frontend,
            created_at=time.time() - (time.monotonic() - session.created_at),
            model=config.model,
            permission_mode=config.permission_mode or config.policy.cli_permission_mode,
            # The CLI reports its session id with its first turn; until then, the one it was
            # told to take (a resumed session keeps its id, a fork gets a new one). Front ends
            # refuse to open a stored session twice by it (as a cluster's registry does).
            cli_session_id=(None if config.fork_session else config.resume)
            or session.config.cli_session_id,  # (as the manager named it, if it did)
            origin=spec.origin,
            named_agent=spec.named_agent,
            user=spec.user,
        )
        self._live[session.id] = entry
        # Follow the session from its first event: nothing it published is missed. An
        # observer, not a subscriber: it runs as each batch is published, where a reader
        # task would wake the event loop once more for every batch of a streaming turn.
        observer = functools.partial(self._observe, entry)
        observer(session.history())
        stop = session.observe(observer)
        tg.start_soon(self._monitor, entry, stop, name=f"backend monitor {session.id}")
        self._changed(entry)
        return self._info(entry)

    async def info(self, session_id: str) -> SessionInfo:
        """The session's current snapshot (also for a recently closed session)."""
        return self._info(self._entry(session_id))

    async def label(
        self, session_id: str, *, title: str | None = None, archived: bool | None = None
    ) -> SessionInfo:
        """Rename and/or archive a session, open or recently closed (see
        :class:`~adapter.backend.LabelBackend`).

        Raises:
            UnknownSessionError: no such session (or it closed long ago).
            UsageError: an empty title.
        """
        entry = self._entry(session_id)
        if title is not None:
            entry.title = clean_title(title)
        if archived is not None:
            entry.archived = archived
        self._changed(entry)
        return self._info(entry)

    async def forget(self, session_id: str) -> None:
        """Delete a closed session (see :class:`~adapter.backend.LabelBackend`).

        Raises:
            UnknownSessionError: no such session (or it is gone already).
            UsageError: the session is still open.
        """
        if session_id in self._live:
            raise UsageError(f"session {session_id!r} is open: close it first")
        entry = self._entry(session_id)
        del self._closed[session_id]
        self._gone(entry)

    def _gone(self, entry: _Entry) -> None:
        """Tell the watchers that a session left the list."""
        info = msgspec.structs.replace(self._info(entry), removed=True)
        for watcher in self._watchers:
            watcher.push(info)

    async def list(self) -> list[SessionInfo]:
        """Every live session, then the recently closed ones."""
        self._expire_closed()
        return [self._info(e) for e in (*self._live.values(), *self._closed.values())]

    @contextlib.asynccontextmanager
    async def subscribe(
        self, session_id: str, *, after_seq: int | None = None
    ) -> AsyncIterator[EventStream]:
        """Events with ``seq > after_seq`` (history first), then live ones; a closed session
        replays what its history still holds, then ends."""
        entry = self._entry(session_id)
        with entry.session.subscribe(after_seq) as subscription:
            yield subscription

    async def prompt(self, session_id: str, text: str, *, images: PromptImages = ()) -> None:
        """Send a prompt to the session."""
        entry = self._live_entry(session_id)
        # The title is in place before the turn starts, so that watchers see the turn start
        # as one change (busy, with its title), not busy and then the title.
        untitled = entry.title is None
        if untitled:
            entry.title = prompt_title(text)
        try:
            await entry.session.prompt(text, images=images)
        except BaseException:
            if untitled:
                entry.title = None
            raise
        self._changed(entry)

    async def answer_permission(
        self, session_id: str, pending_id: str, decision: PermissionDecision
    ) -> None:
        """Answer an open permission request."""
        entry = self._live_entry(session_id)
        await entry.session.answer_permission(pending_id, decision)
        self._changed(entry)

    async def answer_question(
        self, session_id: str, pending_id: str, answers: Mapping[str, Sequence[str]]
    ) -> None:
        """Answer an open question (question text -> the chosen labels or free text)."""
        entry = self._live_entry(session_id)
        await entry.session.answer_question(pending_id, answers)
        self._changed(entry)

    async def decline_question(
        self, session_id: str, pending_id: str, message: str | None = None
    ) -> None:
        """Decline an open question; ``message`` tells the model why."""
        entry = self._live_entry(session_id)
        await entry.session.decline_question(pending_id, message)
        self._changed(entry)

    async def answer_tool(
        self, session_id: str, tool_call_id: str, content: str, *, is_error: bool = False
    ) -> None:
        """The result of a frontend tool call (see :class:`~adapter.FrontendToolBackend`).

        Raises:
            UsageError: the session was created without frontend tools.
        """
        entry = self._live_entry(session_id)
        if entry.frontend is None:
            raise UsageError(f"session {session_id!r} has no frontend tools")
        entry.frontend.answer(tool_call_id, content, is_error=is_error)

    async def interrupt(self, session_id: str) -> None:
        """Interrupt the running turn."""
        await self._live_entry(session_id).session.interrupt()

    async def set_model(self, session_id: str, model: str | None) -> None:
        """Use ``model`` from the next turn on."""
        entry = self._live_entry(session_id)
        await entry.session.set_model(model)
        entry.model = model
        self._changed(entry)

    async def set_effort(self, session_id: str, effort: str | None) -> None:
        """Use ``effort`` from the next model request on (``None``: the model's default)."""
        await self._live_entry(session_id).session.set_effort(effort)

    async def set_permission_mode(self, session_id: str, mode: str) -> None:
        """Switch the CLI's permission mode."""
        await self._live_entry(session_id).session.set_permission_mode(mode)

    async def close(self, session_id: str) -> None:
        """End the session and wait until it ended (a closed one: nothing to do)."""
        if session_id in self._closed:
            return
        entry = self._live_entry(session_id)
        with contextlib.suppress(UnknownSessionError):
            await self._manager.close(session_id)
        await entry.session.wait_closed()
        # The monitor reports what the last events changed (the last turn's cost) before
        # the session is retired, so watchers get "closed" last, once.
        with anyio.move_on_after(_MONITOR_GRACE):
            await entry.monitored.wait()
        self._retire(entry)

    @contextlib.asynccontextmanager
    async def watch(self) -> AsyncIterator[AsyncIterator[SessionInfo]]:
        """A :class:`SessionInfo` per change that matters (see the module docs)."""
        watcher = Watcher()
        if self._tg is None:
            watcher.end()
        else:
            self._watchers.append(watcher)
        try:
            yield watcher
        finally:
            watcher.end()
            with contextlib.suppress(ValueError):
                self._watchers.remove(watcher)

    # -- internals ---------------------------------------------------------------------

    def _require_running(self) -> anyio.abc.TaskGroup:
        if self._tg is None:
            raise UsageError("the LocalBackend is not running (use `async with`)")
        return self._tg

    def _claim(self, cli_session_id: str) -> None:
        """Claim ``cli_session_id`` for a create that resumes it, unless it is held."""
        held = cli_session_id in self._claimed or any(
            (entry.cli_session_id or entry.session.cli_session_id) == cli_session_id
            and entry.session.status not in ("terminated", "errored")
            for entry in self._live.values()
        )
        if held:
            raise CliSessionInUseError(
                f"CLI session {cli_session_id} is open already in another session"
                " (close it first, or fork)"
            )
        self._claimed.add(cli_session_id)

    def _entry(self, session_id: str) -> _Entry:
        entry = self._live.get(session_id)
        if entry is not None:
            return entry
        self._expire_closed()
        entry = self._closed.get(session_id)
        if entry is None:
            raise UnknownSessionError(f"no session {session_id!r}")
        return entry

    def _live_entry(self, session_id: str) -> _Entry:
        entry = self._live.get(session_id)
        if entry is None:
            if session_id in self._closed:
                raise UsageError(f"session {session_id!r} is closed")
            raise UnknownSessionError(f"no session {session_id!r}")
        return entry

    def _info(self, entry: _Entry) -> SessionInfo:
        session = entry.session
        state = ui_state(session)
        if entry.closed_at is not None and state not in ("closed", "errored"):
            state = "closed"
        last_activity = time.time() - (time.monotonic() - session.last_activity)
        return SessionInfo(
            id=session.id,
            status=session.status,
            state=state,
            status_reason=session.status_reason,
            cwd=str(session.config.cwd) if session.config.cwd is not None else None,
            model=entry.model,
            permission_mode=entry.permission_mode,
            cli_session_id=entry.cli_session_id or session.cli_session_id,
            created_at=entry.created_at,
            last_activity=max(entry.created_at, last_activity),
            pending_permissions=tuple(session.pending_permissions),
            last_seq=session.last_seq,
            title=entry.title,
            origin=entry.origin,
            named_agent=entry.named_agent,
            cost_usd=entry.cost_usd,
            archived=entry.archived,
            user=entry.user,
        )

    def _changed(self, entry: _Entry) -> None:
        """Tell the watchers, if something they care about changed.

        Called after every batch of a busy session's events: the comparison key is taken
        from the session directly (the UI state follows from the status, the open requests
        and whether the entry is retired), and a :class:`SessionInfo` is built only when it
        differs from the last one sent.
        """
        session = entry.session
        key = (
            session.status,
            entry.closed_at is not None,
            tuple(session.pending_permissions),
            entry.model,
            entry.permission_mode,
            entry.cli_session_id or session.cli_session_id,
            entry.title,
            entry.cost_usd,
            entry.archived,
        )
        if key == entry.last_sent:
            return
        entry.last_sent = key
        if not self._watchers:
            return
        info = self._info(entry)
        for watcher in self._watchers:
            watcher.push(info)

    def _observe(self, entry: _Entry, batch: Sequence[Event]) -> None:
        """One published batch of the session's events (see :meth:`AgentSession.observe`)."""
        if not _TRACKED.isdisjoint(map(type, batch)):
            for event in batch:
                if type(event) is SessionStatus:
                    entry.cli_session_id = event.cli_session_id or entry.cli_session_id
                    entry.model = event.model or entry.model
                    entry.permission_mode = event.permission_mode or entry.permission_mode
                elif type(event) is ModeChanged:
                    entry.permission_mode = event.mode
                elif type(event) is Complete:
                    entry.cost_usd += event.cost_usd or 0.0
        self._changed(entry)

    async def _monitor(self, entry: _Entry, stop: Callable[[], None]) -> None:
        """Retire the session once it ended (its observer has seen its last event)."""
        session = entry.session
        try:
            await session.wait_closed()
        finally:
            with anyio.move_on_after(30, shield=True):
                await session.wait_closed()
            stop()
            self._retire(entry)
            entry.monitored.set()

    def _retire(self, entry: _Entry) -> None:
        session_id = entry.session.id
        if self._live.get(session_id) is not entry:
            return
        del self._live[session_id]
        entry.closed_at = time.monotonic()
        self._closed[session_id] = entry
        self._expire_closed()
        self._changed(entry)
        if not self._live and self._tg is None and self._all_retired is not None:
            self._all_retired.set()

    def _expire_closed(self) -> None:
        now = time.monotonic()
        while self._closed:
            oldest = next(iter(self._closed.values()))
            assert oldest.closed_at is not None
            if len(self._closed) <= self.closed_max and now - oldest.closed_at < self.closed_ttl:
                break
            self._closed.popitem(last=False)
            self._gone(oldest)


if TYPE_CHECKING:  # LocalBackend implements the whole interface (checked by mypy)
    _implements: type[SessionBackend] = LocalBackend
    _tools: type[FrontendToolBackend] = LocalBackend
    _labels: type[LabelBackend] = LocalBackend
