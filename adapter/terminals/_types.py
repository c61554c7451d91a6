"""What terminal sessions report: their snapshot and the control events viewers receive."""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

__all__ = (
    "TerminalExit",
    "TerminalInfo",
    "TerminalResized",
    "TerminalState",
    "TerminalStatus",
    "ViewerItem",
)

#: ``starting``: no output yet; ``busy``: the program works (output flows, or the agent shows
#: its busy marker); ``waiting``: the screen asks the person something; ``idle``: quiet,
#: ready for input; ``closed``: the program has exited.
TerminalState: TypeAlias = Literal["starting", "busy", "waiting", "idle", "closed"]


class TerminalInfo(msgspec.Struct, kw_only=True, frozen=True):
    """A snapshot of one terminal session (JSON-serializable).

    ``exit_code`` is set when the program exited by itself, ``exit_signal`` (a number, with
    ``exit_signal_name``) when a signal ended it; ``exit_reason`` says why it ended:
    ``exited``, ``stopped`` (asked to stop), ``watchdog`` (no output within the spawn
    timeout), ``closed`` (the manager shut down) or ``failed`` (the session's own tasks
    failed; see :class:`~terminals.TerminalFailedError`). ``trust_accepted``: the agent's
    folder-trust prompt was answered "yes" by the bridge. ``last_activity``: the program's
    latest output, input typed into it, or its end. Times are Unix seconds. ``removed``: the
    last snapshot of an ended session taken off the list (listeners get it once).
    """

    id: str
    agent: str
    cwd: str
    command: str
    created_at: float
    last_activity: float = 0.0
    active: bool
    pid: int
    cols: int
    rows: int
    state: TerminalState
    viewers: int = 0
    trust_accepted: bool = False
    exit_code: int | None = None
    exit_signal: int | None = None
    exit_signal_name: str | None = None
    exit_reason: str | None = None
    ended_at: float | None = None
    removed: bool = False


class TerminalStatus(msgspec.Struct, kw_only=True, frozen=True, tag="status"):
    """The session's state changed (see :data:`TerminalState`)."""

    state: TerminalState


class TerminalResized(msgspec.Struct, kw_only=True, frozen=True, tag="resize"):
    """The terminal's size changed."""

    cols: int
    rows: int


class TerminalExit(msgspec.Struct, kw_only=True, frozen=True, tag="exit"):
    """The program ended (the last item a viewer receives)."""

    code: int | None
    signal: int | None
    signal_name: str | None
    reason: str


#: What a viewer receives: output bytes, or a control event.
ViewerItem: TypeAlias = bytes | TerminalStatus | TerminalResized | TerminalExit
