"""The session backend: the one interface every front end uses to reach sessions.

Front ends (AG-UI, WebSocket, terminals, ACP) never hold an :class:`~adapter.AgentSession` or
a :class:`~adapter.SessionManager` directly. They go through a :class:`SessionBackend`, which
keeps the session registry and the event subscription behind a small, data-only surface:

* every call names a session by id and carries plain data (:class:`SessionSpec`,
  :class:`~adapter.PermissionDecision`, strings), so a distributed backend can send it over a
  wire to whichever process owns the session;
* events come out of :meth:`SessionBackend.subscribe` as the public event union, numbered by
  the session's gap-free ``seq``; ``after_seq`` replays what a reconnecting client missed;
* :meth:`SessionBackend.watch` reports every change of a session's :class:`SessionInfo`
  (status, pending permissions, ...) so front ends can show badges and notify.

The in-process implementation wraps a :class:`~adapter.SessionManager`; a clustered one (many
workers, stateless gateways) can replace it without touching the front ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

import msgspec

from claudecode import UsageError
from claudecode.options import EFFORT_LEVELS

from .errors import BackendUnavailableError, CliSessionInUseError
from .events import Event
from .images import PromptImages
from .policies import PermissionDecision

__all__ = (
    "BackendUnavailableError",
    "CliSessionInUseError",
    "check_spec",
    "clean_title",
    "EventStream",
    "FRONTEND_TOOL_SERVER",
    "FrontendToolBackend",
    "history_dir_of",
    "HistoryBackend",
    "LabelBackend",
    "SessionBackend",
    "SessionInfo",
    "SessionKind",
    "SessionSpec",
    "SessionState",
    "SharedBackend",
)


#: ``chat``: a stream-json Claude Code session; ``terminal``: a program in a pseudo-terminal.
SessionKind: TypeAlias = Literal["chat", "terminal"]

#: What a UI shows for a session. ``busy``: a turn runs; ``waiting``: a person must answer
#: (an open permission request); ``idle``: ready for a prompt; ``starting``; ``errored``;
#: ``closed``.
SessionState: TypeAlias = Literal["starting", "busy", "waiting", "idle", "errored", "closed"]


#: The longest title a session takes (longer ones are cut, with an ellipsis).
TITLE_LENGTH = 200


def clean_title(title: str) -> str:
    """A title as a session list shows it: one line, trimmed, at most :data:`TITLE_LENGTH`.

    Raises:
        UsageError: nothing is left of it.
    """
    line = " ".join(title.split())
    if not line:
        raise UsageError("a session's title cannot be empty")
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1] + "…"


def check_spec(spec: SessionSpec) -> None:
    """Refuse, in words and before any CLI starts, a spec this machine cannot run: a working
    directory that is not one here (the CLI's spawn would fail later with an ``[Errno 2]``
    naming the server's own paths) or an unknown effort level.

    Raises:
        UsageError: ``spec.cwd`` does not exist or is not a directory; ``spec.effort`` is
            not one of :data:`claudecode.options.EFFORT_LEVELS`.
    """
    if spec.effort is not None and spec.effort not in EFFORT_LEVELS:
        raise UsageError(f"unknown effort {spec.effort!r} (one of: {', '.join(EFFORT_LEVELS)})")
    if spec.cwd is None:
        return
    path = Path(spec.cwd).expanduser()
    if not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        raise UsageError(f"the working directory {spec.cwd!r} {what}")


class SessionSpec(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """What to start: every field optional, unset fields take the backend's defaults.

    ``effort`` is the CLI's ``--effort`` (``low``, ``medium``, ``high``, ``xhigh``, ``max``).
    ``origin`` names the front end that started the session (``webui``, ``websocket``,
    ``ag-ui``, ``acp``, ``rest``), so a list of sessions can tell them apart;
    ``named_agent`` the server's named agent (``serve --agents``) it started from, set by the
    server from the agent it resolved (``None``: the server's own settings).

    ``policy`` names a built-in permission policy (``autonomous``, ``supervised``, ``plan``);
    custom callbacks cannot cross a wire and are configured on the backend itself. ``resume``
    is a CLI session id (``resume_session_at`` a message uuid in it, ``fork`` resumes into a
    new id); ``cli_session_id`` is the id a new CLI session takes (a UUID, the CLI's
    ``--session-id``), so a front end can name the session before its first turn.
    ``add_dirs`` are more directories the CLI may work in (its ``--add-dir``).
    ``system_prompt`` replaces Claude Code's system prompt (``--system-prompt``);
    ``append_system_prompt`` adds to it (``--append-system-prompt``); ``allowed_tools`` /
    ``disallowed_tools`` are permission rules (``Read``, ``Bash(git diff:*)``,
    ``mcp__docs__search``) added to the backend's own (``--allowedTools`` /
    ``--disallowedTools``): an allowed tool runs without asking, a disallowed one never.
    ``mcp_servers`` adds MCP servers in the CLI's ``--mcp-config`` form (``{name: {"type":
    "stdio", "command": ..., "args": [...], "env": {...}}}`` or ``{"type": "http", "url":
    ..., "headers": {...}}``), e.g. the servers an editor asks for. ``labels`` are placement
    hints for distributed backends (e.g. a worker that has a repository checked out); the
    in-process backend ignores them. ``frontend_tools`` (``{name: {"description": ...,
    "parameters": <JSON Schema>}}``) are tools a front end runs itself (CopilotKit actions):
    a backend that supports them (:class:`FrontendToolBackend`) offers them to Claude and
    waits for :meth:`~FrontendToolBackend.answer_tool` when Claude calls one. ``user`` is
    the person the session belongs to; the server's ownership layer
    (:class:`~adapter.owners.OwnedBackend`) sets it from the caller's identity, whatever the
    client sent.
    """

    cwd: str | None = None
    model: str | None = None
    policy: str | None = None
    permission_mode: str | None = None
    effort: str | None = None
    origin: str | None = None
    named_agent: str | None = None
    resume: str | None = None
    resume_session_at: str | None = None
    fork: bool = False
    cli_session_id: str | None = None
    add_dirs: list[str] = []
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: list[str] = []
    disallowed_tools: list[str] = []
    mcp_servers: dict[str, dict[str, Any]] = {}
    frontend_tools: dict[str, dict[str, Any]] = {}
    labels: dict[str, str] = {}
    user: str | None = None


class SessionInfo(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A snapshot of one session as the registry knows it (JSON-serializable).

    ``status`` is the adapter's own (``starting``, ``connected``, ``active``, ``idle``,
    ``terminated``, ``errored``); ``state`` is what a UI shows (:data:`SessionState`).
    Times are Unix seconds. ``owner`` names the process that runs the session (distributed
    backends; ``None`` in process). ``cli_session_id`` is known from the start when the spec
    names it (``resume`` without ``fork``, or ``cli_session_id``), else once the CLI reports
    it (its first turn). ``title`` is the first prompt's first line until someone renames
    the session; ``origin`` the front end that started it; ``named_agent`` the named agent
    it started from (its spec's, ``None`` without one); ``cost_usd`` what its turns cost
    so far; ``archived`` a session someone put away (lists may hide it). ``removed`` is a
    watcher's last word on a session that left the list (deleted, or closed and forgotten).
    ``user`` is the person the session belongs to (its spec's ``user``; ``None`` for a
    session started without an identity).
    """

    id: str
    kind: SessionKind = "chat"
    status: str = "starting"
    state: SessionState = "starting"
    status_reason: str | None = None
    cwd: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    cli_session_id: str | None = None
    created_at: float = 0.0
    last_activity: float = 0.0
    pending_permissions: tuple[str, ...] = ()
    last_seq: int = 0
    owner: str | None = None
    title: str | None = None
    origin: str | None = None
    named_agent: str | None = None
    cost_usd: float = 0.0
    archived: bool = False
    removed: bool = False
    user: str | None = None


@runtime_checkable
class EventStream(Protocol):
    """One subscriber's events, in ``seq`` order with no gaps and no repeats.

    ``receive_batch`` returns every event pending (at least one), raises
    :class:`anyio.EndOfStream` after the session's last event and
    :class:`~adapter.SubscriberDropped` (with the last ``seq`` delivered) when the subscriber
    fell too far behind — it may then subscribe again with ``after_seq``. ``gap`` counts the
    events lost before the first one delivered (the history did not reach back far enough).
    ``wait_dropped`` returns once the subscriber was dropped for falling behind (and never
    otherwise): a consumer busy elsewhere, waiting to write to a slow client, learns it then
    rather than at its next ``receive_batch``.
    """

    gap: int

    async def receive_batch(self) -> list[Event]: ...

    async def wait_dropped(self) -> None: ...

    def __aiter__(self) -> AsyncIterator[Event]: ...


class SessionBackend(Protocol):
    """Where sessions live. Errors: :class:`~adapter.UnknownSessionError` for an id nobody
    runs, :class:`~adapter.TooManySessionsError` at the cap,
    :class:`~adapter.UnknownPermissionError` for an answer to a request that is not open,
    :class:`claudecode.UsageError` for a call the session's state does not allow, and
    :class:`claudecode.ClaudeCodeError` subclasses when the CLI cannot start.
    """

    async def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionInfo:
        """Start a session and return once its CLI is connected.

        Raises :class:`CliSessionInUseError` when ``spec`` resumes (without ``fork``) a CLI
        session that an open session of the backend holds; of two such creates at once, one
        wins."""
        ...

    async def info(self, session_id: str) -> SessionInfo:
        """The session's current snapshot."""
        ...

    async def list(self) -> list[SessionInfo]:
        """Every live session (and, for a while, recently closed ones)."""
        ...

    def subscribe(
        self, session_id: str, *, after_seq: int | None = None
    ) -> AbstractAsyncContextManager[EventStream]:
        """``async with backend.subscribe(id, after_seq=n) as events:`` — events with
        ``seq > n`` (history first, then live, nothing lost or repeated across the switch);
        ``after_seq=None``: live events only. Subscribing before prompting guarantees every
        event of the turn arrives."""
        ...

    async def prompt(self, session_id: str, text: str, *, images: PromptImages = ()) -> None:
        """Send a prompt (with images as ``(media_type, bytes)`` pairs). A prompt sent while
        a turn runs is queued by the CLI and runs after it."""
        ...

    async def answer_permission(
        self, session_id: str, pending_id: str, decision: PermissionDecision
    ) -> None:
        """Answer an open permission request (``allow``, ``allow_always``, ``deny``)."""
        ...

    async def answer_question(
        self, session_id: str, pending_id: str, answers: Mapping[str, Sequence[str]]
    ) -> None:
        """Answer an open question request: question text -> the chosen option labels (or
        one free-text answer); an empty list skips a question."""
        ...

    async def decline_question(
        self, session_id: str, pending_id: str, message: str | None = None
    ) -> None:
        """Decline an open question request; the model reads ``message`` as the reason."""
        ...

    async def interrupt(self, session_id: str) -> None:
        """Interrupt the running turn."""
        ...

    async def set_model(self, session_id: str, model: str | None) -> None:
        """Use ``model`` from the next turn on."""
        ...

    async def set_effort(self, session_id: str, effort: str | None) -> None:
        """Use ``effort`` (the CLI's ``--effort`` levels) from the next model request on;
        ``None``: the model's own default."""
        ...

    async def set_permission_mode(self, session_id: str, mode: str) -> None:
        """Switch the CLI's permission mode."""
        ...

    async def close(self, session_id: str) -> None:
        """End the session (deny what is pending, stop the CLI) and wait until it ended."""
        ...

    def watch(self) -> AbstractAsyncContextManager[AsyncIterator[SessionInfo]]:
        """``async with backend.watch() as changes: async for info in changes:`` — a
        :class:`SessionInfo` each time a session is created, changes state, gets or loses a
        pending permission request, or closes (its last snapshot has ``state="closed"``).
        Bounded: a watcher that falls behind gets the newest snapshot per session."""
        ...


#: The MCP server name frontend tools are offered under: Claude sees ``mcp__frontend__<name>``.
FRONTEND_TOOL_SERVER = "frontend"


@runtime_checkable
class HistoryBackend(Protocol):
    """An optional capability of a :class:`SessionBackend`: where its stored sessions are.

    ``history_dir`` is laid out like the CLI's configuration directory
    (``projects/<project>/<CLI session id>.jsonl``); front ends list, load and resume stored
    sessions from there instead of this machine's own CLI directory. A cluster gateway
    keeps its copy of the transcripts the workers mirror there.

    A backend that may or may not keep a history (a ``ClusterBackend`` made with
    ``history=False``) says it has none by returning ``None`` or by raising
    :class:`AttributeError`. Ask :func:`history_dir_of`, not ``isinstance``: from Python
    3.12 ``isinstance`` against this protocol only looks the property up (it no longer calls
    it), so such a backend counts as a ``HistoryBackend`` there.
    """

    @property
    def history_dir(self) -> Path | None:
        """The directory (``projects/`` under it); ``None``: this backend keeps none."""
        ...


def history_dir_of(backend: object) -> Path | None:
    """Where ``backend`` keeps the stored sessions of its sessions, or ``None`` if it keeps
    none (then they are wherever the CLI's own environment says: ``HOME``,
    ``CLAUDE_CONFIG_DIR``).

    The one answer every front end uses to list, load and resume stored sessions. It calls
    the ``history_dir`` property (see :class:`HistoryBackend`) rather than trusting
    ``isinstance``, whose answer for a runtime-checkable protocol with a property differs
    between Python versions; it never raises for a backend without a history (no
    ``history_dir``, one that raises :class:`AttributeError`, or one that is ``None``).
    """
    try:
        where = backend.history_dir  # type: ignore[attr-defined]
    except AttributeError:  # none at all, or one made without a history
        return None
    return None if where is None else Path(where)


@runtime_checkable
class LabelBackend(Protocol):
    """An optional capability of a :class:`SessionBackend`: what people call a session.

    Renaming and archiving change only the :class:`SessionInfo` (watchers see the change);
    an archived session goes on as before.
    """

    async def label(
        self, session_id: str, *, title: str | None = None, archived: bool | None = None
    ) -> SessionInfo:
        """Set the title and/or the archived flag of a session (open or closed); unset
        arguments change nothing. Returns the session as it is now."""
        ...

    async def forget(self, session_id: str) -> None:
        """Delete a closed session: it leaves the list and its history is no longer replayed
        (watchers get it once more, ``removed``). An open session must be closed first."""
        ...


@runtime_checkable
class SharedBackend(Protocol):
    """An optional capability of a :class:`SessionBackend` whose sessions other processes
    serve too (a cluster's gateways): each of them sees every session end, but a session's
    end is one record per deployment. The ownership layer's audit
    (:meth:`adapter.owners.OwnedBackend.auditing_ends`) asks before it writes one.
    """

    async def claim_end(self, session_id: str) -> bool:
        """Whether this process records the end of ``session_id``: ``True`` for exactly one
        of them. Raises when the shared state cannot be reached."""
        ...


@runtime_checkable
class FrontendToolBackend(Protocol):
    """An optional capability of a :class:`SessionBackend`: tools the front end runs.

    A session created with ``SessionSpec.frontend_tools`` offers them to Claude (as the
    in-process MCP server :data:`FRONTEND_TOOL_SERVER`); when Claude calls one, the call
    waits until the front end reports what the tool returned.
    """

    async def answer_tool(
        self, session_id: str, tool_call_id: str, content: str, *, is_error: bool = False
    ) -> None:
        """The result of the frontend tool call ``tool_call_id`` (the ``tool_use`` id)."""
        ...
