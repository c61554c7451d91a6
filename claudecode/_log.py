"""Loggers for library code: structlog wrapped around a stdlib logger, never configured here.

A bare ``structlog.get_logger()`` prints to stdout when nobody configured structlog, which
would corrupt a host that speaks a protocol on its stdout. Wrapping a stdlib logger keeps
debug and info silent until the application configures :mod:`logging`; whatever structlog
configuration the application has still processes our events.

Disabled levels cost almost nothing: the level is checked on the stdlib logger *before*
structlog runs its processor chain (which it would otherwise do for every call, only for
``logging`` to drop the result).
"""

from __future__ import annotations

import logging
from typing import Any

import structlog

__all__ = ("get_logger",)


class _LevelCheckedLogger(structlog.stdlib.BoundLogger):
    """A stdlib BoundLogger that skips its processors for levels the logger would drop."""

    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._logger.isEnabledFor(logging.DEBUG):
            return None
        return super().debug(event, *args, **kw)

    def info(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._logger.isEnabledFor(logging.INFO):
            return None
        return super().info(event, *args, **kw)


class _QuietWhenDisabled:
    """The lazy proxy ``structlog.wrap_logger`` returns, with ``debug`` / ``info`` checked on
    the stdlib logger *before* the proxy assembles a bound logger (it does for every call
    unless structlog caches loggers: ~3 µs for a line that is then dropped). Everything
    else goes to the proxy."""

    __slots__ = ("_proxy", "_stdlib")

    def __init__(self, stdlib: logging.Logger, proxy: Any) -> None:
        self._stdlib = stdlib
        self._proxy = proxy

    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._stdlib.isEnabledFor(logging.DEBUG):
            return None
        return self._proxy.debug(event, *args, **kw)

    def info(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._stdlib.isEnabledFor(logging.INFO):
            return None
        return self._proxy.info(event, *args, **kw)

    def __getattr__(self, name: str) -> Any:
        if name in _QuietWhenDisabled.__slots__:  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self._proxy, name)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """Return a structlog logger that writes through ``logging.getLogger(name)``."""
    stdlib = logging.getLogger(name)
    proxy = structlog.wrap_logger(stdlib, wrapper_class=_LevelCheckedLogger)
    logger: structlog.stdlib.BoundLogger = _QuietWhenDisabled(stdlib, proxy)  # type: ignore[assignment]
    return logger
