"""What an exception raised by a request becomes: an ``error`` frame's code and message.

Expected failures (an unknown session or permission request, too many sessions, a stored
CLI session another session holds, a bad request, an unreachable backend, the CLI failing)
keep their message; anything else is ``internal`` with no details (the endpoint logs it).
"""

from __future__ import annotations

from claudecode import ClaudeCodeError, UsageError

from ...backend import BackendUnavailableError, CliSessionInUseError
from ...history.transcripts import HistoryNotFoundError
from ...manager import TooManySessionsError, UnknownSessionError
from ...session import UnknownPermissionError
from .protocol import ErrorCode

__all__ = ("error_of",)


def _terminal_error_of(exc: BaseException) -> tuple[ErrorCode, str] | None:
    try:
        from adapter.terminals import TerminalError, TooManyTerminalsError, UnknownTerminalError
    except ImportError:  # the terminals extra is not installed
        return None
    if isinstance(exc, UnknownTerminalError):
        return "unknown_session", str(exc)
    if isinstance(exc, TooManyTerminalsError):
        return "too_many_sessions", str(exc)
    if isinstance(exc, TerminalError):
        return "bad_request", str(exc)
    return None


def error_of(exc: BaseException) -> tuple[ErrorCode, str]:
    """The error code and message an ``error`` frame reports for ``exc``."""
    terminal = _terminal_error_of(exc)
    if terminal is not None:
        return terminal
    if isinstance(exc, UnknownSessionError):
        return "unknown_session", str(exc).strip("'\"")
    if isinstance(exc, UnknownPermissionError):
        return "unknown_permission", str(exc)
    if isinstance(exc, TooManySessionsError):
        return "too_many_sessions", str(exc)
    if isinstance(exc, HistoryNotFoundError):
        return "history_not_found", str(exc)
    if isinstance(exc, CliSessionInUseError):  # before UsageError, its base
        return "session_in_use", str(exc)
    if isinstance(exc, UsageError):
        return "bad_request", str(exc)
    if isinstance(exc, BackendUnavailableError):
        return "unavailable", str(exc)
    if isinstance(exc, ClaudeCodeError):
        return "cli_error", str(exc)
    return "internal", "internal error (see the server log)"
