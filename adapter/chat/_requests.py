"""The chat view's entries for open requests: permission requests and the agent's questions,
from ``permission_request`` / ``question_request`` to their ``permission_resolved``, or their
withdrawal (:class:`RequestEntries`, a base of :class:`~adapter.chat.ChatView`)."""

from __future__ import annotations

from typing import Any

import msgspec

from ..events import PermissionCancelled, PermissionRequest, PermissionResolved, QuestionRequest
from .entries import ChatEntry, PermissionEntry, QuestionEntry

__all__ = ("RequestEntries",)


class RequestEntries:
    """Folds the request events; the view provides its entries and how they change."""

    _entries: dict[str, ChatEntry]
    #: The permission entries, in the order of the entries (a closed one stays, so that one
    #: reopened under its id keeps its place): a tool result closes its call's requests,
    #: and scanning every entry for them at every result cost time quadratic in the length
    #: of the chat.
    _permissions: dict[str, None]

    def _add(self, entry: ChatEntry) -> None:
        raise NotImplementedError

    def _set(self, entry: ChatEntry) -> None:
        raise NotImplementedError

    def _join_pieces(self) -> None:
        raise NotImplementedError

    def open_permissions(self) -> list[PermissionEntry]:
        """The permission requests still open."""
        self._join_pieces()
        found = []
        for entry_id in self._permissions:
            entry = self._entries.get(entry_id)
            if isinstance(entry, PermissionEntry) and entry.state == "open":
                found.append(entry)
        return found

    def open_questions(self) -> list[QuestionEntry]:
        """The questions still waiting for an answer."""
        return [
            e for e in self._entries.values() if isinstance(e, QuestionEntry) and e.state == "open"
        ]

    def _on_permission(self, event: PermissionRequest) -> None:
        entry_id = f"permission:{event.pending_id}"
        self._permissions[entry_id] = None
        self._add(
            PermissionEntry(
                id=entry_id,
                parent_id=event.parent_tool_call_id,
                pending_id=event.pending_id,
                tool_name=event.tool_name,
                title=event.title,
                input=event.input,
                normalized=event.normalized,
                action_type=event.action_type,
                tool_call_id=event.tool_call_id,
                decision_reason=event.decision_reason,
                blocked_path=event.blocked_path,
            )
        )

    def _close_permission(self, entry_id: str) -> None:
        entry = self._entries.get(entry_id)
        if isinstance(entry, PermissionEntry) and entry.state == "open":
            self._set(msgspec.structs.replace(entry, state="closed"))

    def _close_permissions_of(self, tool_id: str) -> None:
        for entry in self.open_permissions():
            if entry.tool_call_id == tool_id:
                self._close_permission(entry.id)

    def _on_permission_cancelled(self, event: PermissionCancelled) -> None:
        self._close_permission(f"permission:{event.pending_id}")
        self._cancel_question(f"question:{event.pending_id}")

    def _on_question(self, event: QuestionRequest) -> None:
        self._add(
            QuestionEntry(
                id=f"question:{event.pending_id}",
                parent_id=event.parent_tool_call_id,
                pending_id=event.pending_id,
                questions=tuple(event.questions),
                tool_call_id=event.tool_call_id,
            )
        )

    def _cancel_question(self, entry_id: str) -> None:
        entry = self._entries.get(entry_id)
        if isinstance(entry, QuestionEntry) and entry.state == "open":
            self._set(msgspec.structs.replace(entry, state="cancelled"))

    def _on_resolved(self, event: PermissionResolved) -> None:
        question = self._entries.get(f"question:{event.pending_id}")
        if isinstance(question, QuestionEntry):
            state: Any = "answered" if event.decision == "answered" else "declined"
            self._set(
                msgspec.structs.replace(
                    question,
                    state=state,
                    answers=event.answers,
                    message=event.message,
                    by=event.by,
                )
            )
            return
        permission = self._entries.get(f"permission:{event.pending_id}")
        if isinstance(permission, PermissionEntry):
            self._set(
                msgspec.structs.replace(
                    permission, state="closed", decision=event.decision, by=event.by
                )
            )
