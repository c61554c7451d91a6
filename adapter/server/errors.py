"""JSON error answers: every 4xx (and the rare 5xx) is ``{"error": message, ...}``.

Library errors map to statuses through :func:`adapter.errors.describe` (the one mapping the
WebSocket protocol and ACP use too), so a route just lets them propagate: unknown sessions and
permission requests are 404, too many sessions 429, any other :class:`claudecode.UsageError`
409 (the call does not fit the session's state), an unreachable backend 503, a CLI that cannot
start 502. Anything unexpected is logged and answered 500 with no detail: a client never sees
a stack trace.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from claudecode import ClaudeCodeError
from claudecode.internal import get_logger

from ..errors import describe

__all__ = ("exception_handlers", "json_error")

_log = get_logger("claudecode.adapter.server")


def json_error(status: int, message: str, **extra: Any) -> JSONResponse:
    """A JSON error answer ``{"error": message, **extra}``."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in (204, 304):
        return Response(status_code=exc.status_code, headers=exc.headers)
    response = json_error(exc.status_code, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _library_error(request: Request, exc: Exception) -> Response:
    info = describe(exc)
    if info.code == "cli_error":
        _log.warning("server.cli_failed", path=request.url.path, error=str(exc))
        return json_error(info.http_status, f"the Claude Code CLI failed: {info.message}")
    return json_error(info.http_status, info.message)


async def _unexpected(request: Request, exc: Exception) -> Response:
    _log.error("server.internal_error", path=request.url.path, error=repr(exc))
    return json_error(500, "internal server error")


#: Starlette ``exception_handlers`` that answer every error as JSON.
exception_handlers: dict[Any, Any] = {
    HTTPException: _http_exception,
    ClaudeCodeError: _library_error,
    Exception: _unexpected,
}
