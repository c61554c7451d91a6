"""A thread's messages, kept from the AG-UI events of its runs (pure).

:class:`MessageLog` applies the events the bridge emits (and the messages a client sends)
the way ``@ag-ui/client`` builds its message list, so ``agent/connect`` can answer with a
``MESSAGES_SNAPSHOT`` that matches what the page had: user messages, assistant messages with
their text and tool calls, tool results, reasoning. Bounded: the oldest messages go first
past ``max_messages``.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .events import (
    AguiEvent,
    ReasoningMessageContent,
    ReasoningMessageStart,
    TextMessageContent,
    TextMessageStart,
    ToolCallArgs,
    ToolCallResult,
    ToolCallStart,
)

__all__ = ("MessageLog",)


class MessageLog:
    """AG-UI ``Message`` objects by id, in order of appearance."""

    def __init__(self, messages: list[dict[str, Any]] | None = None, *, max_messages: int = 1000):
        self.max_messages = max_messages
        self._messages: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._calls: dict[str, dict[str, Any]] = {}  # tool call id -> its toolCalls entry
        self._owners: dict[str, str] = {}  # tool call id -> the id of its message
        # Streamed text by message id, joined when read (appending to a str is quadratic).
        self._parts: dict[str, list[str]] = {}
        # What changed since the last drain(), for the thread's append-only log: messages
        # dropped, messages to put whole (insertion order is the order new ones appeared),
        # and the text streamed onto the others.
        self._dropped: list[str] = []
        self._changed: dict[str, None] = {}
        self._more: dict[str, list[str]] = {}
        for message in messages or ():
            self.add(message)

    @property
    def dirty(self) -> bool:
        """Whether something changed since the last :meth:`drain` (or :meth:`clear_dirty`)."""
        return bool(self._changed or self._more or self._dropped)

    def messages(self, *, copy_: bool = True) -> list[dict[str, Any]]:
        """The messages, oldest first: a deep copy, or with ``copy_=False`` the log's own
        dicts (to encode at once, before the log changes again)."""
        for message_id in self._parts:
            self._join(message_id)
        current = list(self._messages.values())
        return copy.deepcopy(current) if copy_ else current

    def _join(self, message_id: str) -> None:
        parts = self._parts.get(message_id)
        if parts is None:
            return
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        message = self._messages.get(message_id)
        if message is not None:
            message["content"] = parts[0] if parts else ""

    def drain(self) -> dict[str, Any] | None:
        """What changed since the last drain, as a thread log record (see
        :mod:`.threadlog`; the log's own dicts, to encode at once), or ``None``."""
        if not self.dirty:
            return None
        record: dict[str, Any] = {}
        if self._dropped:
            record["drop"] = self._dropped
        if self._changed:
            for message_id in self._changed:
                self._join(message_id)
            record["put"] = [self._messages[message_id] for message_id in self._changed]
        if self._more:
            record["more"] = {key: "".join(parts) for key, parts in self._more.items()}
        self.clear_dirty()
        return record

    def __len__(self) -> int:
        return len(self._messages)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def clear_dirty(self) -> None:
        """Mark the current content as saved."""
        self._dropped = []
        self._changed = {}
        self._more = {}

    def add(self, message: dict[str, Any]) -> None:
        """Add (or replace) a message a client sent (user, tool, ...)."""
        message_id = message.get("id")
        if not isinstance(message_id, str):
            return
        message = copy.deepcopy(message)
        self._put(message_id, message)
        for call in message.get("toolCalls") or ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                self._calls[call["id"]] = call
                self._owners[call["id"]] = message_id

    def apply(self, event: AguiEvent) -> None:
        """Apply one emitted event (most kinds change no message: one lookup decides)."""
        handler = _APPLY.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_text_start(self, event: TextMessageStart) -> None:
        self._put(event.message_id, {"id": event.message_id, "role": "assistant", "content": ""})

    def _on_reasoning_start(self, event: ReasoningMessageStart) -> None:
        self._put(event.message_id, {"id": event.message_id, "role": "reasoning", "content": ""})

    def _on_content(self, event: TextMessageContent | ReasoningMessageContent) -> None:
        self._append(event.message_id, event.delta)

    def _on_tool_call_start(self, event: ToolCallStart) -> None:
        owner_id = event.parent_message_id or event.tool_call_id
        owner = self._messages.get(owner_id)
        if owner is None or owner.get("role") != "assistant":
            owner = {"id": owner_id, "role": "assistant"}
            self._put(owner_id, owner)
        call = {
            "id": event.tool_call_id,
            "type": "function",
            "function": {"name": event.tool_call_name, "arguments": ""},
        }
        owner.setdefault("toolCalls", []).append(call)
        self._calls[event.tool_call_id] = call
        self._owners[event.tool_call_id] = owner_id
        self._touch(owner_id)

    def _on_tool_call_args(self, event: ToolCallArgs) -> None:
        known = self._calls.get(event.tool_call_id)
        if known is not None:
            known["function"]["arguments"] += event.delta
            holder = self._owners.get(event.tool_call_id)
            if holder is not None and holder in self._messages:  # (gone: replaced)
                self._touch(holder)

    def _on_tool_call_result(self, event: ToolCallResult) -> None:
        self._put(
            event.message_id,
            {
                "id": event.message_id,
                "role": "tool",
                "toolCallId": event.tool_call_id,
                "content": event.content,
            },
        )

    def _append(self, message_id: str, delta: str) -> None:
        if message_id not in self._messages:
            return
        parts = self._parts.get(message_id)
        if parts is None:
            parts = self._parts[message_id] = [str(self._messages[message_id].get("content") or "")]
        parts.append(delta)
        if message_id not in self._changed:
            self._more.setdefault(message_id, []).append(delta)

    def _touch(self, message_id: str) -> None:
        """The message changed other than by streamed text: it is put whole."""
        self._changed[message_id] = None
        self._more.pop(message_id, None)

    def _put(self, message_id: str, message: dict[str, Any]) -> None:
        self._messages[message_id] = message
        self._touch(message_id)
        self._parts.pop(message_id, None)
        while len(self._messages) > self.max_messages:
            dropped_id, dropped = self._messages.popitem(last=False)
            self._parts.pop(dropped_id, None)
            self._dropped.append(dropped_id)
            self._changed.pop(dropped_id, None)
            self._more.pop(dropped_id, None)
            for call in dropped.get("toolCalls") or ():
                if isinstance(call, dict):
                    self._calls.pop(call.get("id"), None)  # type: ignore[arg-type]
                    self._owners.pop(call.get("id"), None)  # type: ignore[arg-type]


#: What :meth:`MessageLog.apply` does with each kind of event (the others change nothing).
_APPLY: dict[type[Any], Callable[[MessageLog, Any], None]] = {
    TextMessageStart: MessageLog._on_text_start,
    TextMessageContent: MessageLog._on_content,
    ReasoningMessageStart: MessageLog._on_reasoning_start,
    ReasoningMessageContent: MessageLog._on_content,
    ToolCallStart: MessageLog._on_tool_call_start,
    ToolCallArgs: MessageLog._on_tool_call_args,
    ToolCallResult: MessageLog._on_tool_call_result,
}
