"""ExitPlanMode and AskUserQuestion."""

from __future__ import annotations

from normalize import (
    AskUser,
    Question,
    QuestionOption,
    ShowPlan,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)


def test_exit_plan_mode_approved() -> None:
    """ExitPlanMode: the plan text; a non-error result means approved."""
    payload = normalize_tool_use("ExitPlanMode", {"plan": "# Plan\n1. Do it"})
    assert payload == ShowPlan(tool="ExitPlanMode", plan="# Plan\n1. Do it")
    assert title_for(payload) == "Present plan"
    after = normalize_tool_result(
        payload,
        content="User has approved your plan.",
        tool_use_result={"plan": "# Plan\n1. Do it", "isAgent": False, "filePath": "/p/plan.md"},
    )
    assert isinstance(after, ShowPlan)
    assert (after.approved, after.file_path) == (True, "/p/plan.md")


def test_exit_plan_mode_plan_only_in_result_and_rejected() -> None:
    """Newer CLIs may send the plan in the result only; an error result means rejected."""
    payload = normalize_tool_use("ExitPlanMode", {})
    after = normalize_tool_result(
        payload,
        content="The user doesn't want to proceed with this tool use.",
        is_error=True,
        tool_use_result={"plan": "Step 1"},
    )
    assert isinstance(after, ShowPlan)
    assert (after.plan, after.approved) == ("Step 1", False)
    assert after.error is not None


QUESTIONS = {
    "questions": [
        {
            "question": "Which database?",
            "header": "DB",
            "multiSelect": False,
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite"},
            ],
        },
        {"question": "Which features?", "header": "Features", "multiSelect": True, "options": []},
    ]
}


def test_ask_user_question() -> None:
    """AskUserQuestion: questions with header, options and multi-select, for a UI to render."""
    payload = normalize_tool_use("AskUserQuestion", QUESTIONS)
    assert isinstance(payload, AskUser)
    assert payload.questions == (
        Question(
            question="Which database?",
            header="DB",
            options=(
                QuestionOption(label="Postgres", description="Relational"),
                QuestionOption(label="SQLite"),
            ),
        ),
        Question(question="Which features?", header="Features", multi_select=True),
    )
    assert title_for(payload) == "Ask: Which database?"


def test_ask_user_answers() -> None:
    """The answers of the result are attached to their questions."""
    payload = normalize_tool_use("AskUserQuestion", QUESTIONS)
    after = normalize_tool_result(
        payload,
        content='User has answered your questions: "Which database?"="SQLite".',
        tool_use_result={**QUESTIONS, "answers": {"Which database?": "SQLite"}},
    )
    assert isinstance(after, AskUser)
    assert [q.answer for q in after.questions] == ["SQLite", None]
