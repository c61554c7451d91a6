"""Answers to the agent's questions (``AskUserQuestion``), checked and put as the CLI reads them.

A :class:`~adapter.events.QuestionRequest` is answered with ``{question text: [labels]}``:
the chosen option labels, or one free-text answer (the CLI's own "Other"); an empty list (or a
question left out) skips that question. The CLI's tool reads the answers from the permission
answer's updated input, as ``{**original input, "answers": {question text: "label"}}``, a
multi-select's labels joined with ``", "`` (a label that holds ``", "`` or a double quote
JSON-quoted, so the tool splits it back into the same items) — the form the pinned CLI turns
into the model's ``"question"="answer"`` tool result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from .errors import InvalidAnswerError
from .events import PermissionResolved, QuestionRequest
from .policies import PermissionDecision

__all__ = (
    "answer",
    "answers_of_input",
    "as_question_answer",
    "AUTONOMOUS_DECLINE",
    "check_answers",
    "decline",
    "decline_message",
    "InvalidAnswerError",
    "Settlement",
    "updated_input",
)

#: What answers the CLI and what every subscriber is told.
Settlement: TypeAlias = tuple[PermissionDecision, PermissionResolved]

#: What the model reads when the ``autonomous`` policy declines its question.
AUTONOMOUS_DECLINE = (
    "Nobody is here to answer questions (the session runs unattended): "
    "decide for yourself and go on."
)

#: A free-text answer or label longer than this is refused (it goes into the model's context).
MAX_ANSWER_CHARS = 10_000


def check_answers(
    request: QuestionRequest, answers: Mapping[str, Sequence[str]]
) -> dict[str, list[str]]:
    """``answers`` checked against ``request``: question text -> non-empty list of answers.

    Labels need not be among the options (a free-text answer); a skipped question is left
    out of the result.

    Raises:
        InvalidAnswerError: a question the request does not ask, an answer that is not a
            string, is empty or longer than :data:`MAX_ANSWER_CHARS`, or more than one for a
            single-choice question.
    """
    asked = {q.question: q for q in request.questions}
    if not isinstance(answers, Mapping):
        raise InvalidAnswerError("answers must map each question's text to a list of answers")
    checked: dict[str, list[str]] = {}
    for text, picks in answers.items():
        question = asked.get(text) if isinstance(text, str) else None
        if question is None:
            raise InvalidAnswerError(
                f"no such question in request {request.pending_id!r}: {text!r}"
            )
        if isinstance(picks, str) or not isinstance(picks, Sequence):
            raise InvalidAnswerError(f"the answer to {text!r} must be a list of strings")
        items = list(picks)
        for item in items:
            if not isinstance(item, str) or not item.strip():
                raise InvalidAnswerError(f"an answer to {text!r} is empty or not a string")
            if len(item) > MAX_ANSWER_CHARS:
                raise InvalidAnswerError(f"an answer to {text!r} is too long")
        if len(items) > 1 and not question.multi_select:
            raise InvalidAnswerError(f"{text!r} takes one answer, not {len(items)}")
        if items:
            checked[text] = items
    return checked


def _join(items: Sequence[str]) -> str:
    return ", ".join(json.dumps(item) if ", " in item or '"' in item else item for item in items)


def updated_input(
    original: Mapping[str, Any], answers: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """The tool input that answers: the original questions with ``answers`` as the CLI reads
    them (``{question: "label"}``, a multi-select's labels joined)."""
    return {**original, "answers": {text: _join(items) for text, items in answers.items()}}


def answers_of_input(value: Any) -> dict[str, list[str]] | None:
    """The answers in an ``updated_input`` given as a plain permission answer (a policy, an
    older client), as lists; ``None`` when it carries no ``answers`` mapping."""
    raw = value.get("answers") if isinstance(value, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, list[str]] = {}
    for text, answer in raw.items():
        if isinstance(text, str) and isinstance(answer, str) and answer:
            out[text] = [answer]
        elif isinstance(text, str) and isinstance(answer, list):
            out[text] = [a for a in answer if isinstance(a, str) and a]
    return out


def decline_message(message: str | None) -> str:
    """What the model reads when the user declines to answer."""
    reason = (message or "").strip()
    if reason:
        return f"The user declined to answer the questions: {reason}"
    return "The user declined to answer the questions; go on without their answers."


def answer(
    question: QuestionRequest,
    tool_input: Mapping[str, Any],
    answers: Mapping[str, Sequence[str]],
    by: Literal["user", "policy"],
) -> Settlement:
    """Answering ``question`` (answers already checked): the allow the CLI gets and the event."""
    resolved = PermissionResolved(
        pending_id=question.pending_id,
        decision="answered",
        by=by,
        answers={text: list(picks) for text, picks in answers.items()},
    )
    return PermissionDecision("allow", updated_input=updated_input(tool_input, answers)), resolved


def decline(
    question: QuestionRequest, for_model: str, message: str | None, by: Literal["user", "policy"]
) -> Settlement:
    """Declining ``question``: a denial whose message (``for_model``) the model reads, so the
    turn goes on without the answers; ``message`` is what the event reports."""
    resolved = PermissionResolved(
        pending_id=question.pending_id, decision="declined", by=by, message=message or None
    )
    return PermissionDecision("deny", for_model), resolved


def as_question_answer(
    question: QuestionRequest,
    tool_input: Mapping[str, Any],
    decision: PermissionDecision,
    by: Literal["user", "policy"],
) -> Settlement | None:
    """A permission answer given to a question (a custom policy, an older client): ``deny``
    declines it, ``allow`` with ``updated_input={"answers": ...}`` answers it (unchecked, as
    the CLI reads them); ``None`` for an allow without answers, which answers nothing."""
    if decision.behavior == "deny":
        text = decision.message or decline_message(None)
        return decline(question, text, decision.message or None, by)
    answers = answers_of_input(decision.updated_input)
    return None if answers is None else answer(question, tool_input, answers, by)
