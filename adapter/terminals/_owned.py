"""Terminal sessions seen by the current caller: the ownership layer of :mod:`adapter.owners`
for a :class:`TerminalManager`.

A terminal is a program (often a shell) running as the server's own user, so it matters more
than a chat session who may open and reach one. :class:`OwnedTerminals` wraps the manager
the terminal routes and the WebSocket front end use:

* ``start`` is refused (:class:`~adapter.owners.ForbiddenError`, 403 / ``forbidden``) to a
  user without ``terminals``; otherwise the terminal belongs to its starter;
* ``list`` and the change listeners show the caller's own terminals; any call naming a
  terminal of someone else raises exactly what an unknown id raises
  (:class:`UnknownTerminalError`);
* an admin reaches every terminal (each action on someone else's is audited); starts, stops
  (who stopped it) and ends (``terminal_end``: why, for its owner, whoever or whatever
  ended it) are audited.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..audit import AuditLog
from ..owners import SERVER, ForbiddenError, current_caller, may_see
from ._errors import UnknownTerminalError
from ._manager import TerminalManager
from ._types import TerminalInfo
from ._viewer import TerminalViewer

__all__ = ("OwnedTerminals",)


class OwnedTerminals:
    """``manager`` seen by the current caller (see the module docs)."""

    def __init__(self, manager: TerminalManager, *, audit: AuditLog | None = None) -> None:
        self.manager = manager
        self.audit = audit or AuditLog()
        self._owners: dict[str, str] = {}
        #: Terminals whose end was audited (one record each, however many changes follow).
        self._ended: set[str] = set()
        manager.add_listener(self._changed)

    def _changed(self, info: TerminalInfo) -> None:
        owner = self._owners.get(info.id)
        if info.active or owner is None or info.id in self._ended:
            return
        self._ended.add(info.id)
        self.audit.write(
            "terminal_end",
            user=owner,
            session=info.id,
            reason=info.exit_reason,
            exit_code=info.exit_code,
            signal=info.exit_signal_name,
        )

    def owner(self, session_id: str) -> str | None:
        """Who started the terminal (``None``: not through this layer)."""
        return self._owners.get(session_id)

    def _check(self, session_id: str, operation: str) -> None:
        caller = current_caller()
        principal = caller.principal
        owner = self._owners.get(session_id)
        if not may_see(principal, owner):
            raise UnknownTerminalError(session_id)
        if principal is not SERVER and owner != principal.name:
            self.manager.get(session_id)  # an unknown id is not an admin action
            self.audit.write(
                "admin_action",
                user=principal.name,
                via=caller.via,
                operation=operation,
                session=session_id,
                owner=owner,
            )

    # -- what the front ends call ------------------------------------------------------

    def agents(self) -> builtins.list[Any]:
        """The declared agents (see :meth:`TerminalManager.agents`)."""
        return self.manager.agents()

    async def start(self, session_id: str, agent: str, **options: Any) -> TerminalInfo:
        """Start a terminal for the caller (see :meth:`TerminalManager.start`)."""
        caller = current_caller()
        principal = caller.principal
        if not principal.terminals:
            self.audit.write("terminal_refused", user=principal.name, via=caller.via, agent=agent)
            raise ForbiddenError(f"user {principal.name!r} may not open terminal sessions")
        info = await self.manager.start(session_id, agent, **options)
        # Forget the owners of terminals the manager forgot (it keeps a few ended ones).
        known = {i.id for i in self.manager.list()}
        for gone in [sid for sid in self._owners if sid not in known]:
            del self._owners[gone]
            self._ended.discard(gone)
        self._owners[info.id] = principal.name
        self.audit.write(
            "terminal_start", user=principal.name, via=caller.via, session=info.id, agent=agent
        )
        return info

    def get(self, session_id: str) -> TerminalInfo:
        """One terminal's snapshot."""
        self._check(session_id, "info")
        return self.manager.get(session_id)

    def list(self) -> builtins.list[TerminalInfo]:
        """The caller's terminals."""
        principal = current_caller().principal
        return [i for i in self.manager.list() if may_see(principal, self._owners.get(i.id))]

    def is_known(self, session_id: str) -> bool:
        """Whether ``session_id`` names a terminal the caller may reach."""
        return any(info.id == session_id for info in self.list())

    async def stop(self, session_id: str) -> TerminalInfo:
        """Stop a terminal of the caller's."""
        self._check(session_id, "stop")
        info = await self.manager.stop(session_id)
        caller = current_caller()
        self.audit.write(
            "terminal_stop", user=caller.principal.name, via=caller.via, session=session_id
        )
        return info

    def remove(self, session_id: str) -> TerminalInfo:
        """Take an ended terminal of the caller's off the list (see
        :meth:`TerminalManager.remove`: a running one is refused)."""
        self._check(session_id, "remove")
        info = self.manager.remove(session_id)
        self._owners.pop(session_id, None)
        self._ended.discard(session_id)
        caller = current_caller()
        self.audit.write(
            "terminal_remove", user=caller.principal.name, via=caller.via, session=session_id
        )
        return info

    async def send_input(self, session_id: str, data: bytes | str) -> None:
        """Type into a terminal of the caller's."""
        self._check(session_id, "input")
        await self.manager.send_input(session_id, data)

    async def resize(self, session_id: str, cols: int, rows: int) -> bool:
        """Resize a terminal of the caller's."""
        self._check(session_id, "resize")
        return await self.manager.resize(session_id, cols, rows)

    async def signal(self, session_id: str, sig: int) -> bool:
        """Signal the foreground job of a terminal of the caller's."""
        self._check(session_id, "signal")
        return await self.manager.signal(session_id, sig)

    def attach(
        self, session_id: str, *, scrollback: int | None = None, max_bytes: int | None = None
    ) -> AbstractAsyncContextManager[TerminalViewer]:
        """View a terminal of the caller's."""
        self._check(session_id, "attach")
        return self.manager.attach(session_id, scrollback=scrollback, max_bytes=max_bytes)

    def add_listener(self, listener: Callable[[TerminalInfo], None]) -> Callable[[], None]:
        """Changes of the terminals the caller (as of now) may see."""
        principal = current_caller().principal

        def visible(info: TerminalInfo) -> None:
            if may_see(principal, self._owners.get(info.id)):
                listener(info)

        return self.manager.add_listener(visible)
