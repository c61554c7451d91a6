"""The agent's questions in ACP (pure): a form elicitation, or permission requests as fallback.

An editor that advertises form elicitation (``clientCapabilities.elicitation.form``) gets one
``elicitation/create`` per :class:`~adapter.events.QuestionRequest`: a field per question
(``question_<n>``: a string with a titled ``oneOf`` for a single choice, an array whose
``items.anyOf`` are the options for a multi-select), each followed by an optional free-text
field ``question_<n>_custom`` (the CLI's own "Other"), nothing required (a question left
blank is skipped). ``accept`` answers with what was picked (the free text joins a
multi-select's picks; for a single choice it is the answer when nothing was picked),
``decline`` declines, ``cancel`` (or any action we do not know) declines and cancels the turn.

Any other editor gets one ``session/request_permission`` per question whose options are the
answers (``answer_<k>``, kind ``allow_once``) and a ``decline`` (``reject_once``); a
multi-select question takes one pick there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..events import Question, QuestionRequest

__all__ = (
    "DECLINE_OPTION",
    "Outcome",
    "answers_of_elicitation",
    "answers_of_permission",
    "elicitation_params",
    "permission_params",
)

#: The option id that declines a question asked through a permission request.
DECLINE_OPTION = "decline"

#: ``answer`` with the answers, ``decline``, or ``cancel`` (decline and cancel the turn).
Outcome = tuple[Literal["answer", "decline", "cancel"], dict[str, list[str]]]


def _field(index: int) -> str:
    return f"question_{index}"


def _custom(index: int) -> str:
    return f"question_{index}_custom"


def _options(question: Question) -> list[dict[str, Any]]:
    out = []
    for option in question.options:
        item: dict[str, Any] = {"const": option.label, "title": option.label}
        if option.description:
            item["description"] = option.description
        out.append(item)
    return out


def elicitation_params(session_id: str, event: QuestionRequest) -> dict[str, Any]:
    """The params of ``elicitation/create`` (form mode) for ``event``."""
    single = len(event.questions) == 1
    properties: dict[str, Any] = {}
    for index, question in enumerate(event.questions):
        field: dict[str, Any]
        if question.multi_select:
            field = {"type": "array", "items": {"anyOf": _options(question)}}
        else:
            field = {"type": "string", "oneOf": _options(question)}
        if question.header:
            field["title"] = question.header
        if not single:  # one question's text is the message
            field["description"] = question.question
        properties[_field(index)] = field
        properties[_custom(index)] = {
            "type": "string",
            "title": "Other",
            "description": "Your own answer"
            + (", added to your picks" if question.multi_select else ", instead of a pick")
            + " (optional).",
        }
    params: dict[str, Any] = {
        "sessionId": session_id,
        "mode": "form",
        "message": event.questions[0].question if single else "Please answer these questions.",
        "requestedSchema": {"type": "object", "properties": properties},
    }
    if event.tool_call_id:
        params["toolCallId"] = event.tool_call_id
    return params


def _picks(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [str(v) for v in values if isinstance(v, str | int | float) and str(v).strip()]


def answers_of_elicitation(event: QuestionRequest, result: Any) -> Outcome:
    """What the editor's answer to :func:`elicitation_params` means (never raises)."""
    action = result.get("action") if isinstance(result, Mapping) else None
    if action == "decline":
        return "decline", {}
    if action != "accept":
        return "cancel", {}
    content = result.get("content")
    content = content if isinstance(content, Mapping) else {}
    answers: dict[str, list[str]] = {}
    for index, question in enumerate(event.questions):
        picks = _picks(content.get(_field(index)))
        custom = content.get(_custom(index))
        own = custom.strip() if isinstance(custom, str) else ""
        if question.multi_select:
            chosen = picks + ([own] if own else [])
        else:
            chosen = picks[:1] or ([own] if own else [])
        if chosen:
            answers[question.question] = chosen
    return "answer", answers


def permission_params(
    session_id: str, event: QuestionRequest, index: int, cwd: str | None = None
) -> dict[str, Any]:
    """The params of the ``session/request_permission`` that asks question ``index``."""
    question = event.questions[index]
    options = [
        {"optionId": f"answer_{k}", "name": option.label, "kind": "allow_once"}
        for k, option in enumerate(question.options)
    ]
    options.append({"optionId": DECLINE_OPTION, "name": "Decline to answer", "kind": "reject_once"})
    title = f"{question.header}: {question.question}" if question.header else question.question
    return {
        "sessionId": session_id,
        "toolCall": {
            "toolCallId": event.tool_call_id or event.pending_id,
            "title": title,
            "kind": "other",
            "status": "pending",
            "rawInput": {"question": question.question},
        },
        "options": options,
    }


def answers_of_permission(
    event: QuestionRequest, index: int, option_id: str | None
) -> tuple[Literal["answer", "decline", "cancel"], str]:
    """The label chosen for question ``index`` from a permission answer: ``("answer",
    label)``; ``decline`` for the decline option or an unknown id, ``cancel`` when the editor
    cancelled the request."""
    if option_id is None:
        return "cancel", ""
    options = event.questions[index].options
    if option_id.startswith("answer_") and option_id[7:].isdigit():
        k = int(option_id[7:])
        if k < len(options):
            return "answer", options[k].label
    return "decline", ""
