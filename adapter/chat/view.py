"""The chat view model: the normalized event stream folded into what a chat UI shows.

:class:`ChatView` is pure (no I/O, no clock): feed it events with :meth:`ChatView.apply` —
live ones from a subscription, or stored ones from :mod:`adapter.history.transcripts` — and it keeps
the list of :mod:`~adapter.chat.entries`, the todo list, usage and cost, the context window
and the session's capabilities. Each call returns a :class:`ChatDelta` (entries added,
updated, removed) so a UI patches what changed instead of redrawing everything.

Rules:

* **Text** chunks of one API message grow one :class:`~adapter.chat.entries.AssistantText`
  until something else is shown on the same thread; text after that starts a new entry.
* **Tool results** update the entry of the call they answer (the entry id is the tool call id);
  a result whose call was never seen still gets an entry.
* **Reads**: consecutive successful file reads of one thread merge into a
  :class:`~adapter.chat.entries.ReadGroup` whose id is the first read's tool call id.
* **Sub-agent work** carries ``parent_id`` (the ``Agent`` call); a UI nests it there.
* **User messages** are parsed by :func:`~adapter.history.usertext.parse_user_text` (slash
  commands and their output, interruptions, IDE selections).
* **Permission requests** are entries, ``open`` until withdrawn, answered (their tool call
  moved on) or the turn ended; a ``permission_resolved`` sets their ``decision`` and ``by``.
* **Questions** (``question_request``) are entries of their own, ``open`` until
  ``answered`` / ``declined`` (``permission_resolved``), ``cancelled`` when withdrawn or the
  turn ended.
* **A failed turn** shows once: when the CLI wrote the failure's text as the turn's last
  assistant text too (the synthetic ``API Error: 529 ...`` message, or a failed result's text),
  the error entry takes that text's place instead of repeating it.

Ids are deterministic: the same events give the same entries whatever the batch split, so
``apply(all)`` equals any sequence of ``apply(part)`` and replaying the deltas onto an empty
list (removed, then updated in place, then added at the end) rebuilds :attr:`entries`. An
entry that an event starts is named after the event's ``seq`` (``user:12``; stored events,
which have none, count instead: ``user:h3``), a text or reasoning run after its message
(``text:<message id>``, then ``text:<message id>:1`` ...), a tool entry after its call: so a
page that folds live events onto a snapshot (``webui/static/chat.js``) names its entries as
this view does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from normalize import CreateTask, ManageTodos, ReadFile, TodoItem

from ..events import (
    ApiRetry,
    AvailableCommands,
    CompactBoundary,
    Complete,
    ContextWindow,
    ErrorEvent,
    Event,
    MessageChunk,
    ModeChanged,
    PermissionCancelled,
    PermissionRequest,
    PermissionResolved,
    QuestionRequest,
    RateLimit,
    Reasoning,
    SessionStatus,
    TaskEvent,
    ToolCall,
    ToolProgress,
    ToolUpdate,
    UserMessage,
)
from ..history.usertext import parse_user_text
from ._requests import RequestEntries
from .entries import (
    AssistantText,
    ChatEntry,
    CommandEntry,
    ErrorEntry,
    InterruptEntry,
    NoticeEntry,
    ReadGroup,
    ReasoningEntry,
    ToolEntry,
    UserEntry,
)
from .snapshot import ChatDelta, ChatSnapshot, ChatTurn, ChatUsage

__all__ = ("ChatDelta", "ChatSnapshot", "ChatTurn", "ChatUsage", "ChatView")


def _is_read(entry: ChatEntry | None) -> bool:
    """A finished, successful read or a group of them (what can merge)."""
    if isinstance(entry, ReadGroup):
        return True
    return (
        isinstance(entry, ToolEntry)
        and isinstance(entry.normalized, ReadFile)
        and entry.status == "complete"
    )


def _reads(entry: ChatEntry) -> tuple[ToolEntry, ...]:
    if isinstance(entry, ReadGroup):
        return entry.reads
    assert isinstance(entry, ToolEntry)
    return (entry,)


class ChatView(RequestEntries):
    """The chat of one session, built incrementally from events (see the module doc)."""

    def __init__(self) -> None:
        self._entries: dict[str, ChatEntry] = {}
        #: Entry ids per thread (``None`` = main), in display order.
        self._threads: dict[str | None, list[str]] = {}
        #: Tool call id -> the read group that holds it.
        self._grouped: dict[str, str] = {}
        #: Per thread: the text / reasoning entry that grows with the next chunk.
        self._open_text: dict[str | None, str] = {}
        self._open_reasoning: dict[str | None, str] = {}
        self._runs: dict[str, int] = {}
        #: Text / reasoning entry id -> its text so far, in pieces not yet joined. A streamed
        #: message arrives in thousands of chunks: joining the whole text at every chunk would
        #: cost time quadratic in its length, so the pieces are joined when someone looks.
        self._pieces: dict[str, list[str]] = {}
        #: The permission entries, in the order of the entries (a closed one stays, so that
        #: one reopened under its id keeps its place): a tool result closes its call's
        #: requests, and scanning every entry for them at every result cost time quadratic
        #: in the length of the chat.
        self._permissions: dict[str, None] = {}
        self._events = 0
        self._key = ""
        self.todos: tuple[TodoItem, ...] = ()
        self.usage = ChatUsage()
        self.context_window: ContextWindow | None = None
        self.model: str | None = None
        self.permission_mode: str | None = None
        self.cli_session_id: str | None = None
        self.commands: tuple[str, ...] = ()
        self.tools: tuple[str, ...] = ()
        self.turns: tuple[ChatTurn, ...] = ()
        self.last_seq = 0
        self._reset_delta()

    # ------------------------------------------------------------------ public

    @property
    def entries(self) -> list[ChatEntry]:
        """The entries in display order."""
        self._join_pieces()
        return list(self._entries.values())

    def entry(self, entry_id: str) -> ChatEntry | None:
        """One entry by id."""
        self._join_pieces()
        return self._entries.get(entry_id)

    def snapshot(self) -> ChatSnapshot:
        """The whole view as one JSON-serializable value."""
        self._join_pieces()
        return ChatSnapshot(
            entries=tuple(self._entries.values()),
            todos=self.todos,
            usage=self.usage,
            context_window=self.context_window,
            model=self.model,
            permission_mode=self.permission_mode,
            cli_session_id=self.cli_session_id,
            commands=self.commands,
            tools=self.tools,
            turns=self.turns,
            last_seq=self.last_seq,
        )

    def apply(self, events: Iterable[Event]) -> ChatDelta:
        """Fold ``events`` in (in order) and say which entries changed."""
        self._fold(events)
        return self._take_delta()

    def fold(self, events: Iterable[Event]) -> None:
        """Fold ``events`` in (in order) without computing a :class:`ChatDelta`: for a
        follower that keeps the view only for :meth:`snapshot`. Streamed text then costs time
        linear in its length however small the batches are."""
        self._fold(events)
        self._reset_delta()

    def _fold(self, events: Iterable[Event]) -> None:
        handlers = _HANDLERS
        for event in events:
            self._events += 1
            if event.seq:
                self.last_seq = event.seq
                self._key = str(event.seq)
            else:
                self._key = f"h{self._events}"
            handler = handlers.get(type(event))
            if handler is None:
                continue
            if self._pieces and type(event) not in _CHUNKS:
                self._join_pieces()  # whatever else a handler does sees whole texts
            handler(self, event)

    def _grow(self, entry: AssistantText | ReasoningEntry, text: str) -> None:
        """Add a chunk to the open entry it continues, as a piece (see ``_pieces``)."""
        pieces = self._pieces.get(entry.id)
        if pieces is None:
            self._pieces[entry.id] = [entry.text, text]
        else:
            pieces.append(text)
            if len(pieces) >= _MAX_PIECES:  # bounded memory per open entry
                pieces[:] = ["".join(pieces)]
        self._touched[entry.id] = None

    def _join_pieces(self) -> None:
        for entry_id, pieces in self._pieces.items():
            entry = self._entries.get(entry_id)
            if isinstance(entry, (AssistantText, ReasoningEntry)):
                self._entries[entry_id] = msgspec.structs.replace(entry, text="".join(pieces))
        self._pieces.clear()

    # ------------------------------------------------------------------ deltas

    def _reset_delta(self) -> None:
        self._born: set[str] = set()
        self._touched: dict[str, None] = {}
        self._removed: list[str] = []

    def _take_delta(self) -> ChatDelta:
        self._join_pieces()
        born = [i for i in self._born if i in self._entries]
        added: list[ChatEntry] = []
        if born:
            # New entries are always appended, so they form the tail of the order.
            want = len(born)
            for entry_id in reversed(self._entries):
                if entry_id in self._born:
                    added.append(self._entries[entry_id])
                    if len(added) == want:
                        break
            added.reverse()
        updated = tuple(
            self._entries[i] for i in self._touched if i in self._entries and i not in self._born
        )
        delta = ChatDelta(added=tuple(added), updated=updated, removed=tuple(self._removed))
        self._reset_delta()
        return delta

    def _add(self, entry: ChatEntry) -> None:
        if entry.id in self._entries:
            self._set(entry)
            return
        self._entries[entry.id] = entry
        self._born.add(entry.id)
        self._threads.setdefault(entry.parent_id, []).append(entry.id)
        self._open_text.pop(entry.parent_id, None)
        self._open_reasoning.pop(entry.parent_id, None)
        if isinstance(entry, AssistantText):
            self._open_text[entry.parent_id] = entry.id
        elif isinstance(entry, ReasoningEntry):
            self._open_reasoning[entry.parent_id] = entry.id

    def _set(self, entry: ChatEntry) -> None:
        self._entries[entry.id] = entry
        self._touched[entry.id] = None

    def _remove(self, entry_id: str) -> None:
        entry = self._entries.pop(entry_id, None)
        self._permissions.pop(entry_id, None)
        if entry is None:
            return
        self._threads[entry.parent_id].remove(entry_id)
        if entry_id not in self._born:
            self._removed.append(entry_id)
        self._touched.pop(entry_id, None)

    def _next_id(self, kind: str) -> str:
        return f"{kind}:{self._key}"

    def _run_id(self, kind: str, message_id: str) -> str:
        key = f"{kind}:{message_id}"
        n = self._runs.get(key, 0)
        self._runs[key] = n + 1
        return key if n == 0 else f"{key}:{n}"

    # ------------------------------------------------------------------ handlers

    def _on_user(self, event: UserMessage) -> None:
        parsed = parse_user_text(event.text)
        if parsed.kind == "text":
            self._add(
                UserEntry(
                    id=self._next_id("user"),
                    text=parsed.text,
                    images=event.images,
                    selections=parsed.selections,
                )
            )
        elif parsed.kind == "command":
            self._add(CommandEntry(id=self._next_id("command"), name=parsed.name, args=parsed.args))
        elif parsed.kind == "command_output":
            main = self._threads.get(None) or []
            last = self._entries[main[-1]] if main else None
            if isinstance(last, CommandEntry) and last.output is None:
                self._set(msgspec.structs.replace(last, output=parsed.text))
            else:
                self._add(CommandEntry(id=self._next_id("command"), name="", output=parsed.text))
        elif parsed.kind == "interrupt":
            self._add(InterruptEntry(id=self._next_id("interrupt")))
        elif event.images:
            self._add(UserEntry(id=self._next_id("user"), text="", images=event.images))

    def _on_text(self, event: MessageChunk) -> None:
        parent = event.parent_tool_call_id
        open_id = self._open_text.get(parent)
        entry = self._entries.get(open_id) if open_id else None
        if isinstance(entry, AssistantText) and entry.message_id == event.message_id:
            self._grow(entry, event.text)
            return
        self._join_pieces()  # a new run starts: settle the pending texts (once per run)
        self._add(
            AssistantText(
                id=self._run_id("text", event.message_id),
                parent_id=parent,
                message_id=event.message_id,
                text=event.text,
            )
        )

    def _on_reasoning(self, event: Reasoning) -> None:
        parent = event.parent_tool_call_id
        open_id = self._open_reasoning.get(parent)
        entry = self._entries.get(open_id) if open_id else None
        if isinstance(entry, ReasoningEntry) and entry.message_id == event.message_id:
            self._grow(entry, event.text)
            return
        self._join_pieces()  # a new run starts: settle the pending texts (once per run)
        self._add(
            ReasoningEntry(
                id=self._run_id("reasoning", event.message_id),
                parent_id=parent,
                message_id=event.message_id,
                text=event.text,
            )
        )

    def _tool(self, tool_id: str) -> ToolEntry | None:
        group_id = self._grouped.get(tool_id)
        if group_id is not None:
            group = self._entries.get(group_id)
            if isinstance(group, ReadGroup):
                for read in group.reads:
                    if read.id == tool_id:
                        return read
            return None
        entry = self._entries.get(tool_id)
        return entry if isinstance(entry, ToolEntry) else None

    def _on_tool_call(self, event: ToolCall) -> None:
        if self._tool(event.tool_call_id) is not None:
            return
        self._add(
            ToolEntry(
                id=event.tool_call_id,
                parent_id=event.parent_tool_call_id,
                tool_name=event.tool_name,
                title=event.title,
                normalized=event.normalized,
                action_type=event.action_type,
            )
        )
        payload = event.normalized
        if isinstance(payload, ManageTodos) and payload.operation == "write":
            self.todos = payload.items

    def _on_tool_progress(self, event: ToolProgress) -> None:
        entry = self._entries.get(event.tool_call_id)
        if isinstance(entry, ToolEntry) and entry.status == "running":
            self._set(
                msgspec.structs.replace(
                    entry, elapsed_seconds=event.elapsed_seconds, progress=event.message
                )
            )

    def _on_tool_update(self, event: ToolUpdate) -> None:
        tool_id = event.tool_call_id
        old = self._tool(tool_id)
        if tool_id in self._grouped:
            return  # a finished read already in a group: nothing changes
        if old is None:
            entry = ToolEntry(
                id=tool_id,
                parent_id=event.parent_tool_call_id,
                tool_name=event.tool_name,
                title=event.title,
                normalized=event.normalized,
                action_type=event.action_type,
                status=event.status,
            )
            self._add(entry)
        else:
            entry = msgspec.structs.replace(
                old,
                title=event.title,
                normalized=event.normalized,
                action_type=event.action_type,
                status=event.status,
                tool_name=event.tool_name or old.tool_name,
            )
            self._set(entry)
        self._close_permissions_of(tool_id)
        self._track_todos(event)
        if _is_read(entry):
            self._merge_reads(entry)

    def _merge_reads(self, entry: ToolEntry) -> None:
        thread = self._threads.get(entry.parent_id, [])
        index = thread.index(entry.id)
        current: ChatEntry = entry
        if index > 0:
            prev = self._entries[thread[index - 1]]
            if _is_read(prev):
                current = self._join(prev, entry)
                index -= 1
        if index + 1 < len(thread):
            following = self._entries[thread[index + 1]]
            if _is_read(following):
                self._join(current, following)

    def _join(self, first: ChatEntry, second: ChatEntry) -> ReadGroup:
        reads = _reads(first) + _reads(second)
        group = ReadGroup(id=first.id, parent_id=first.parent_id, reads=reads)
        self._remove(second.id)
        self._set(group)
        for read in reads:
            self._grouped[read.id] = group.id
        return group

    def _track_todos(self, event: ToolUpdate) -> None:
        payload = event.normalized
        if event.status != "complete":
            return
        if isinstance(payload, ManageTodos):
            if payload.operation in ("write", "list") and payload.items:
                self.todos = payload.items
            elif payload.operation == "update":
                for item in payload.items:
                    self.todos = _upsert(self.todos, item)
        elif isinstance(payload, CreateTask) and payload.task_id:
            item = TodoItem(id=payload.task_id, description=payload.title, status="pending")
            self.todos = _upsert(self.todos, item)

    def _on_complete(self, event: Complete) -> None:
        for entry in self.open_permissions():
            self._close_permission(entry.id)
        for question in self.open_questions():
            self._cancel_question(question.id)
        usage = self.usage
        tokens = event.tokens
        self.usage = ChatUsage(
            cost_usd=usage.cost_usd + event.cost_usd,
            turns=usage.turns + 1,
            input_tokens=usage.input_tokens + tokens.input,
            output_tokens=usage.output_tokens + tokens.output,
            cache_read_tokens=usage.cache_read_tokens + tokens.cache_read,
            cache_creation_tokens=usage.cache_creation_tokens + tokens.cache_creation,
            duration_ms=usage.duration_ms + event.duration_ms,
        )
        if event.model:
            self.model = event.model
        self._mark_turn(event.last_message_uuid)

    def _mark_turn(self, uuid: str | None) -> None:
        """A turn ended at ``uuid``: one more place to fork at (a failed turn committed
        nothing new, its uuid is the previous turn's: no second mark)."""
        if not uuid or (self.turns and self.turns[-1].last_message_uuid == uuid):
            return
        main = self._threads.get(None)
        turn = ChatTurn(
            number=len(self.turns) + 1,
            last_message_uuid=uuid,
            cli_session_id=self.cli_session_id,
            after=main[-1] if main else None,
        )
        self.turns = (*self.turns, turn)

    def _on_error(self, event: ErrorEvent) -> None:
        if event.kind == "interrupted":
            self._add(InterruptEntry(id=self._next_id("interrupt"), text=event.message))
            return
        entry_id = self._next_id("error")
        self._drop_echo(event.message, entry_id)
        self._add(
            ErrorEntry(
                id=entry_id,
                message=event.message,
                error_kind=event.kind,
                status=event.status,
                request_id=event.request_id,
            )
        )

    def _drop_echo(self, message: str, replacement: str) -> None:
        """The CLI writes a failed turn's error as its assistant text too (a synthetic message
        ``API Error: 529 ...``, or the result's text when the turn showed none): that text,
        the main thread's last entry, is the error's own; the error entry replaces it."""
        main = self._threads.get(None)
        last = self._entries.get(main[-1]) if main else None
        if not isinstance(last, AssistantText) or last.text != message:
            return
        self._remove(last.id)
        self._open_text.pop(None, None)
        if any(t.after == last.id for t in self.turns):
            self.turns = tuple(
                msgspec.structs.replace(t, after=replacement) if t.after == last.id else t
                for t in self.turns
            )

    def _on_status(self, event: SessionStatus) -> None:
        self.model = event.model or self.model
        self.permission_mode = event.permission_mode or self.permission_mode
        self.cli_session_id = event.cli_session_id or self.cli_session_id
        if event.tools:
            self.tools = tuple(event.tools)

    def _on_commands(self, event: AvailableCommands) -> None:
        self.commands = tuple(c.name for c in event.commands)

    def _on_mode(self, event: ModeChanged) -> None:
        self.permission_mode = event.mode

    def _on_context(self, event: ContextWindow) -> None:
        self.context_window = event

    def _on_task(self, event: TaskEvent) -> None:
        if event.tool_call_id is None:
            return
        entry = self._entries.get(event.tool_call_id)
        if isinstance(entry, ToolEntry):
            self._set(msgspec.structs.replace(entry, task_status=event.status or event.phase))

    def _on_compact(self, event: CompactBoundary) -> None:
        self._add(
            NoticeEntry(
                id=self._next_id("notice"), text="Conversation compacted", notice_kind="compact"
            )
        )

    def _on_rate_limit(self, event: RateLimit) -> None:
        text = f"Rate limit: {event.status}"
        self._add(NoticeEntry(id=self._next_id("notice"), text=text, notice_kind="rate_limit"))

    def _on_retry(self, event: ApiRetry) -> None:
        text = f"Retrying the API call (attempt {event.attempt})"
        if event.error:
            text += f": {event.error}"
        self._add(NoticeEntry(id=self._next_id("notice"), text=text, notice_kind="api_retry"))


def _upsert(items: tuple[TodoItem, ...], item: TodoItem) -> tuple[TodoItem, ...]:
    for i, old in enumerate(items):
        if item.id is not None and old.id == item.id:
            merged = TodoItem(
                id=old.id,
                description=item.description or old.description,
                status=item.status or old.status,
                active_form=item.active_form or old.active_form,
            )
            return (*items[:i], merged, *items[i + 1 :])
    return (*items, item)


#: Chunks that may continue an open text / reasoning entry (see ``ChatView._grow``).
_CHUNKS = frozenset((MessageChunk, Reasoning))
#: Pieces an open entry keeps before they are joined: a streamed message's text is copied once
#: per this many chunks instead of at every chunk.
_MAX_PIECES = 256

_HANDLERS: dict[type[Any], Any] = {
    UserMessage: ChatView._on_user,
    MessageChunk: ChatView._on_text,
    Reasoning: ChatView._on_reasoning,
    ToolCall: ChatView._on_tool_call,
    ToolProgress: ChatView._on_tool_progress,
    ToolUpdate: ChatView._on_tool_update,
    PermissionRequest: ChatView._on_permission,
    PermissionCancelled: ChatView._on_permission_cancelled,
    QuestionRequest: ChatView._on_question,
    PermissionResolved: ChatView._on_resolved,
    Complete: ChatView._on_complete,
    ErrorEvent: ChatView._on_error,
    SessionStatus: ChatView._on_status,
    AvailableCommands: ChatView._on_commands,
    ModeChanged: ChatView._on_mode,
    ContextWindow: ChatView._on_context,
    TaskEvent: ChatView._on_task,
    CompactBoundary: ChatView._on_compact,
    RateLimit: ChatView._on_rate_limit,
    ApiRetry: ChatView._on_retry,
}
