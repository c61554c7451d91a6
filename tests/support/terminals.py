"""Waiting on what a terminal session shows (its rendered screen)."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from adapter.terminals import TerminalManager

from .timeouts import HANG_GUARD


async def wait_for_screen(
    terminals: TerminalManager,
    session_id: str,
    predicate: Callable[[str], bool],
    *,
    timeout: float = HANG_GUARD,
) -> str:
    """Poll the session's rendered screen until ``predicate(text)`` holds; the text."""
    text = ""
    with anyio.move_on_after(timeout):
        while True:
            text = terminals.screen_text(session_id)
            if predicate(text):
                return text
            await anyio.sleep(0.05)
    raise AssertionError(f"screen of {session_id} never matched; it shows:\n{text}")


async def wait_for_text(
    terminals: TerminalManager, session_id: str, needle: str, *, timeout: float = HANG_GUARD
) -> str:
    """Poll until ``needle`` is on the session's screen."""
    return await wait_for_screen(terminals, session_id, lambda t: needle in t, timeout=timeout)


async def wait_for_prompt(terminals: TerminalManager, session_id: str) -> str:
    """Poll until the shell shows a prompt (``$`` or ``#`` ends the last line)."""
    return await wait_for_screen(terminals, session_id, lambda t: t.rstrip().endswith(("$", "#")))
