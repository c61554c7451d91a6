"""ExitPlanMode → ``show_plan``; AskUserQuestion → ``ask_user``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ._coerce import Missing, as_bool, as_list, as_map, as_str, first_str
from ._result import ToolResult
from .payloads import AskUser, Question, QuestionOption, ShowPlan

__all__ = ("ask_result", "plan_result", "use_ask_user", "use_exit_plan_mode")


def use_exit_plan_mode(name: str, data: Mapping[str, Any]) -> ShowPlan:
    """``ExitPlanMode {plan}`` (newer CLIs may send the plan only in the result)."""
    return ShowPlan(tool=name, plan=as_str(data.get("plan")) or "")


def plan_result(payload: ShowPlan, result: ToolResult) -> ShowPlan:
    """The plan and its file from ``{plan, filePath}``; an error result means rejected."""
    data = result.structured
    return msgspec.structs.replace(
        payload,
        plan=payload.plan or as_str(data.get("plan")) or "",
        file_path=first_str(data, "filePath", "file_path") or payload.file_path,
        approved=not result.is_error,
        error=result.error,
    )


def _question(raw: object) -> Question | None:
    data = as_map(raw)
    text = as_str(data.get("question"))
    if text is None:
        return None
    options: list[QuestionOption] = []
    for option in as_list(data.get("options")):
        fields = as_map(option)
        label = as_str(fields.get("label")) if fields else as_str(option)
        if label is not None:
            options.append(
                QuestionOption(label=label, description=as_str(fields.get("description")))
            )
    return Question(
        question=text,
        header=as_str(data.get("header")),
        options=tuple(options),
        multi_select=as_bool(data.get("multiSelect", data.get("multi_select"))),
    )


def use_ask_user(name: str, data: Mapping[str, Any]) -> AskUser:
    """``AskUserQuestion {questions: [{question, header, options: [{label, description}],
    multiSelect}]}``."""
    raw = data.get("questions")
    if not isinstance(raw, list):
        raise Missing
    questions = tuple(q for q in map(_question, raw) if q is not None)
    return AskUser(tool=name, questions=questions)


def ask_result(payload: AskUser, result: ToolResult) -> AskUser:
    """Attach the answers of ``{answers: {question: answer}}`` to their questions."""
    if result.is_error:
        return msgspec.structs.replace(payload, error=result.error)
    answers = as_map(result.structured.get("answers"))
    questions = tuple(
        msgspec.structs.replace(q, answer=as_str(answers.get(q.question)) or q.answer)
        for q in payload.questions
    )
    return msgspec.structs.replace(payload, questions=questions)
