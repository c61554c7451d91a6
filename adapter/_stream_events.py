"""Token-level streaming for :class:`adapter.translate.Translator` (a mixin).

``stream_event`` lines carry the raw SSE events of the Messages API: ``message_start`` names
the API message (its id becomes the events' ``message_id``), text and thinking deltas become
``message_chunk`` / ``reasoning`` (recorded in the text ledger so the per-block ``assistant``
lines do not repeat them), ``input_json_delta`` becomes ``tool_input_delta``, and
``message_delta`` usage updates the context window.
"""

from __future__ import annotations

from claudecode.content import ServerToolUseBlock, ToolUseBlock
from claudecode.messages import StreamEvent
from claudecode.stream_events import (
    ContentBlockDelta,
    ContentBlockStart,
    ContentBlockStop,
    InputJsonDelta,
    MessageDelta,
    MessageStart,
    TextDelta,
    ThinkingDelta,
)
from claudecode.stream_events import ErrorEvent as SseError

from ._context import ContextTracker
from ._tools import ToolCalls
from ._turn_state import BoundedMap, BoundedSet, TextKind, TextLedger
from .events import Event, MessageChunk, Raw, Reasoning, ToolInputDelta

__all__ = ("StreamEvents",)


class StreamEvents:
    """``stream_event`` handling; the state lives on the :class:`Translator`.

    Fast path (used by ``feed_many``): consecutive text (or thinking) deltas of one message,
    or input-json deltas of one content block, form a *run*; :meth:`_absorb_delta` only
    collects a run's pieces and :meth:`_flush_run` accounts for it once (text ledger, tool
    registry, one event). Accounting a run at once gives the same result as accounting each
    delta: the ledger emits the part of the concatenated text past what was already shown.
    """

    _seen: BoundedSet[str]
    _run_key: tuple[str | int, str, str | None] | None
    _run_parts: list[str]

    _ledger: TextLedger
    _calls: ToolCalls
    _context: ContextTracker
    _current_message: BoundedMap[str | None, str]
    _text_in_turn: bool
    #: While :meth:`Translator.feed_many` runs: its output so far, for merging deltas.
    _merge_into: list[Event] | None

    def _open(self, parent: str | None = None) -> None:
        raise NotImplementedError

    def _internal(self, exc: Exception, message: object) -> Event:
        raise NotImplementedError

    def _absorb_delta(self, msg: StreamEvent) -> bool:
        """Collect a text / thinking / input-json delta into the current run; ``False``: not one."""
        event = msg.event
        if not isinstance(event, ContentBlockDelta):
            return False
        delta = event.delta
        kind: str | int
        if isinstance(delta, TextDelta):
            kind, piece = "text", delta.text
        elif isinstance(delta, ThinkingDelta):
            kind, piece = "thinking", delta.thinking
        elif isinstance(delta, InputJsonDelta):
            kind, piece = event.index, delta.partial_json
        else:
            return False
        try:
            uuid = msg.uuid
            if uuid and not self._seen.add(uuid):
                return True  # a line seen before: dropped, as feed() would
            parent = msg.parent_tool_use_id
            message_id = msg.api_message_id or self._current_message.get(parent) or ""
            key = (kind, message_id, parent)
            if key != self._run_key:
                if self._run_key is not None:
                    self._flush_run()
                self._run_key = key
            self._run_parts.append(piece)
        except Exception as exc:
            if self._merge_into is not None:
                self._merge_into.append(self._internal(exc, msg))
        return True

    def _flush_run(self) -> None:
        """Account for the collected run and emit (or merge) its one event."""
        key, parts = self._run_key, self._run_parts
        self._run_key, self._run_parts = None, []
        out = self._merge_into
        if key is None or not parts or out is None:
            return
        kind, message_id, parent = key
        joined = parts[0] if len(parts) == 1 else "".join(parts)
        if kind == "text":
            out.extend(self._text(message_id, parent, joined))
        elif kind == "thinking":
            out.extend(self._text(message_id, parent, joined, "thinking"))
        else:
            assert isinstance(kind, int)
            out.extend(self._tool_input(message_id, kind, parent, joined))

    def _text(
        self, message_id: str, parent: str | None, text: str, kind: TextKind = "text"
    ) -> list[Event]:
        """Account streamed text; merge it into the previous event or return a new one."""
        fresh = self._ledger.streamed(message_id, kind, text)
        if not fresh:
            return []
        if parent is None and kind == "text":
            self._text_in_turn = True
        cls = MessageChunk if kind == "text" else Reasoning
        merge = self._merge_into
        last = merge[-1] if merge else None
        if type(last) is cls and last.message_id == message_id:
            assert isinstance(last, MessageChunk | Reasoning)
            if last.parent_tool_call_id == parent:
                last.text += fresh
                return []
        return [cls(message_id=message_id, text=fresh, parent_tool_call_id=parent)]

    def _tool_input(
        self, message_id: str, index: int, parent: str | None, piece: str
    ) -> list[Event]:
        """Record streamed tool input; merge it into the previous event or return a new one."""
        tool_id = self._calls.stream_delta(message_id, index, piece)
        if tool_id is None or not piece:
            return []
        merge = self._merge_into
        last = merge[-1] if merge else None
        if type(last) is ToolInputDelta and last.tool_call_id == tool_id:
            last.partial_json += piece
            return []
        return [
            ToolInputDelta(tool_call_id=tool_id, partial_json=piece, parent_tool_call_id=parent)
        ]

    def _note_model(self, model: str | None) -> None:
        raise NotImplementedError

    def _on_stream(self, msg: StreamEvent) -> list[Event]:
        event = msg.event
        parent = msg.parent_tool_use_id
        self._open(parent)
        if isinstance(event, MessageStart):
            message_id = event.message.id or msg.api_message_id or ""
            self._current_message.set(parent, message_id)
            if parent is None:
                self._note_model(event.message.model)
                self._context.start(message_id, event.message.usage)
            return []
        message_id = msg.api_message_id or self._current_message.get(parent) or ""
        if isinstance(event, ContentBlockDelta):
            return self._on_delta(event, message_id, parent)
        if isinstance(event, ContentBlockStart):
            block = event.content_block
            if isinstance(block, ToolUseBlock | ServerToolUseBlock):
                self._calls.begin_stream(message_id, event.index, block.id, block.name, parent)
            return []
        if isinstance(event, ContentBlockStop):
            return list(self._calls.end_stream(message_id, event.index))
        if isinstance(event, MessageDelta):
            if parent is None:
                self._context.update(event.usage)
                window = self._context.snapshot()
                return [window] if window is not None else []
            return []
        if isinstance(event, SseError):
            return [Raw(message_type="stream_event", subtype="error", data=dict(event.error))]
        return []

    def _on_delta(
        self, event: ContentBlockDelta, message_id: str, parent: str | None
    ) -> list[Event]:
        delta = event.delta
        if isinstance(delta, TextDelta):
            return self._text(message_id, parent, delta.text)
        if isinstance(delta, ThinkingDelta):
            return self._text(message_id, parent, delta.thinking, "thinking")
        if isinstance(delta, InputJsonDelta):
            return self._tool_input(message_id, event.index, parent, delta.partial_json)
        return []
