"""claudecode: a typed, async client for the Claude Code CLI's stream-json protocol."""

from ._version import __version__
from .errors import (
    ClaudeCodeError,
    CLIError,
    CLIExitedError,
    CLINotFoundError,
    CLIStartError,
    ControlError,
    ControlRequestError,
    ControlTimeoutError,
    LineTooLongError,
    RemoteProtocolError,
    SessionClosedError,
    UsageError,
)

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
    "__version__",
)
