"""The entries of a chat view: what a UI draws, one immutable struct per item.

Every entry has a stable ``id`` (deterministic: the same events always give the same ids)
and a ``parent_id``: the tool call id of the ``Agent``/``Task`` call whose sub-agent
produced it (``None`` on the main thread) — a UI nests sub-agent work under that card.
Entries are tagged by ``kind`` in JSON.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

from normalize import ActionType, NormalizedPayload

from ..events import Question

__all__ = (
    "AssistantText",
    "ChatEntry",
    "CommandEntry",
    "ErrorEntry",
    "InterruptEntry",
    "NoticeEntry",
    "PermissionEntry",
    "QuestionEntry",
    "ReadGroup",
    "ReasoningEntry",
    "ToolEntry",
    "UserEntry",
)


class _Entry(msgspec.Struct, tag_field="kind", kw_only=True, frozen=True, omit_defaults=True):
    id: str
    parent_id: str | None = None


class UserEntry(_Entry, frozen=True, tag="user"):
    """A prompt. ``text`` is what the person wrote (tags the CLI adds removed);
    ``selections`` are IDE selections / opened files sent along with it."""

    text: str
    images: int = 0
    selections: tuple[str, ...] = ()


class CommandEntry(_Entry, frozen=True, tag="command"):
    """A slash command (``/compact``, ``/cost`` ...) and, once known, its output."""

    name: str
    args: str = ""
    output: str | None = None


class InterruptEntry(_Entry, frozen=True, tag="interrupt"):
    """The person interrupted the turn."""

    text: str = "Interrupted"


class AssistantText(_Entry, frozen=True, tag="text"):
    """Assistant text, growing while it streams (one entry per run of text)."""

    message_id: str
    text: str


class ReasoningEntry(_Entry, frozen=True, tag="reasoning"):
    """The model's thinking (a UI shows it collapsed)."""

    message_id: str
    text: str


class ToolEntry(_Entry, frozen=True, tag="tool"):
    """A tool call and, once it finished, its result (``normalized`` holds both).

    ``id`` is the tool call id. ``status``: ``running``, ``complete`` or ``error``.
    """

    tool_name: str
    title: str
    normalized: NormalizedPayload
    action_type: ActionType = "other"
    status: Literal["running", "complete", "error"] = "running"
    elapsed_seconds: float | None = None
    progress: str | None = None
    #: Sub-agent / background task state reported by ``task`` events (Agent calls).
    task_status: str | None = None


class ReadGroup(_Entry, frozen=True, tag="read_group"):
    """Consecutive successful file reads shown as one entry.

    ``id`` is the id of the first read's tool call, so it never changes while reads join.
    """

    reads: tuple[ToolEntry, ...]


class PermissionEntry(_Entry, frozen=True, tag="permission"):
    """A permission request: ``open`` until answered, withdrawn or the turn ends.

    ``decision`` (``allow``, ``allow_always``, ``deny``) and ``by`` (``user``, ``policy``)
    once a ``permission_resolved`` said how it was answered.
    """

    pending_id: str
    tool_name: str
    title: str
    input: dict[str, Any]
    normalized: NormalizedPayload
    action_type: ActionType = "other"
    tool_call_id: str | None = None
    decision_reason: str | None = None
    blocked_path: str | None = None
    state: Literal["open", "closed"] = "open"
    decision: str | None = None
    by: str | None = None


class QuestionEntry(_Entry, frozen=True, tag="question"):
    """The agent's questions (``AskUserQuestion``): ``open`` until ``answered`` (``answers``:
    question text -> the chosen labels or free text), ``declined`` (``message``: why) or
    ``cancelled`` (withdrawn, timed out, or the turn ended); ``by``: ``user`` or ``policy``."""

    pending_id: str
    questions: tuple[Question, ...]
    tool_call_id: str | None = None
    state: Literal["open", "answered", "declined", "cancelled"] = "open"
    answers: dict[str, list[str]] | None = None
    message: str | None = None
    by: str | None = None


class ErrorEntry(_Entry, frozen=True, tag="error"):
    """An error the session reported (API error, CLI exit, ...).

    ``message`` is the text as the CLI wrote it (``API Error: 529 ...``), ``status`` the
    HTTP status of an API error and ``request_id`` its failed request's id. When the CLI
    also wrote that text as the turn's assistant message (its synthetic ``API Error``
    message, or a failed turn's result), this one entry stands for both: the text is not
    shown twice.
    """

    message: str
    error_kind: str = "execution"
    status: int | None = None
    request_id: str | None = None


class NoticeEntry(_Entry, frozen=True, tag="notice"):
    """Something worth a line in the chat: compaction, a rate limit, an API retry."""

    text: str
    notice_kind: str = "info"


ChatEntry: TypeAlias = (
    UserEntry
    | CommandEntry
    | InterruptEntry
    | AssistantText
    | ReasoningEntry
    | ToolEntry
    | ReadGroup
    | PermissionEntry
    | QuestionEntry
    | ErrorEntry
    | NoticeEntry
)
