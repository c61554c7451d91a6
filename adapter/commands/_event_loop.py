"""The event loop the server entry points (``serve``, ``worker``) run on.

Only entry points choose a loop; libraries run on whatever loop (or trio) their caller
runs. ``auto`` (the default) takes uvloop when it is installed (the ``server`` extra
installs it on the platforms it supports) and asyncio's own loop otherwise; ``asyncio``
and ``uvloop`` ask for one. uvloop is libuv under asyncio's API: its sockets, transports,
timers and ``add_reader`` cost less CPU per call, which is what a worker (pipes, NATS) and
a server (WebSocket writes) spend much of theirs on (BENCHMARKS.md, the NATS hop).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = (
    "LOOP_CHOICES",
    "LOOP_ENV_VAR",
    "add_loop_argument",
    "loop_factory",
    "run",
)

T = TypeVar("T")

#: What ``--loop`` accepts.
LOOP_CHOICES = ("auto", "asyncio", "uvloop")

#: The environment variable ``--loop`` defaults to (then ``auto``).
LOOP_ENV_VAR = "CLAUDECODE_BRIDGE_LOOP"

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def add_loop_argument(parser: argparse._ActionsContainer) -> None:
    """``--loop {auto,asyncio,uvloop}``."""
    parser.add_argument(
        "--loop",
        choices=LOOP_CHOICES,
        default=None,
        help=f"event loop: uvloop when installed (auto, the default; or ${LOOP_ENV_VAR}), "
        "asyncio's own, or uvloop (an error if it is not installed)",
    )


def loop_factory(choice: str | None) -> LoopFactory | None:
    """The factory of the loop ``choice`` names (``None``: ``$CLAUDECODE_BRIDGE_LOOP``,
    else ``auto``); ``None`` means asyncio's default loop. Raises :class:`ValueError` for an
    unknown choice and :class:`RuntimeError` when ``uvloop`` is asked for but missing."""
    choice = choice or os.environ.get(LOOP_ENV_VAR) or "auto"
    if choice not in LOOP_CHOICES:
        raise ValueError(f"unknown event loop {choice!r}: use one of {', '.join(LOOP_CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise RuntimeError(
                "the uvloop event loop is not installed: pip install uvloop (or --loop asyncio)"
            ) from None
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T], factory: LoopFactory | None) -> T:
    """``asyncio.run(main)`` on a loop from ``factory`` (``None``: asyncio's own)."""
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
