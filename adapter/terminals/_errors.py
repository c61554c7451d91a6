"""The typed errors of terminal sessions.

::

    TerminalError
    ├── AgentUnavailableError      the agent's program is not installed (names what to install)
    ├── UnknownAgentError          no agent of that name is declared
    ├── TerminalExistsError        a live session already has that id
    ├── UnknownTerminalError       no session has that id
    ├── TerminalClosedError        the session has ended (input, attach)
    ├── TerminalRunningError       the session still runs (remove: stop it first)
    ├── TerminalFailedError        the session's own tasks failed; it was ended (viewers)
    ├── TooManyTerminalsError      the manager's session cap is reached
    └── InvalidTerminalSizeError   columns / rows out of range
"""

from __future__ import annotations

from ..errors import AdapterError

__all__ = (
    "AgentUnavailableError",
    "InvalidTerminalSizeError",
    "TerminalClosedError",
    "TerminalError",
    "TerminalExistsError",
    "TerminalFailedError",
    "TerminalRunningError",
    "TooManyTerminalsError",
    "UnknownAgentError",
    "UnknownTerminalError",
)


class TerminalError(AdapterError):
    """Base class of every error raised by the terminals package (one branch of the adapter's
    tree, :mod:`adapter.errors`: the call does not fit the terminal's state, 409)."""


class AgentUnavailableError(TerminalError):
    """The agent's program was not found; ``install_hint`` says how to install it."""

    def __init__(self, agent: str, install_hint: str) -> None:
        super().__init__(f"agent {agent!r} is not installed: {install_hint}")
        self.agent = agent
        self.install_hint = install_hint


class UnknownAgentError(TerminalError):
    """No agent of that name is declared."""

    http_status = 400

    def __init__(self, agent: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown agent {agent!r} (known: {', '.join(known)})")
        self.agent = agent


class TerminalExistsError(TerminalError):
    """A live terminal session already uses that id."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"terminal session {session_id!r} already exists")
        self.session_id = session_id


class UnknownTerminalError(TerminalError):
    """No terminal session has that id."""

    code = "unknown_session"
    http_status = 404

    def __init__(self, session_id: str) -> None:
        super().__init__(f"no terminal session {session_id!r}")
        self.session_id = session_id


class TerminalClosedError(TerminalError):
    """The terminal session has ended; it takes no more input."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"terminal session {session_id!r} has ended")
        self.session_id = session_id


class TerminalRunningError(TerminalError):
    """The terminal session still runs: only an ended one is removed from the list (a
    running program is stopped on purpose, never as a side effect of tidying a list)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"terminal session {session_id!r} is still running: stop it first")
        self.session_id = session_id


class TerminalFailedError(TerminalError):
    """The session's own tasks failed (a bug, a failing screen hook): the bridge stopped its
    program and ended it; every other session goes on. What failed is in the server log;
    ``cause`` names the exception's type only (no internals reach a viewer)."""

    def __init__(self, session_id: str, cause: str) -> None:
        super().__init__(
            f"terminal session {session_id!r} ended after an internal error ({cause}); "
            "the server log has the details"
        )
        self.session_id = session_id
        self.cause = cause


class TooManyTerminalsError(TerminalError):
    """The manager already runs its maximum number of terminal sessions."""

    code = "too_many_sessions"
    http_status = 429

    def __init__(self, limit: int) -> None:
        super().__init__(f"too many terminal sessions (limit {limit})")
        self.limit = limit


class InvalidTerminalSizeError(TerminalError):
    """Columns or rows outside the accepted range."""

    http_status = 400

    def __init__(self, cols: int, rows: int) -> None:
        super().__init__(f"invalid terminal size {cols}x{rows} (1..1000 each)")
        self.cols = cols
        self.rows = rows
