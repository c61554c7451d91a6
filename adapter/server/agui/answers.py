"""The page's answers to approval and question calls, applied to the session."""

from __future__ import annotations

from typing import Any

from ...backend import SessionBackend
from ...errors import InvalidAnswerError, UnknownPermissionError
from .events import CustomEvent
from .inputs import decision_from_answer, question_answer

__all__ = ("apply_answer", "resume_content")


def resume_content(entry: dict[str, Any], call_id: str) -> Any:
    """What an AG-UI 1.0 ``resume`` entry answers, as the call's result would: its
    ``payload`` when ``resolved``; otherwise (``cancelled``) a denial or a decline."""
    if entry.get("status") == "resolved":
        return entry.get("payload")
    if call_id.startswith("question-"):
        return {"decline": True, "message": "the user cancelled the question"}
    return {"behavior": "deny", "message": "the user cancelled the approval"}


async def apply_answer(
    backend: SessionBackend, session_id: str, pending_id: str, call_id: str, content: Any
) -> CustomEvent | None:
    """Answer the request behind the page's call ``call_id`` with the call's result
    ``content``; a ``claudecode.error`` event to show when the request is no longer open.

    A question whose answers do not fit it is declined with the reason, so the turn never
    waits for an answer the page believes it gave.
    """
    try:
        if not call_id.startswith("question-"):
            decision = decision_from_answer(content)
            await backend.answer_permission(session_id, pending_id, decision)
            return None
        kind, answers, why = question_answer(content)
        if kind == "answer":
            try:
                await backend.answer_question(session_id, pending_id, answers)
                return None
            except InvalidAnswerError as exc:
                why = f"the page's answer did not fit the questions: {exc}"
        await backend.decline_question(session_id, pending_id, why)
    except UnknownPermissionError as exc:
        return CustomEvent(
            name="claudecode.error",
            value={"message": f"approval not applied: {exc}", "kind": "expired"},
        )
    return None
