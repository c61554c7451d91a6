"""Loggers for library code: structlog wrapped around a stdlib logger, never configured here.

A bare ``structlog.get_logger()`` prints to stdout when nobody configured structlog, which
would corrupt a host that speaks a protocol on its stdout. Wrapping a stdlib logger keeps
debug and info silent until the application configures :mod:`logging`.
"""

from __future__ import annotations

import logging

import structlog

__all__ = ("get_logger",)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """Return a structlog logger that writes through ``logging.getLogger(name)``."""
    logger: structlog.stdlib.BoundLogger = structlog.wrap_logger(
        logging.getLogger(name), wrapper_class=structlog.stdlib.BoundLogger
    )
    return logger
