"""The CLI's ``system`` lines and prompt lifecycle, for :class:`adapter.translate.Translator`
(a base class, above :class:`~adapter._turn_end.TurnEnding`).

``system/init`` opens a turn and announces the session once (a
:class:`~adapter.events.SessionStatus`; again when its id or model changes), a permission mode
that changes becomes :class:`~adapter.events.ModeChanged`, the task lines become
:class:`~adapter.events.TaskEvent` and track background tasks, and ``command_lifecycle``
says which of our prompts started (see "Outstanding work" in :mod:`adapter.translate`).
The state lives on the translator.
"""

from __future__ import annotations

from collections import deque

from claudecode.messages import (
    CommandLifecycle,
    SystemInit,
    SystemMessage,
    SystemStatus,
    SystemTaskNotification,
    SystemTaskStarted,
)

from . import _plain as plain
from ._turn_end import TurnEnding
from ._turn_state import BoundedMap
from .events import Event, McpServer, ModeChanged, SessionStatus

__all__ = ("SystemEvents",)


class SystemEvents(TurnEnding):
    """``system`` lines and ``command_lifecycle``; the state lives on the translator."""

    _resumed: bool
    _announced: bool
    _session_id: str | None
    _mode: str | None
    _cli_version: str | None
    _cwd: str | None
    _tools: list[str]
    _mcp: list[McpServer]
    _agents: BoundedMap[str, str]
    _task_tools: BoundedMap[str, str]
    _awaiting: deque[str]
    _starting: bool
    _lifecycle_seen: bool

    def _on_lifecycle(self, msg: CommandLifecycle) -> list[Event]:
        self._lifecycle_seen = True
        command = msg.command_uuid
        if msg.state != "queued" and command is not None and command in self._awaiting:
            self._awaiting.remove(command)
            if msg.state == "started" and not self._turn_open:
                self._starting = True
        return []

    def _status(self) -> SessionStatus:
        return SessionStatus(
            status="resumed" if self._resumed else "new",
            cli_session_id=self._session_id,
            cli_version=self._cli_version,
            model=self._model,
            permission_mode=self._mode,
            cwd=self._cwd,
            tools=list(self._tools),
            mcp_servers=list(self._mcp),
        )

    def _on_init(self, msg: SystemInit) -> list[Event]:
        self._open()
        self._cli_version = msg.claude_code_version or self._cli_version
        self._cwd = msg.cwd or self._cwd
        self._tools = list(msg.tools)
        self._mcp = [McpServer(name=s.name, status=s.status) for s in msg.mcp_servers]
        self._context.use_model(msg.model)
        if not self._announced:
            self._announced = True
            self._session_id = msg.session_id or self._session_id
            self._model = msg.model or self._model
            self._mode = msg.permission_mode or self._mode
            return [self._status()]
        events: list[Event] = []
        changed_session = bool(msg.session_id) and msg.session_id != self._session_id
        changed_model = bool(msg.model) and msg.model != self._model
        self._session_id = msg.session_id or self._session_id
        self._model = msg.model or self._model
        if changed_model or changed_session:
            events.append(self._status())
        if msg.permission_mode and msg.permission_mode != self._mode:
            self._mode = msg.permission_mode
            events.append(ModeChanged(mode=msg.permission_mode))
        return events

    def _on_status(self, msg: SystemStatus) -> list[Event]:
        if msg.status == "requesting":
            self._open()
        if msg.permission_mode and msg.permission_mode != self._mode:
            self._mode = msg.permission_mode
            return [ModeChanged(mode=msg.permission_mode)]
        return []

    def _on_task(self, msg: SystemMessage) -> list[Event]:
        if isinstance(msg, SystemTaskStarted) and msg.task_id and msg.tool_use_id:
            self._task_tools.set(msg.task_id, msg.tool_use_id)
            self._agents.set(msg.task_id, msg.tool_use_id)
        if isinstance(msg, SystemTaskStarted) and msg.task_id and msg.is_backgrounded:
            self._background.set(msg.task_id, msg.tool_use_id)
        elif isinstance(msg, SystemTaskNotification) and msg.task_id in self._background:
            self._background.pop(str(msg.task_id))
            self._self_start_expected = True
        task_id = getattr(msg, "task_id", None)
        known = self._task_tools.get(task_id) if isinstance(task_id, str) else None
        return [plain.task_event(msg, known)]
