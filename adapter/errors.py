"""The adapter's errors, in one tree, and the one place that says what a client is told.

::

    claudecode.ClaudeCodeError
     └── AdapterError                      code              HTTP
          ├── UnknownSessionError*          unknown_session    404   (also KeyError)
          ├── UnknownPermissionError*       unknown_permission 404
          ├── UnknownAgentError*            unknown_agent      404
          ├── TooManySessionsError*         too_many_sessions  429
          ├── CliSessionInUseError*         session_in_use     409
          ├── ThreadBusyError*              thread_busy        409
          ├── ThreadAgentError*             bad_request        409
          ├── InvalidAnswerError*           bad_request        422
          ├── HistoryNotFoundError          history_not_found  404   (also LookupError)
          ├── ForbiddenError*               forbidden          403
          ├── BackendUnavailableError       unavailable        503
          │    └── ClusterUnavailableError (adapter.cluster)
          └── TerminalError (adapter.terminals)  bad_request   409 / 400, and its subclasses

    * also a claudecode.UsageError: the call does not fit the session's state.

Each class carries what a front end needs to answer with it: ``code`` (the WebSocket
protocol's error code, also used by ACP and the HTTP bodies) and ``http_status``.
:func:`describe` maps any exception, the client library's included, to an
:class:`ErrorInfo`; the HTTP server, the WebSocket protocol and the ACP agent all answer
through it, so one error never gets three different answers. Anything it does not know is
``internal`` with no detail: a client never sees a stack trace or an internal message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from claudecode import ClaudeCodeError, UsageError

__all__ = (
    "AdapterError",
    "BackendUnavailableError",
    "CliSessionInUseError",
    "describe",
    "ErrorInfo",
    "ForbiddenError",
    "HistoryNotFoundError",
    "InvalidAnswerError",
    "ThreadAgentError",
    "ThreadBusyError",
    "TooManySessionsError",
    "UnknownAgentError",
    "UnknownPermissionError",
    "UnknownSessionError",
)


class AdapterError(ClaudeCodeError):
    """Base class of every error the adapter raises."""

    #: The error code a client is told (the WebSocket protocol's ``ErrorCode``).
    code: ClassVar[str] = "bad_request"
    #: The HTTP status that answers it.
    http_status: ClassVar[int] = 409


class TooManySessionsError(AdapterError, UsageError):
    """Raised by :meth:`~adapter.SessionManager.create` when ``max_sessions`` are already live."""

    code = "too_many_sessions"
    http_status = 429


class UnknownSessionError(AdapterError, UsageError, KeyError):
    """Raised when no live session has the given id."""

    code = "unknown_session"
    http_status = 404

    def __str__(self) -> str:
        # KeyError quotes its argument; a client reads the message as it was written.
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class UnknownPermissionError(AdapterError, UsageError):
    """Raised when answering a permission request that is not open (answered, expired...)."""

    code = "unknown_permission"
    http_status = 404


class UnknownAgentError(AdapterError, UsageError):
    """A new session named an agent the server does not offer (``serve --agents``)."""

    code = "unknown_agent"
    http_status = 404


class CliSessionInUseError(AdapterError, UsageError):
    """``create`` was asked to resume (without ``fork``) a CLI session that a session of the
    backend holds open: two CLIs resuming one conversation would both append to its
    transcript. Close that session first, or fork."""

    code = "session_in_use"
    http_status = 409


class ThreadAgentError(AdapterError, UsageError):
    """A run named another agent than the one its AG-UI thread talks to (a thread keeps the
    agent of its first run: its CLI session runs with that agent's settings)."""


class ThreadBusyError(AdapterError, UsageError):
    """A run was started on an AG-UI thread whose previous run is still going."""

    code = "thread_busy"
    http_status = 409


class InvalidAnswerError(AdapterError, UsageError):
    """The answers do not fit the question request (unknown question, several picks for a
    single-choice question, an empty or oversized answer), or the request is not a question."""

    code = "bad_request"
    http_status = 422


class ForbiddenError(AdapterError, UsageError):
    """The caller is known but may not do this (a user without ``terminals`` opening one, a
    call with no identity creating a session). Another user's session is no such case: it
    answers :class:`UnknownSessionError`, as an id nobody runs."""

    code = "forbidden"
    http_status = 403


class HistoryNotFoundError(AdapterError, LookupError):
    """No transcript for that session id."""

    code = "history_not_found"
    http_status = 404


class BackendUnavailableError(AdapterError):
    """The backend cannot reach its sessions for now (a cluster gateway that lost its
    connection to NATS, a worker that does not answer). Nothing is lost: retry later, and
    subscribe again with ``after_seq`` — a subscription the outage ended raises this too."""

    code = "unavailable"
    http_status = 503


@dataclass(frozen=True)
class ErrorInfo:
    """What a client is told about an error: a code, an HTTP status and a message."""

    code: str
    http_status: int
    message: str

    @property
    def internal(self) -> bool:
        """A bug, not something the client did or the CLI did: log it where it happened."""
        return self.code == "internal"


def describe(exc: BaseException) -> ErrorInfo:
    """The answer to ``exc`` for any front end.

    The adapter's errors answer with their own ``code`` and ``http_status``; a
    :class:`claudecode.UsageError` is ``bad_request`` / 409 (the call does not fit the
    session's state); any other error of the client library is the CLI failing
    (``cli_error`` / 502, its message as the library wrote it); everything else is
    ``internal`` / 500 with no detail.
    """
    if isinstance(exc, AdapterError):
        return ErrorInfo(exc.code, exc.http_status, str(exc))
    if isinstance(exc, UsageError):
        return ErrorInfo("bad_request", 409, str(exc))
    if isinstance(exc, ClaudeCodeError):
        return ErrorInfo("cli_error", 502, str(exc))
    return ErrorInfo("internal", 500, "internal error (see the server log)")
