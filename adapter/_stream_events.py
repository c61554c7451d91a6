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
from ._turn_state import BoundedMap, TextLedger
from .events import Event, MessageChunk, Raw, Reasoning, ToolInputDelta

__all__ = ("StreamEvents",)


class StreamEvents:
    """``stream_event`` handling; the state lives on the :class:`Translator`."""

    _ledger: TextLedger
    _calls: ToolCalls
    _context: ContextTracker
    _current_message: BoundedMap[str | None, str]
    _text_in_turn: bool
    #: While :meth:`Translator.feed_many` runs: its output so far, for merging deltas.
    _merge_into: list[Event] | None

    def _open(self) -> None:
        raise NotImplementedError

    def _note_model(self, model: str | None) -> None:
        raise NotImplementedError

    def _on_stream(self, msg: StreamEvent) -> list[Event]:
        self._open()
        event = msg.event
        parent = msg.parent_tool_use_id
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
        merge = self._merge_into
        last = merge[-1] if merge else None
        if isinstance(delta, TextDelta):
            text = self._ledger.streamed(message_id, "text", delta.text)
            if not text:
                return []
            if parent is None:
                self._text_in_turn = True
            if (
                type(last) is MessageChunk
                and last.message_id == message_id
                and last.parent_tool_call_id == parent
            ):
                last.text += text
                return []
            return [MessageChunk(message_id=message_id, text=text, parent_tool_call_id=parent)]
        if isinstance(delta, ThinkingDelta):
            text = self._ledger.streamed(message_id, "thinking", delta.thinking)
            if not text:
                return []
            if (
                type(last) is Reasoning
                and last.message_id == message_id
                and last.parent_tool_call_id == parent
            ):
                last.text += text
                return []
            return [Reasoning(message_id=message_id, text=text, parent_tool_call_id=parent)]
        if isinstance(delta, InputJsonDelta):
            tool_id = self._calls.stream_delta(message_id, event.index, delta.partial_json)
            if tool_id is None or not delta.partial_json:
                return []
            if type(last) is ToolInputDelta and last.tool_call_id == tool_id:
                last.partial_json += delta.partial_json
                return []
            return [
                ToolInputDelta(
                    tool_call_id=tool_id,
                    partial_json=delta.partial_json,
                    parent_tool_call_id=parent,
                )
            ]
        return []
