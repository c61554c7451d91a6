"""The values a :class:`~adapter.chat.view.ChatView` hands out: what one fold changed
(:class:`ChatDelta`), the whole chat at once (:class:`ChatSnapshot`) and the usage summed over
its turns (:class:`ChatUsage`). Frozen and JSON-serializable; the view builds them."""

from __future__ import annotations

import msgspec

from normalize import TodoItem

from ..events import ContextWindow
from .entries import ChatEntry

__all__ = ("ChatDelta", "ChatSnapshot", "ChatTurn", "ChatUsage")


class ChatDelta(msgspec.Struct, kw_only=True, frozen=True):
    """What one :meth:`ChatView.apply` changed. Apply ``removed`` (ids), then ``updated``
    (replace in place by id), then ``added`` (append in order)."""

    added: tuple[ChatEntry, ...] = ()
    updated: tuple[ChatEntry, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.removed)


class ChatUsage(msgspec.Struct, kw_only=True, frozen=True):
    """Usage and cost summed over the turns seen."""

    cost_usd: float = 0.0
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    duration_ms: float = 0.0


class ChatTurn(msgspec.Struct, kw_only=True, frozen=True):
    """A finished turn the conversation can be resumed or forked at.

    ``number`` counts them from 1; ``last_message_uuid`` is the turn's last assistant message
    (the CLI's ``--resume-session-at``) in the CLI session ``cli_session_id`` (a resumed
    session's stored turns are its source's, its own turns a fork's new id); ``after`` the id
    of the main thread's last entry when the turn ended (where a UI puts a "fork from
    here")."""

    number: int
    last_message_uuid: str
    cli_session_id: str | None = None
    after: str | None = None


class ChatSnapshot(msgspec.Struct, kw_only=True, frozen=True):
    """Everything a UI needs to draw the chat at once (JSON-serializable).

    ``last_seq`` is the ``seq`` of the newest event folded in: a client continues with the
    events after it. ``turns`` are the finished turns, oldest first.
    """

    entries: tuple[ChatEntry, ...] = ()
    todos: tuple[TodoItem, ...] = ()
    usage: ChatUsage = ChatUsage()
    context_window: ContextWindow | None = None
    model: str | None = None
    permission_mode: str | None = None
    cli_session_id: str | None = None
    commands: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    turns: tuple[ChatTurn, ...] = ()
    last_seq: int = 0
