"""The translator's bookkeeping: text de-duplication, tool calls by id, bounded memories.

Rules (all of the translator's de-duplication lives here):

1. **Text and thinking are counted per API message and kind.** The CLI may deliver the same
   text twice: streamed as ``text_delta`` events and again as an ``assistant`` line for the
   completed block (one line per block). For every ``(message id, kind)`` the ledger counts
   the characters that *streamed* and the characters that were *delivered* by ``assistant``
   lines, and it has emitted ``max(streamed, delivered)`` characters. A delta or an assistant
   block emits only the part that takes its counter past what was already emitted. So:

   * streamed, then the ``assistant`` line: the line emits nothing (or, if some deltas never
     came, exactly the missing tail);
   * not streamed (no ``--include-partial-messages``): the ``assistant`` line emits the text
     once;
   * any order, duplicates, drops: a message never emits more text than its longest account.

2. **Tool calls are announced once and completed once.** A ``tool_use`` id gets one
   :class:`~adapter.events.ToolCall` and one :class:`~adapter.events.ToolUpdate`; ids that
   were completed are remembered (bounded) so a late or repeated result or ``tool_use`` is
   ignored instead of reopening the call.

3. **Every memory is bounded** (least recently used entries are forgotten), so a long
   session does not grow without limit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import msgspec

from normalize import NormalizedPayload

__all__ = (
    "BoundedMap",
    "BoundedSet",
    "partial_input",
    "PendingTool",
    "TextLedger",
    "ToolRegistry",
)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

TextKind = Literal["text", "thinking"]


class BoundedMap(Generic[K, V]):
    """A dict that forgets its least recently set entries past ``limit``."""

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 1)
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value for ``key`` or ``default``."""
        return self._data.get(key, default)

    def set(self, key: K, value: V) -> None:
        """Store ``value`` (refreshing the key's age) and forget the oldest past the limit."""
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._limit:
            self._data.popitem(last=False)

    def pop(self, key: K) -> V | None:
        """Remove and return the value for ``key`` (``None`` when absent)."""
        return self._data.pop(key, None)

    def clear(self) -> None:
        """Forget everything."""
        self._data.clear()

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)


class BoundedSet(Generic[K]):
    """A set that forgets its oldest members past ``limit``."""

    def __init__(self, limit: int) -> None:
        self._map: BoundedMap[K, None] = BoundedMap(limit)

    def add(self, key: K) -> bool:
        """Add ``key``; return ``False`` if it was already there."""
        if key in self._map:
            return False
        self._map.set(key, None)
        return True

    def __contains__(self, key: object) -> bool:
        return key in self._map


def _tail(text: str, fresh: int) -> str:
    return text[len(text) - fresh :] if fresh > 0 else ""


@dataclass
class _Counts:
    streamed: int = 0
    delivered: int = 0

    @property
    def emitted(self) -> int:
        return max(self.streamed, self.delivered)


class TextLedger:
    """Rule 1: how much text of each ``(message id, kind)`` was emitted, and what to emit next."""

    def __init__(self, limit: int = 512) -> None:
        self._counts: BoundedMap[tuple[str, TextKind], _Counts] = BoundedMap(limit)

    def _get(self, message_id: str, kind: TextKind) -> _Counts:
        counts = self._counts.get((message_id, kind))
        if counts is None:
            counts = _Counts()
        self._counts.set((message_id, kind), counts)
        return counts

    def streamed(self, message_id: str, kind: TextKind, text: str) -> str:
        """A delta arrived: return the part of ``text`` to emit (``""`` when already shown)."""
        counts = self._get(message_id, kind)
        before = counts.emitted
        counts.streamed += len(text)
        return _tail(text, counts.emitted - before)

    def delivered(self, message_id: str, kind: TextKind, text: str) -> str:
        """An ``assistant`` block arrived: return what of ``text`` was not shown yet."""
        counts = self._get(message_id, kind)
        before = counts.emitted
        counts.delivered += len(text)
        return _tail(text, counts.emitted - before)


@dataclass
class PendingTool:
    """A tool call that was announced and has no result yet."""

    name: str
    payload: NormalizedPayload
    parent: str | None = None


@dataclass
class _Streaming:
    """A ``tool_use`` block whose input is still streaming (``content_block_start`` seen)."""

    tool_id: str
    name: str
    parent: str | None
    parts: list[str] = field(default_factory=list)


class ToolRegistry:
    """Rule 2: tool calls by id, from announcement to result."""

    def __init__(self, limit: int = 4096) -> None:
        self.pending: dict[str, PendingTool] = {}
        self._done: BoundedSet[str] = BoundedSet(limit)
        self._streaming: BoundedMap[tuple[str, int], _Streaming] = BoundedMap(256)

    def known(self, tool_id: str) -> bool:
        """Whether ``tool_id`` was announced (pending or already completed)."""
        return tool_id in self.pending or tool_id in self._done

    def begin_stream(
        self, message_id: str, index: int, tool_id: str, name: str, parent: str | None
    ) -> None:
        """A ``content_block_start`` of a ``tool_use`` block at ``index`` of ``message_id``."""
        self._streaming.set((message_id, index), _Streaming(tool_id, name, parent))

    def stream_delta(self, message_id: str, index: int, partial_json: str) -> str | None:
        """An ``input_json_delta``: the tool call id it belongs to, or ``None`` if unknown."""
        block = self._streaming.get((message_id, index))
        if block is None:
            return None
        block.parts.append(partial_json)
        return block.tool_id

    def end_stream(self, message_id: str, index: int) -> _Streaming | None:
        """A ``content_block_stop``: the streamed block, if it was a ``tool_use``."""
        return self._streaming.pop((message_id, index))

    def add(self, tool_id: str, pending: PendingTool) -> bool:
        """Announce ``tool_id``; ``False`` if it was known already (nothing to emit)."""
        if self.known(tool_id):
            return False
        self.pending[tool_id] = pending
        return True

    def finish(self, tool_id: str) -> tuple[bool, PendingTool | None]:
        """A result for ``tool_id``: ``(emit?, the pending call or None if never announced)``.

        A second result for a completed call gives ``(False, None)``.
        """
        pending = self.pending.pop(tool_id, None)
        if pending is None and tool_id in self._done:
            return False, None
        self._done.add(tool_id)
        return True, pending

    def parent_of(self, tool_id: str | None) -> str | None:
        """The parent (sub-agent) tool call of a pending call."""
        if tool_id is None:
            return None
        pending = self.pending.get(tool_id)
        return pending.parent if pending is not None else None


def partial_input(parts: list[str]) -> dict[str, Any]:
    """Parse the concatenated ``input_json_delta`` fragments; ``{}`` if not a JSON object."""
    try:
        value = msgspec.json.decode("".join(parts).encode())
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}
