"""What an exception raised by a request becomes: an ``error`` frame's code and message.

Expected failures (an unknown session or permission request, too many sessions, a stored
CLI session another session holds, a bad request, an unreachable backend, the CLI failing)
keep their message; anything else is ``internal`` with no details (the endpoint logs it).
"""

from __future__ import annotations

import typing

from ...errors import describe
from .protocol import ErrorCode

__all__ = ("error_of",)

_CODES: frozenset[str] = frozenset(typing.get_args(ErrorCode))


def error_of(exc: BaseException) -> tuple[ErrorCode, str]:
    """The error code and message an ``error`` frame reports for ``exc``
    (:func:`adapter.errors.describe`, the mapping every front end shares)."""
    info = describe(exc)
    code = info.code if info.code in _CODES else "bad_request"
    return typing.cast(ErrorCode, code), info.message
