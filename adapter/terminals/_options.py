"""What every session of a manager shares: its :class:`SessionOptions` and the
:class:`ParseBudget` that bounds how much of the event loop screen parsing takes."""

from __future__ import annotations

import anyio

__all__ = ("ParseBudget", "SessionOptions")

#: Screen parsing may take at most 1 / (1 + this) of the loop (all sessions together).
_PARSE_COST_FACTOR = 9.0


class ParseBudget:
    """The screen parsing share of the event loop, shared by every session of a manager.

    pyte parses some hundreds of KB/s on a loaded machine: with many busy terminals, parsing
    every screen as fast as output arrives would starve keystrokes and viewers. Each slice
    parsed moves ``next_slot`` forward by ``factor`` times its cost, and the next slice (of
    any session) waits for it: parsing takes at most ``1 / (1 + factor)`` of the loop.
    Screens that fall behind skip to their newest output (see TerminalScreen).
    """

    __slots__ = ("factor", "next_slot")

    def __init__(self, factor: float = _PARSE_COST_FACTOR) -> None:
        self.factor = factor
        self.next_slot = float("-inf")

    async def wait(self) -> None:
        """Wait for this manager's next parsing slot."""
        delay = self.next_slot - anyio.current_time()
        if delay > 0:
            await anyio.sleep(delay)

    def spent(self, started: float, cost: float) -> None:
        """Account a slice that cost ``cost`` seconds of loop time."""
        self.next_slot = max(self.next_slot, started) + cost * (1 + self.factor)


class SessionOptions:
    """Per-manager settings every session shares (see :class:`~terminals.TerminalManager`)."""

    __slots__ = (
        "budget",
        "screen",
        "scrollback",
        "spawn_timeout",
        "stop_grace",
        "viewer_max_bytes",
    )

    def __init__(
        self,
        *,
        screen: bool,
        scrollback: int,
        spawn_timeout: float | None,
        stop_grace: float,
        viewer_max_bytes: int,
    ) -> None:
        self.screen = screen
        self.scrollback = scrollback
        self.spawn_timeout = spawn_timeout
        self.stop_grace = stop_grace
        self.viewer_max_bytes = viewer_max_bytes
        self.budget = ParseBudget()
