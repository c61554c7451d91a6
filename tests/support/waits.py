"""Waiting for a condition or an event, bounded by the hang guard.

Use these instead of ``while not ...: sleep(...)`` loops: they fail with a message that
says what never happened, and never wait longer than the guard.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any, TypeVar

import anyio

from adapter.events import Complete, Event

from .timeouts import HANG_GUARD

T = TypeVar("T")

#: How often a condition is checked: often enough that tests don't idle, rare enough that
#: polling never competes with the code under test.
POLL = 0.02


async def eventually(
    check: Callable[[], object | Awaitable[object]],
    guard: float = HANG_GUARD,
    *,
    poll: float = POLL,
    what: str = "",
) -> Any:
    """Return ``check()``'s first true result (``check`` may be async); fail after ``guard``
    seconds (a hang guard, not a timing)."""
    try:
        with anyio.fail_after(guard):
            while True:
                result = check()
                if inspect.isawaitable(result):
                    result = await result
                if result:
                    return result
                await anyio.sleep(poll)
    except TimeoutError:
        raise AssertionError(f"never true within {guard}s: {what or check!r}") from None


def wait_until(
    check: Callable[[], T],
    guard: float = HANG_GUARD,
    *,
    poll: float = POLL,
    what: str = "",
) -> T:
    """The blocking :func:`eventually`, for threads, subprocesses and sync clients: return
    ``check()``'s first true result; fail after ``guard`` seconds."""
    deadline = time.monotonic() + guard
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"never true within {guard}s: {what or check!r}")
        time.sleep(poll)


async def until(
    events: AsyncIterable[T],
    stop: Callable[[T], object],
    *,
    into: list[T] | None = None,
    guard: float = HANG_GUARD,
) -> list[T]:
    """Read ``events`` up to and with the first one ``stop`` accepts; return them all (or
    append them to ``into``). Fails if the stream ends first or after ``guard`` seconds."""
    seen: list[T] = [] if into is None else into
    with anyio.fail_after(guard):
        async for event in events:
            seen.append(event)
            if stop(event):
                return seen
    raise AssertionError(f"the events ended first: {seen[-5:]!r}")


async def until_event(
    events: AsyncIterable[Event],
    kind: type[Event],
    *,
    into: list[Event] | None = None,
    guard: float = HANG_GUARD,
) -> list[Event]:
    """The events read up to and with the first of type ``kind``."""
    return await until(events, lambda event: isinstance(event, kind), into=into, guard=guard)


async def until_complete(
    events: AsyncIterable[Event],
    *,
    into: list[Event] | None = None,
    guard: float = HANG_GUARD,
) -> list[Event]:
    """The events read up to and with the turn's :class:`~adapter.events.Complete`."""
    return await until_event(events, Complete, into=into, guard=guard)
