"""What :class:`~adapter.local.LocalBackend` keeps beside its sessions: the UI state of a
session, its first title, the MCP servers of a config, and a watcher's bounded queue."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import anyio

from .backend import SessionInfo, SessionState
from .session import AgentSession

__all__ = ("Watcher", "mcp_servers", "prompt_title", "ui_state")

_TITLE_LENGTH = 80


def ui_state(session: AgentSession) -> SessionState:
    """What a UI shows for ``session`` (the :data:`~adapter.backend.SessionState`): an open
    permission request makes it ``waiting`` whatever runs."""
    status = session.status
    if status == "terminated":
        return "closed"
    if status == "errored":
        return "errored"
    if status == "starting":
        return "starting"
    if session.pending_permissions:
        return "waiting"
    if status == "active":
        return "busy"
    return "idle"


def prompt_title(text: str) -> str | None:
    """A session's first title: the first line of its first prompt, cut at 80 characters."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if not line:
        return None
    return line if len(line) <= _TITLE_LENGTH else line[: _TITLE_LENGTH - 1] + "…"


def mcp_servers(config: str | os.PathLike[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """The servers of an ``--mcp-config`` value (a mapping, a JSON string or a file)."""
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config.get("mcpServers", config))
    text = os.fspath(config)
    if text.lstrip().startswith("{"):
        loaded = json.loads(text)
    else:
        with open(text, encoding="utf-8") as fh:
            loaded = json.load(fh)
    return dict(loaded.get("mcpServers", {}))


class Watcher:
    """One watcher's pending snapshots: at most one per session, oldest change first."""

    def __init__(self) -> None:
        self.pending: OrderedDict[str, SessionInfo] = OrderedDict()
        self.wakeup = anyio.Event()
        self.ended = False

    def push(self, info: SessionInfo) -> None:
        self.pending.pop(info.id, None)
        self.pending[info.id] = info
        self.wakeup.set()

    def end(self) -> None:
        self.ended = True
        self.wakeup.set()

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> SessionInfo:
        while not self.pending:
            if self.ended:
                raise StopAsyncIteration
            await self.wakeup.wait()
            self.wakeup = anyio.Event()
        _, info = self.pending.popitem(last=False)
        return info
