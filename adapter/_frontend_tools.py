"""Tools a front end runs itself, offered to Claude as an in-process MCP server.

When Claude calls one, the MCP ``tools/call`` arrives with the ``tool_use`` id in its
``_meta`` (``claudecode/toolUseId``); the call waits until the front end reports the
result through :meth:`FrontendTools.answer` (an answer that comes first is kept for it).
"""

from __future__ import annotations

import contextvars
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import anyio

from claudecode import SdkMcpServer

from .backend import FRONTEND_TOOL_SERVER

__all__ = ("FrontendTools",)

_TOOL_USE_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "claudecode_frontend_tool_use_id", default=None
)

_MAX_EARLY = 256


class FrontendTools(SdkMcpServer):
    """The frontend tools of one session (``{name: {"description", "parameters"}}``)."""

    def __init__(self, tools: Mapping[str, Mapping[str, Any]], *, timeout: float | None) -> None:
        super().__init__(FRONTEND_TOOL_SERVER, tool_timeout=timeout)
        self._waiting: dict[str, anyio.Event] = {}
        self._answers: OrderedDict[str, tuple[str, bool]] = OrderedDict()
        for name, spec in tools.items():
            schema = spec.get("parameters") if isinstance(spec, Mapping) else None
            if not isinstance(schema, Mapping) or not schema:
                schema = {"type": "object", "properties": {}}
            description = (
                str(spec.get("description") or name) if isinstance(spec, Mapping) else name
            )
            self.add_tool(name, description, schema, self._wait_for_answer)

    async def handle(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one MCP message, knowing which ``tool_use`` a call belongs to."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        tool_use_id = meta.get("claudecode/toolUseId") if isinstance(meta, Mapping) else None
        token = _TOOL_USE_ID.set(tool_use_id if isinstance(tool_use_id, str) else None)
        try:
            return await super().handle(message)
        finally:
            _TOOL_USE_ID.reset(token)

    def answer(self, tool_call_id: str, content: str, *, is_error: bool = False) -> None:
        """The front end's result for the call ``tool_call_id``."""
        self._answers[tool_call_id] = (content, is_error)
        while len(self._answers) > _MAX_EARLY:
            self._answers.popitem(last=False)
        waiting = self._waiting.pop(tool_call_id, None)
        if waiting is not None:
            waiting.set()

    async def _wait_for_answer(self, arguments: dict[str, Any]) -> dict[str, Any]:
        tool_use_id = _TOOL_USE_ID.get()
        if tool_use_id is None:
            return _result("the frontend tool call carries no tool_use id", True)
        if tool_use_id not in self._answers:
            event = self._waiting.setdefault(tool_use_id, anyio.Event())
            try:
                await event.wait()
            finally:
                self._waiting.pop(tool_use_id, None)
        content, is_error = self._answers.pop(tool_use_id)
        return _result(content, is_error)


def _result(text: str, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}
