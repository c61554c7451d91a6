"""Waiting on the cluster's eventually consistent state in tests."""

from __future__ import annotations

from collections.abc import Callable

import anyio


async def eventually(check: Callable[[], object], guard: float = 60) -> None:
    """Return once ``check()`` is true; fail after ``guard`` seconds (a hang guard, not a
    timing: scale it for a loaded machine)."""
    with anyio.fail_after(guard):
        while True:
            if check():
                return
            await anyio.sleep(0.05)
