"""A terminal as the session registry lists it, so front ends list both kinds alike."""

from __future__ import annotations

from ..backend import SessionInfo, SessionState
from ._types import TerminalInfo

__all__ = ("as_session_info",)

_STATES: dict[str, SessionState] = {
    "starting": "starting",
    "busy": "busy",
    "waiting": "waiting",
    "idle": "idle",
    "closed": "closed",
}


def as_session_info(info: TerminalInfo) -> SessionInfo:
    """A terminal as the session registry shows it (``kind="terminal"``), so session lists
    cover both kinds. ``title`` is the agent's name; ``status`` is ``active`` / ``terminated``;
    ``removed``: taken off the list."""
    return SessionInfo(
        id=info.id,
        kind="terminal",
        status="active" if info.active else "terminated",
        state=_STATES[info.state],
        status_reason=info.exit_reason,
        cwd=info.cwd,
        created_at=info.created_at,
        last_activity=info.last_activity or info.created_at,
        title=info.agent,
        removed=info.removed,
    )
