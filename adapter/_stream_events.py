"""Token-level streaming for :class:`adapter.translate.Translator` (a mixin).

``stream_event`` lines carry the raw SSE events of the Messages API: ``message_start`` names
the API message (its id becomes the events' ``message_id``), text and thinking deltas become
``message_chunk`` / ``reasoning`` (recorded in the text ledger so the per-block ``assistant``
lines do not repeat them), ``input_json_delta`` becomes ``tool_input_delta``, and
``message_delta`` usage updates the context window.
"""

from __future__ import annotations

from typing import Any, Final

from claudecode.content import ServerToolUseBlock, ToolUseBlock
from claudecode.internal import LiteInbound, StreamEventLite
from claudecode.messages import StreamEvent
from claudecode.stream_events import (
    ContentBlockDelta,
    ContentBlockStart,
    ContentBlockStop,
    InputJsonDelta,
    MessageDelta,
    MessageStart,
    MessageStop,
    Ping,
    TextDelta,
    ThinkingDelta,
)
from claudecode.stream_events import ErrorEvent as SseError

from ._context import ContextTracker
from ._tools import ToolCalls
from ._turn_state import BoundedMap, TextKind, TextLedger
from .events import Event, MessageChunk, Raw, Reasoning, ToolInputDelta

__all__ = ("StreamEvents",)

#: ``stream_event`` payloads that give no event inside an open turn, whatever they hold.
_SILENT: frozenset[type] = frozenset({MessageStop, Ping})
_TOOL_BLOCKS: frozenset[type] = frozenset({ToolUseBlock, ServerToolUseBlock})
#: The kind of a run of deltas that is not a tool block's input (those use the block index).
_TEXT: Final = -1
_THINKING: Final = -2
_NO_RUN: Final = -3


class StreamEvents:
    """``stream_event`` handling; the state lives on the :class:`Translator`.

    Fast path (used by ``feed_many``): consecutive text (or thinking) deltas of one message,
    or input-json deltas of one content block, form a *run*; :meth:`_feed_batch` only
    collects a run's pieces and :meth:`_flush_run` accounts for it once (text ledger, tool
    registry, one event). Accounting a run at once gives the same result as accounting each
    delta: the ledger emits the part of the concatenated text past what was already shown.
    """

    _ledger: TextLedger
    _calls: ToolCalls
    _context: ContextTracker
    _current_message: BoundedMap[str | None, str]
    _text_in_turn: bool
    _turn_open: bool
    #: While :meth:`Translator.feed_many` runs: its output so far, for merging deltas.
    _merge_into: list[Event] | None

    def _open(self, parent: str | None = None) -> None:
        raise NotImplementedError

    def _internal(self, exc: Exception, message: object) -> Event:
        raise NotImplementedError

    def feed(self, message: LiteInbound) -> list[Event]:
        raise NotImplementedError

    def _dispatch(self, message: LiteInbound) -> list[Event]:
        raise NotImplementedError

    def _feed_batch(self, batch: list[LiteInbound], out: list[Event]) -> None:
        """Translate ``batch`` into ``out`` (``out`` is also :attr:`_merge_into`).

        The hot loop of the adapter (most lines are deltas): a delta of the current run costs
        a few attribute reads, three comparisons and an append. ``stream_event`` lines are not
        checked for duplicates (the CLI never repeats them; see :mod:`adapter.translate`);
        the other lines go through :meth:`feed`, which is.
        """
        feed = self.feed  # the other lines: duplicates dropped, then dispatched
        current = self._current_message
        turn_open = self._turn_open  # only feed() below can change it: read again after it
        # Local names for the classes: a compiled build (mypyc) reads a module's globals
        # from its dict on every use, a local is a C variable; ``type(x) is C`` is a
        # pointer compare there (``x.__class__`` a generic attribute lookup).
        lite, full, block_delta = StreamEventLite, StreamEvent, ContentBlockDelta
        text_delta, thinking_delta, json_delta = TextDelta, ThinkingDelta, InputJsonDelta
        block_start, block_stop, silent, tool_blocks = (
            ContentBlockStart,
            ContentBlockStop,
            _SILENT,
            _TOOL_BLOCKS,
        )
        # A run's kind: _TEXT, _THINKING or a tool block's index (>= 0); an int compares
        # natively when compiled.
        run_kind = _NO_RUN
        run_id = ""
        run_parent: str | None = None
        parts: list[str] = []
        for message in batch:
            # StreamEventLite: what the adapter's own session reads (claudecode._stream_lite)
            cls = type(message)
            if turn_open and (cls is lite or cls is full):
                # exact-class tests: cheaper than isinstance (exact classes, as decoded);
                # the classes are tested by identity, so the values are typed Any here
                stream: Any = message
                event: Any = stream.event
                event_cls = type(event)
                if event_cls is block_delta:
                    delta = event.delta
                    delta_cls = type(delta)
                    kind: int
                    if delta_cls is text_delta:
                        kind = _TEXT
                        piece = delta.text
                    elif delta_cls is thinking_delta:
                        kind = _THINKING
                        piece = delta.thinking
                    elif delta_cls is json_delta:
                        kind = event.index
                        piece = delta.partial_json
                    else:
                        continue  # signature, citations: nothing to show
                    parent: str | None = stream.parent_tool_use_id
                    message_id: str = stream.api_message_id or current.get(parent) or ""
                    if kind == run_kind and message_id == run_id and parent == run_parent:
                        parts.append(piece)
                        continue
                    if parts:
                        self._flush_run(run_kind, run_id, run_parent, parts)
                    run_kind, run_id, run_parent, parts = kind, message_id, parent, [piece]
                    continue
                if (
                    event_cls in silent
                    or (event_cls is block_start and type(event.content_block) not in tool_blocks)
                    # the stop of a text or thinking block: only tool blocks stream state
                    or (event_cls is block_stop and not self._calls.streaming)
                ):
                    continue  # no event, and the turn is open already
                # the other stream events: dispatched below
            if parts:
                self._flush_run(run_kind, run_id, run_parent, parts)
                run_kind, parts = _NO_RUN, []
            events = feed(message)
            if events:
                out.extend(events)
            turn_open = self._turn_open
        if parts:
            self._flush_run(run_kind, run_id, run_parent, parts)

    def _flush_run(self, kind: int, message_id: str, parent: str | None, parts: list[str]) -> None:
        """Account for a run of deltas at once and emit (or merge) its one event."""
        out = self._merge_into
        assert out is not None
        joined = parts[0] if len(parts) == 1 else "".join(parts)
        try:
            if kind == _TEXT:
                out.extend(self._text(message_id, parent, joined))
            elif kind == _THINKING:
                out.extend(self._text(message_id, parent, joined, "thinking"))
            else:
                out.extend(self._tool_input(message_id, kind, parent, joined))
        except Exception as exc:
            out.append(self._internal(exc, parts))

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

    def _on_stream(self, msg: StreamEvent | StreamEventLite) -> list[Event]:
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
            if isinstance(block, (ToolUseBlock, ServerToolUseBlock)):
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
