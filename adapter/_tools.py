"""Tool calls by id, from the ``tool_use`` block to the ``tool_result``, as events.

A ``tool_use`` id gets exactly one :class:`~adapter.events.ToolCall` and one
:class:`~adapter.events.ToolUpdate`. Completed ids are remembered (bounded), so a late or
repeated result or ``tool_use`` is ignored instead of reopening the call; a result for an id
that was never announced still gets its update (with a generic payload). Payloads come from
:mod:`normalize`: built from the input when the call is announced, enriched from the result.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from claudecode.content import LargeText
from normalize import (
    DEFAULT_MAX_OUTPUT_BYTES,
    NormalizedPayload,
    action_type_for,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)

from ._turn_state import BoundedMap, BoundedSet
from .events import ToolCall, ToolUpdate

__all__ = ("partial_input", "PendingTool", "ToolCalls")


@dataclass
class PendingTool:
    """A tool call that was announced and has no result yet."""

    name: str
    payload: NormalizedPayload
    parent: str | None = None


@dataclass
class StreamingTool:
    """A ``tool_use`` block whose input is still streaming (``content_block_start`` seen)."""

    tool_id: str
    name: str
    parent: str | None
    parts: list[str] = field(default_factory=list)


def partial_input(parts: list[str]) -> dict[str, Any]:
    """Parse the concatenated ``input_json_delta`` fragments; ``{}`` if not a JSON object."""
    try:
        value = msgspec.json.decode("".join(parts).encode())
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}


class ToolCalls:
    """The tool calls of a session: pending by id, completed ones remembered (bounded).

    ``work_dir`` (a callable, since the ``cwd`` is learned late) shortens paths in titles.
    """

    def __init__(self, work_dir: Callable[[], str | None] | None = None, limit: int = 4096) -> None:
        self.pending: dict[str, PendingTool] = {}
        self._work_dir = work_dir
        self._done: BoundedSet[str] = BoundedSet(limit)
        self._streaming: BoundedMap[tuple[str, int], StreamingTool] = BoundedMap(256)

    def _title(self, payload: NormalizedPayload) -> str:
        return title_for(payload, work_dir=self._work_dir() if self._work_dir else None)

    def known(self, tool_id: str) -> bool:
        """Whether ``tool_id`` was announced (pending or already completed)."""
        return tool_id in self.pending or tool_id in self._done

    def parent_of(self, tool_id: str | None) -> str | None:
        """The parent (sub-agent) tool call of a pending call."""
        pending = self.pending.get(tool_id) if tool_id is not None else None
        return pending.parent if pending is not None else None

    # -- streamed input

    @property
    def streaming(self) -> bool:
        """Whether some ``tool_use`` block's input is streaming (started, not stopped)."""
        return len(self._streaming) > 0

    def begin_stream(
        self, message_id: str, index: int, tool_id: str, name: str, parent: str | None
    ) -> None:
        """A ``content_block_start`` of a ``tool_use`` block at ``index`` of ``message_id``."""
        self._streaming.set((message_id, index), StreamingTool(tool_id, name, parent))

    def stream_delta(self, message_id: str, index: int, partial_json: str) -> str | None:
        """An ``input_json_delta``: the tool call id it belongs to, or ``None`` if unknown."""
        block = self._streaming.get((message_id, index))
        if block is None:
            return None
        block.parts.append(partial_json)
        return block.tool_id

    def end_stream(self, message_id: str, index: int) -> list[ToolCall]:
        """A ``content_block_stop``: the call from the streamed input, if nothing announced it."""
        block = self._streaming.pop((message_id, index))
        if block is None or not block.tool_id or self.known(block.tool_id):
            return []  # the usual case: the ``assistant`` line announced it (no JSON to parse)
        return self.announce(block.tool_id, block.name, partial_input(block.parts), block.parent)

    # -- lifecycle

    def announce(
        self, tool_id: str, name: str, tool_input: Any, parent: str | None
    ) -> list[ToolCall]:
        """The :class:`ToolCall` of a ``tool_use`` block (nothing if the id is known)."""
        if not tool_id or self.known(tool_id):
            return []
        payload = normalize_tool_use(name, tool_input)
        self.pending[tool_id] = PendingTool(name=name, payload=payload, parent=parent)
        return [
            ToolCall(
                tool_call_id=tool_id,
                tool_name=name,
                title=self._title(payload),
                normalized=payload,
                action_type=action_type_for(payload),
                parent_tool_call_id=parent,
            )
        ]

    def _finish(self, tool_id: str) -> tuple[bool, PendingTool | None]:
        pending = self.pending.pop(tool_id, None)
        if pending is None and tool_id in self._done:
            return False, None
        self._done.add(tool_id)
        return True, pending

    def result(
        self, tool_id: str, content: Any, is_error: bool, structured: Any, parent: str | None
    ) -> list[ToolUpdate]:
        """The :class:`ToolUpdate` of a ``tool_result`` (nothing for a second result)."""
        emit, pending = self._finish(tool_id)
        if not emit:
            return []
        if pending is None:
            pending = PendingTool(name="", payload=normalize_tool_use("", {}), parent=parent)
        if isinstance(content, LargeText):
            # A huge text the client kept undecoded: the payload keeps at most
            # DEFAULT_MAX_OUTPUT_BYTES of it, so decode only that much (and a little more, so
            # that the normalizer sees, and marks, the cut).
            content = content.head(DEFAULT_MAX_OUTPUT_BYTES + 4)
        payload = normalize_tool_result(
            pending.payload, content=content, is_error=is_error, tool_use_result=structured
        )
        return [self._update(tool_id, pending, payload, "error" if is_error else "complete")]

    def complete_all(
        self, status: Literal["complete", "error"], keep: Collection[str] = ()
    ) -> list[ToolUpdate]:
        """End every pending call (a synthetic :class:`ToolUpdate` each), oldest first, but
        the calls of sub-agents under the ``keep`` calls (background tasks still running)."""
        updates: list[ToolUpdate] = []
        for tool_id in list(self.pending):
            if keep and self.pending[tool_id].parent in keep:
                continue
            emit, pending = self._finish(tool_id)
            if emit and pending is not None:
                updates.append(self._update(tool_id, pending, pending.payload, status, True))
        return updates

    def _update(
        self,
        tool_id: str,
        pending: PendingTool,
        payload: NormalizedPayload,
        status: Literal["complete", "error"],
        synthetic: bool = False,
    ) -> ToolUpdate:
        return ToolUpdate(
            tool_call_id=tool_id,
            status=status,
            title=self._title(payload),
            normalized=payload,
            tool_name=pending.name,
            action_type=action_type_for(payload),
            parent_tool_call_id=pending.parent,
            synthetic=synthetic,
        )
