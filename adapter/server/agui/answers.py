"""The page's answers to approval and question calls, applied to the session."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import anyio

from ...backend import SessionBackend
from ...errors import InvalidAnswerError, UnknownPermissionError
from ...events import Complete
from ...policies import PermissionDecision
from .events import CustomEvent
from .inputs import decision_from_answer, question_answer

__all__ = ("WITHDRAWN", "apply_answer", "resume_content", "withdraw")

#: Why a request the page moved on from was denied (what the model reads).
WITHDRAWN = "the user sent a new message instead of answering"


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


class _Waiting(Protocol):
    """What :func:`withdraw` needs of a thread."""

    awaiting: dict[str, str]  # the page's call id -> pending id
    last_seq: int


async def withdraw(
    backend: SessionBackend,
    session_id: str,
    thread: _Waiting,
    answers: Sequence[Mapping[str, Any]],
    grace: float,
) -> int:
    """Withdraw the requests the page moved on from (those of ``thread.awaiting`` not among
    ``answers``): approvals denied, questions declined, the turn that waited for them
    interrupted; then follow the session to that turn's end (at most ``grace`` seconds).
    Returns the ``seq`` the thread has seen since.

    A page that sends a new message past an open approval will never answer it: left open,
    the session would say "waiting" and queue the new message behind it until the
    permission timeout.
    """
    answered = {str(m.get("toolCallId")) for m in answers}
    left = {c: p for c, p in thread.awaiting.items() if c not in answered}
    if not left:
        return thread.last_seq
    for call_id in left:
        del thread.awaiting[call_id]
    last = thread.last_seq
    async with backend.subscribe(session_id, after_seq=last) as stream:
        asked = denied = False
        for call_id, pending_id in left.items():
            with contextlib.suppress(UnknownPermissionError):  # answered or expired meanwhile
                if call_id.startswith("question-"):
                    await backend.decline_question(session_id, pending_id, WITHDRAWN)
                    asked = True
                else:
                    decision = PermissionDecision("deny", WITHDRAWN, interrupt=True)
                    await backend.answer_permission(session_id, pending_id, decision)
                    denied = True
        if asked:  # a declined question lets the turn go on: it ends here
            await backend.interrupt(session_id)
        if not (asked or denied):
            return last  # none was still open: no turn waited for them
        with anyio.move_on_after(grace):
            while True:
                batch = await stream.receive_batch()
                last = batch[-1].seq if batch else last
                if any(type(event) is Complete for event in batch):
                    break
    return last
