"""Waiting on the cluster's eventually consistent state in tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:  # pragma: no cover
    from adapter.backend import SessionBackend, SessionInfo


async def eventually(check: Callable[[], object], guard: float = 60) -> None:
    """Return once ``check()`` is true; fail after ``guard`` seconds (a hang guard, not a
    timing: scale it for a loaded machine)."""
    with anyio.fail_after(guard):
        while True:
            if check():
                return
            await anyio.sleep(0.05)


async def until_moved(
    backend: SessionBackend, session_id: str, owner: str, guard: float = 60
) -> SessionInfo:
    """The session's info once it runs on ``owner`` again after being lost (a hang guard of
    ``guard`` seconds, not a timing)."""
    with anyio.fail_after(guard):
        while True:
            now = await backend.info(session_id)
            if now.owner == owner and now.status != "lost":
                return now
            await anyio.sleep(0.05)
