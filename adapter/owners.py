"""Who owns a session, and the one layer that enforces it.

A server with identities (users file, JWT, or one admin token) serves several people from one
backend. Each request runs as a :class:`Caller` (a :class:`Principal` and the front end it
came through), put in a context variable by the server's identity middleware before any
route runs; tasks a request starts inherit it. :class:`OwnedBackend` wraps the real
backend and is the only backend the front ends get, so none of them can forget the check:

* ``create`` stamps the caller's name into ``SessionSpec.user`` (whatever the client sent);
  the backend keeps it in the session's :class:`~adapter.backend.SessionInfo` (a cluster
  keeps it in the session record in NATS, so every gateway sees it);
* ``list`` and ``watch`` show the caller's own sessions only; every call naming a session
  of someone else raises exactly what an unknown id raises
  (:class:`~adapter.UnknownSessionError` ``no session 'id'``): ids cannot be probed;
* an admin sees and acts on every session; each action on another user's session is
  written to the :class:`~adapter.audit.AuditLog`, as are creations, closes and permission
  decisions (with the tool they answer, learnt from the request events the caller was
  shown).

Code that runs for the server itself (lifespan tasks: the WebSocket status feed, thread
evictions) runs as :data:`SERVER`, which sees everything and is not audited; code that runs
with no caller at all is refused everything (:data:`NOBODY`), so a forgotten context fails
closed.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
from collections import OrderedDict
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec

import anyio
import msgspec

from claudecode import UsageError
from claudecode.internal import get_logger

from .audit import AuditLog
from .backend import (
    EventStream,
    FrontendToolBackend,
    LabelBackend,
    SessionBackend,
    SessionInfo,
    SessionSpec,
    SharedBackend,
    history_dir_of,
)
from .errors import ForbiddenError, UnknownSessionError
from .events import Event, PermissionRequest, QuestionRequest
from .images import PromptImages
from .policies import PermissionDecision

__all__ = (
    "acting_as",
    "as_caller",
    "Caller",
    "current_caller",
    "ForbiddenError",
    "HistoryOwners",
    "LOCAL",
    "may_see",
    "NOBODY",
    "owned",
    "OwnedBackend",
    "OwnedToolBackend",
    "Principal",
    "SERVER",
)

_log = get_logger("claudecode.adapter.owners")

#: Session owners remembered (they never change; the cache saves a backend round trip).
_OWNER_CACHE = 65_536
#: Tool names of open permission requests remembered for the audit log.
_TOOL_CACHE = 4_096


@dataclass(frozen=True, slots=True)
class Principal:
    """A person (or the server itself): ``admin`` sees and acts on every session;
    ``terminals`` may open terminal sessions (a shell as the server's own user)."""

    name: str
    admin: bool = False
    terminals: bool = False


@dataclass(frozen=True, slots=True)
class Caller:
    """Who makes the current call, and through which front end (``rest``, ``ws``, ``agui``,
    ``pty``, ``internal``)."""

    principal: Principal
    via: str = "internal"


#: The server's own tasks: see everything, never audited.
SERVER = Principal("(server)", admin=True, terminals=True)
#: The one implicit user of a server with no identities configured (a loopback bind).
LOCAL = Principal("local", admin=True, terminals=True)
#: No caller at all: owns nothing, sees nothing, may create nothing.
NOBODY = Principal("")

_P = ParamSpec("_P")

_current: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "claudecode_bridge_caller", default=None
)


def current_caller() -> Caller:
    """The caller of the running code (:data:`NOBODY` when none was set)."""
    return _current.get() or Caller(NOBODY)


@contextlib.contextmanager
def acting_as(principal: Principal, via: str = "internal") -> Iterator[Caller]:
    """Run the block (and the tasks it starts) as ``principal``."""
    caller = Caller(principal, via)
    token = _current.set(caller)
    try:
        yield caller
    finally:
        _current.reset(token)


def as_caller(func: Callable[_P, Awaitable[None]]) -> Callable[_P, Coroutine[Any, Any, None]]:
    """``func`` bound to the current caller: a task a service starts on someone's behalf
    runs as them, whatever context the task group gives it."""
    caller = current_caller()

    async def bound(*args: _P.args, **kwargs: _P.kwargs) -> None:
        with acting_as(caller.principal, caller.via):
            await func(*args, **kwargs)

    return bound


def may_see(principal: Principal, user: str | None) -> bool:
    """Whether ``principal`` may see (and act on) what ``user`` owns."""
    if principal.admin:
        return True
    return bool(principal.name) and user == principal.name


class HistoryOwners:
    """Who started each CLI session through the bridge (CLI session id -> user).

    Filled from every :class:`~adapter.backend.SessionInfo` the ownership layer sees; kept
    in ``path`` when given (JSON lines ``{"cli": id, "user": name}``, appended one per new
    CLI session, ``0600``), so a restarted server still knows whose stored transcripts are
    whose. The first line naming a CLI session wins. Stored sessions nobody started through
    the bridge belong to no user (an admin sees them).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = None if path is None else Path(path)
        self._owners: dict[str, str] = {}
        if self.path is not None and self.path.exists():
            try:
                lines = self.path.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                _log.warning("owners.history_unreadable", path=str(self.path), error=str(exc))
                lines = []
            for line in lines:
                try:
                    entry = json.loads(line)
                    cli, user = entry["cli"], entry["user"]
                except (ValueError, TypeError, KeyError):
                    continue  # a torn last line after a crash: skipped
                if isinstance(cli, str) and isinstance(user, str):
                    self._owners.setdefault(cli, user)

    def owner(self, cli_session_id: str) -> str | None:
        """The user who started ``cli_session_id`` through the bridge, if known."""
        return self._owners.get(cli_session_id)

    def note(self, info: SessionInfo) -> None:
        """Remember the owner of ``info``'s CLI session (once known)."""
        if info.cli_session_id is None or info.user is None:
            return
        if info.cli_session_id in self._owners:
            return
        self._owners[info.cli_session_id] = info.user
        if self.path is None:
            return
        line = json.dumps({"cli": info.cli_session_id, "user": info.user}) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)


class _Recorded:
    """A subscription that notes the tool of each permission request it delivers."""

    def __init__(self, stream: EventStream, tools: OrderedDict[tuple[str, str], str], sid: str):
        self._stream = stream
        self._tools = tools
        self._sid = sid

    @property
    def gap(self) -> int:
        return self._stream.gap

    @gap.setter
    def gap(self, value: int) -> None:
        self._stream.gap = value

    def _note(self, events: Sequence[Event]) -> None:
        for event in events:
            kind = type(event)  # the event types are final: cheaper than isinstance, per event
            if kind is PermissionRequest:
                assert isinstance(event, PermissionRequest)
                self._tools[(self._sid, event.pending_id)] = event.tool_name
            elif kind is QuestionRequest:
                assert isinstance(event, QuestionRequest)
                self._tools[(self._sid, event.pending_id)] = "AskUserQuestion"
            else:
                continue
            while len(self._tools) > _TOOL_CACHE:
                self._tools.popitem(last=False)

    async def receive_batch(self) -> list[Event]:
        batch = await self._stream.receive_batch()
        self._note(batch)
        return batch

    async def wait_dropped(self) -> None:
        await self._stream.wait_dropped()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        async for event in self._stream:
            self._note((event,))
            yield event


class OwnedBackend:
    """``inner`` seen by the current :class:`Caller` (see the module docs).

    Args:
        inner: the real backend (its owner runs and closes it).
        audit: where decisions and admin actions are recorded (default: the log only).
        history: who started which CLI session (for resume and history listings).
    """

    def __init__(
        self,
        inner: SessionBackend,
        *,
        audit: AuditLog | None = None,
        history: HistoryOwners | None = None,
    ) -> None:
        self.inner = inner
        self.audit = audit or AuditLog()
        self.history = history or HistoryOwners()
        self._owners: OrderedDict[str, str | None] = OrderedDict()
        self._tools: OrderedDict[tuple[str, str], str] = OrderedDict()
        #: What ``GET /readyz`` asks a backend that runs no CLI here.
        self.readiness = getattr(inner, "readiness", None)

    @property
    def history_dir(self) -> Path | None:
        """The inner backend's stored sessions (see :func:`~adapter.backend.history_dir_of`)."""
        return history_dir_of(self.inner)

    # -- the check ---------------------------------------------------------------------

    def _seen(self, info: SessionInfo) -> None:
        self._owners[info.id] = info.user
        self._owners.move_to_end(info.id)
        while len(self._owners) > _OWNER_CACHE:
            self._owners.popitem(last=False)
        self.history.note(info)

    async def _owner(self, session_id: str) -> str | None:
        if session_id in self._owners:
            return self._owners[session_id]
        info = await self.inner.info(session_id)
        self._seen(info)
        return info.user

    async def _guard(self, session_id: str, action: str) -> Caller:
        """The caller, once it may act on ``session_id``; else what an unknown id raises."""
        caller = current_caller()
        try:
            owner = await self._owner(session_id)
        except UnknownSessionError:
            raise UnknownSessionError(f"no session {session_id!r}") from None
        principal = caller.principal
        if not may_see(principal, owner):
            # As much work as an unknown id costs (a cluster asks NATS), so that neither the
            # answer nor its time tells the two apart.
            with contextlib.suppress(UnknownSessionError):
                await self.inner.info(session_id)
            raise UnknownSessionError(f"no session {session_id!r}")
        if principal is not SERVER and owner != principal.name:
            self.audit.write(
                "admin_action",
                user=principal.name,
                via=caller.via,
                operation=action,
                session=session_id,
                owner=owner,
            )
        return caller

    def history_visible(self, cli_session_id: str) -> bool:
        """Whether the current caller may see the stored session ``cli_session_id``: one
        they started through the bridge (an admin: any)."""
        return may_see(current_caller().principal, self.history.owner(cli_session_id))

    def visible(self, info: SessionInfo) -> bool:
        """Whether the current caller may see ``info``."""
        self._seen(info)
        return may_see(current_caller().principal, info.user)

    # -- the backend -------------------------------------------------------------------

    async def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionInfo:
        caller = current_caller()
        principal = caller.principal
        if principal is NOBODY or not principal.name:
            raise ForbiddenError("no identity: sessions cannot be created")
        if principal is not SERVER:
            spec = msgspec.structs.replace(spec, user=principal.name)
        resume = spec.resume
        if (
            resume is not None
            and not principal.admin
            and self.history.owner(resume) != principal.name
        ):
            # A stored session someone else started: as if it did not exist.
            raise UnknownSessionError(f"no session {resume!r}")
        info = await self.inner.create(spec, session_id=session_id)
        self._seen(info)
        self.audit.write(
            "session_create",
            user=principal.name,
            via=caller.via,
            session=info.id,
            kind=info.kind,
            named_agent=spec.named_agent,
            resume=spec.resume,
        )
        return info

    async def info(self, session_id: str) -> SessionInfo:
        await self._guard(session_id, "info")
        info = await self.inner.info(session_id)
        self._seen(info)
        return info

    async def list(self) -> list[SessionInfo]:
        return [info for info in await self.inner.list() if self.visible(info)]

    @contextlib.asynccontextmanager
    async def _subscribe(
        self, session_id: str, after_seq: int | None
    ) -> AsyncIterator[EventStream]:
        await self._guard(session_id, "subscribe")
        async with self.inner.subscribe(session_id, after_seq=after_seq) as stream:
            yield _Recorded(stream, self._tools, session_id)

    def subscribe(
        self, session_id: str, *, after_seq: int | None = None
    ) -> AbstractAsyncContextManager[EventStream]:
        return self._subscribe(session_id, after_seq)

    async def prompt(self, session_id: str, text: str, *, images: PromptImages = ()) -> None:
        await self._guard(session_id, "prompt")
        await self.inner.prompt(session_id, text, images=images)

    async def answer_permission(
        self, session_id: str, pending_id: str, decision: PermissionDecision
    ) -> None:
        caller = await self._guard(session_id, "permission_response")
        await self.inner.answer_permission(session_id, pending_id, decision)
        self._audit_decision(caller, session_id, pending_id, decision.behavior)

    def _audit_decision(self, caller: Caller, session_id: str, pending_id: str, what: str) -> None:
        self.audit.write(
            "permission_decision",
            user=caller.principal.name,
            via=caller.via,
            session=session_id,
            pending_id=pending_id,
            tool=self._tools.pop((session_id, pending_id), None),
            decision=what,
        )

    async def answer_question(
        self, session_id: str, pending_id: str, answers: Mapping[str, Sequence[str]]
    ) -> None:
        caller = await self._guard(session_id, "question_response")
        await self.inner.answer_question(session_id, pending_id, answers)
        self._audit_decision(caller, session_id, pending_id, "answered")

    async def decline_question(
        self, session_id: str, pending_id: str, message: str | None = None
    ) -> None:
        caller = await self._guard(session_id, "question_response")
        await self.inner.decline_question(session_id, pending_id, message)
        self._audit_decision(caller, session_id, pending_id, "declined")

    async def label(
        self, session_id: str, *, title: str | None = None, archived: bool | None = None
    ) -> SessionInfo:
        """Rename or archive a session of the caller's (when the backend below can)."""
        await self._guard(session_id, "label")
        if not isinstance(self.inner, LabelBackend):
            raise UsageError("this server cannot rename or archive sessions")
        return await self.inner.label(session_id, title=title, archived=archived)

    async def forget(self, session_id: str) -> None:
        """Delete a closed session of the caller's (when the backend below can)."""
        await self._guard(session_id, "delete_session")
        if not isinstance(self.inner, LabelBackend):
            raise UsageError("this server cannot delete sessions")
        await self.inner.forget(session_id)

    async def interrupt(self, session_id: str) -> None:
        await self._guard(session_id, "interrupt")
        await self.inner.interrupt(session_id)

    async def set_model(self, session_id: str, model: str | None) -> None:
        await self._guard(session_id, "set_model")
        await self.inner.set_model(session_id, model)

    async def set_effort(self, session_id: str, effort: str | None) -> None:
        await self._guard(session_id, "set_effort")
        await self.inner.set_effort(session_id, effort)

    async def set_permission_mode(self, session_id: str, mode: str) -> None:
        await self._guard(session_id, "set_permission_mode")
        await self.inner.set_permission_mode(session_id, mode)

    async def close(self, session_id: str) -> None:
        caller = await self._guard(session_id, "close")
        await self.inner.close(session_id)
        if caller.principal is not SERVER:
            self.audit.write(
                "session_close", user=caller.principal.name, via=caller.via, session=session_id
            )

    @contextlib.asynccontextmanager
    async def _watch(self) -> AsyncIterator[AsyncIterator[SessionInfo]]:
        principal = current_caller().principal
        async with self.inner.watch() as changes:
            yield self._visible_changes(changes, principal)

    async def _visible_changes(
        self, changes: AsyncIterator[SessionInfo], principal: Principal
    ) -> AsyncIterator[SessionInfo]:
        async for info in changes:
            self._seen(info)
            if may_see(principal, info.user):
                yield info

    def watch(self) -> AbstractAsyncContextManager[AsyncIterator[SessionInfo]]:
        return self._watch()

    @contextlib.asynccontextmanager
    async def auditing_ends(self) -> AsyncIterator[None]:
        """While the block runs, write ``session_end`` (its owner, why) for every session
        that ends, however it ended: closed by someone, idle too long, its CLI gone.

        Over a :class:`~adapter.SharedBackend` (a cluster gateway: every gateway sees every
        session end) only the process whose claim wins writes it, so one end is one record
        per deployment, in the audit log of whichever gateway that is. When the claim cannot
        be made (NATS unreachable) the record is written all the same: an end recorded twice
        beats one never recorded."""
        ended: OrderedDict[str, None] = OrderedDict()
        shared = self.inner if isinstance(self.inner, SharedBackend) else None

        async def ours(session_id: str) -> bool:
            if shared is None:
                return True
            try:
                return await shared.claim_end(session_id)
            except Exception as exc:
                _log.warning("owners.end_claim_failed", session_id=session_id, error=repr(exc))
                return True

        async def follow() -> None:
            while True:
                try:
                    async with self.inner.watch() as changes:
                        async for info in changes:
                            if info.state != "closed" or info.id in ended:
                                continue
                            ended[info.id] = None
                            while len(ended) > _OWNER_CACHE:
                                ended.popitem(last=False)
                            if not await ours(info.id):
                                continue
                            self.audit.write(
                                "session_end",
                                user=info.user,
                                session=info.id,
                                reason=info.status_reason,
                            )
                    return  # the backend ended its watchers: it is closing
                except Exception:  # a cluster gateway's outage: watch again
                    _log.exception("owners.audit_watch_failed")
                await anyio.sleep(1.0)

        async with anyio.create_task_group() as tg:
            tg.start_soon(follow)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()


class OwnedToolBackend(OwnedBackend):
    """:class:`OwnedBackend` over a backend that runs frontend tools."""

    async def answer_tool(
        self, session_id: str, tool_call_id: str, content: str, *, is_error: bool = False
    ) -> None:
        await self._guard(session_id, "answer_tool")
        assert isinstance(self.inner, FrontendToolBackend)
        await self.inner.answer_tool(session_id, tool_call_id, content, is_error=is_error)


def owned(
    inner: SessionBackend,
    *,
    audit: AuditLog | None = None,
    history: HistoryOwners | None = None,
) -> OwnedBackend:
    """``inner`` behind the ownership layer, with the same optional capabilities."""
    kind = OwnedToolBackend if isinstance(inner, FrontendToolBackend) else OwnedBackend
    return kind(inner, audit=audit, history=history)
