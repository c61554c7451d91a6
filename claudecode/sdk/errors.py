"""``claude-agent-sdk``'s error classes, each also one of the client's typed errors.

``except ProcessError`` (the SDK's spelling) and ``except CLIExitedError`` (ours) both
catch a CLI that died: the drop-in raises classes that inherit from both.
"""

from __future__ import annotations

from typing import Any

from .. import errors as client_errors

__all__ = (
    "CLIConnectionError",
    "CLIJSONDecodeError",
    "CLINotFoundError",
    "ClaudeSDKError",
    "MessageParseError",
    "ProcessError",
    "ResultError",
    "from_client_error",
)


class ClaudeSDKError(client_errors.ClaudeCodeError):
    """Base of every error of the drop-in API."""


class CLIConnectionError(ClaudeSDKError):
    """The CLI could not be reached or started, or the client is not connected."""


class CLINotFoundError(CLIConnectionError, client_errors.CLINotFoundError):
    """No Claude Code CLI was found."""

    def __init__(self, message: str = "Claude Code not found", cli_path: str | None = None):
        if cli_path:
            message = f"{message}: {cli_path}"
        client_errors.CLINotFoundError.__init__(self, message)


class ProcessError(ClaudeSDKError, client_errors.CLIExitedError):
    """The CLI process failed; ``exit_code`` and ``stderr`` say how."""

    def __init__(self, message: str, exit_code: int | None = None, stderr: str | None = None):
        self.stderr = stderr
        if exit_code is not None:
            message = f"{message} (exit code: {exit_code})"
        if stderr:
            message = f"{message}\nError output: {stderr}"
        client_errors.CLIExitedError.__init__(self, message, exit_code, stderr or "")


class ResultError(ProcessError):
    """The CLI exited non-zero after reporting an error result (``error_max_turns``,
    ``error_max_budget_usd``, an API failure...); the result's fields are kept here."""

    def __init__(
        self, message: str, data: dict[str, Any] | None = None, exit_code: int | None = None
    ):
        data = data if isinstance(data, dict) else {}
        self.data = data
        self.subtype: str | None = data.get("subtype")
        self.errors: list[str] = [e for e in data.get("errors") or [] if isinstance(e, str)]
        self.result: str | None = data.get("result")
        self.api_error_status: int | None = data.get("api_error_status")
        self.terminal_reason: str | None = data.get("terminal_reason")
        self.session_id: str | None = data.get("session_id")
        super().__init__(message, exit_code=exit_code)

    @classmethod
    def from_result(cls, data: dict[str, Any], exit_code: int | None) -> ResultError:
        """The error for a ``result`` line with ``is_error`` (its most telling text)."""
        errors = [e.strip() for e in data.get("errors") or [] if isinstance(e, str) and e.strip()]
        if errors:
            text = "; ".join(errors)
        elif isinstance(data.get("result"), str) and data["result"]:
            text = data["result"]
        elif data.get("subtype") not in (None, "success"):
            text = str(data["subtype"])
        else:
            text = f"API error status {data.get('api_error_status')}"
        return cls(f"Claude Code returned an error result: {text}", data, exit_code)


class CLIJSONDecodeError(ClaudeSDKError):
    """Kept for imports; the client never raises it (bad lines are skipped, not fatal)."""

    def __init__(self, line: str, original_error: Exception):
        self.line = line
        self.original_error = original_error
        super().__init__(f"Failed to decode JSON: {line[:100]}...")


class MessageParseError(ClaudeSDKError):
    """Kept for imports; the client never raises it (unknown messages are skipped)."""

    def __init__(self, message: str, data: dict[str, Any] | None = None):
        self.data = data
        super().__init__(message)


def from_client_error(exc: client_errors.ClaudeCodeError) -> ClaudeSDKError | None:
    """The drop-in class for one of the client's errors (``None``: raise it as it is)."""
    if isinstance(exc, ClaudeSDKError):
        return None
    if isinstance(exc, client_errors.CLINotFoundError):
        return CLINotFoundError(str(exc))
    if isinstance(exc, client_errors.CLIExitedError):
        return ProcessError(str(exc), exc.exit_code, exc.stderr_tail or None)
    if isinstance(exc, client_errors.CLIStartError):
        return CLIConnectionError(str(exc))
    return None
