"""The exception tree of the `claudecode` package.

Every exception this package raises derives from :class:`ClaudeCodeError`. The tree says
who is to blame: the caller (fix your code), the CLI (it misbehaved, crashed or is missing),
or the control plane (the CLI answered a request with an error, or never answered)::

    ClaudeCodeError
    ├── UsageError                  the caller misused the API (fix the calling code)
    │   └── SessionClosedError      the session was already closed
    ├── CLIError                    the CLI process is missing, would not start, or died
    │   ├── CLINotFoundError        no executable in any searched place
    │   ├── CLIStartError           spawn failed, or no output before the watchdog fired
    │   └── CLIExitedError          the process exited while needed (exit code, stderr
    │                               tail): any code but 0, or 0 in the middle of a turn
    ├── RemoteProtocolError         the CLI wrote something we cannot accept
    │   └── LineTooLongError        a stdout line exceeded ``max_line_bytes``
    └── ControlError                an outbound control request failed
        ├── ControlTimeoutError     no answer (or stdin not taking ours) within the timeout
        └── ControlRequestError     the CLI answered with an error (its text and code)

Malformed or unknown *lines* are not exceptions: they arrive as typed messages
(:class:`~claudecode.messages.MalformedLine`, :class:`~claudecode.messages.UnknownMessage`)
and the stream goes on.
"""

from __future__ import annotations

__all__ = (
    "CLIError",
    "CLIExitedError",
    "CLINotFoundError",
    "CLIStartError",
    "ClaudeCodeError",
    "ControlError",
    "ControlRequestError",
    "ControlTimeoutError",
    "LineTooLongError",
    "RemoteProtocolError",
    "SessionClosedError",
    "UsageError",
)


class ClaudeCodeError(Exception):
    """Base class of every exception raised by `claudecode`."""


class UsageError(ClaudeCodeError):
    """Raised when the caller misuses the API (wrong state, wrong argument, wrong reply)."""


class SessionClosedError(UsageError):
    """Raised when a closed session is asked to send or receive."""


class CLIError(ClaudeCodeError):
    """Raised when the CLI process is missing, cannot start, or has died."""


class CLINotFoundError(CLIError):
    """Raised when no Claude Code executable is found; ``searched`` lists every place tried."""

    def __init__(self, message: str, searched: list[str] | None = None) -> None:
        super().__init__(message)
        self.searched: list[str] = list(searched or [])


class CLIStartError(CLIError):
    """Raised when the CLI cannot be spawned or shows no sign of life before the watchdog."""

    def __init__(self, message: str, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail


class CLIExitedError(CLIError):
    """Raised when the CLI process exited while something still waited on it.

    Also when it exited with code 0 in the middle of a turn (a prompt without its result):
    then ``exit_code`` is 0 and the message says so.

    Carries the exit code (negative for a signal, as in :mod:`subprocess`) and the last
    lines the CLI wrote on stderr.
    """

    def __init__(self, message: str, exit_code: int | None, stderr_tail: str = "") -> None:
        detail = message
        if stderr_tail:
            detail = f"{message}; stderr tail:\n{stderr_tail}"
        super().__init__(detail)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


class RemoteProtocolError(ClaudeCodeError):
    """Raised when the CLI writes something that breaks the protocol beyond one line."""


class LineTooLongError(RemoteProtocolError):
    """Raised by the line framer when a line grows past ``max_line_bytes``."""

    def __init__(self, message: str, max_line_bytes: int) -> None:
        super().__init__(message)
        self.max_line_bytes = max_line_bytes


class ControlError(ClaudeCodeError):
    """Raised when an outbound control request does not succeed."""


class ControlTimeoutError(ControlError):
    """Raised when the CLI does not answer a control request within the timeout, or does not
    take (read) the request or our answer to one of its requests within it."""

    def __init__(self, subtype: str, timeout: float, message: str | None = None) -> None:
        super().__init__(
            message or f"control request {subtype!r} got no answer within {timeout:g} s"
        )
        self.subtype = subtype
        self.timeout = timeout


class ControlRequestError(ControlError):
    """Raised when the CLI answers a control request with an error.

    ``message`` is the CLI's text; ``error_code`` its machine-readable code when it sends one
    (2.1.332 does: ``invalid_mode``, ``unsupported_request``).
    """

    def __init__(self, subtype: str, message: str, error_code: str | None = None) -> None:
        super().__init__(f"control request {subtype!r} failed: {message}")
        self.subtype = subtype
        self.error_message = message
        self.error_code = error_code
