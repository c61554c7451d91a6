"""The question parser and the answer checks (adapter._plain.question_event, adapter.questions),
on arbitrary input: never an exception but the typed one, and answers the CLI reads back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter._plain import question_event
from adapter.events import PermissionRequest, Question, QuestionOption, QuestionRequest
from adapter.questions import (
    InvalidAnswerError,
    answers_of_input,
    check_answers,
    decline_message,
    updated_input,
)
from normalize import normalize_tool_use

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
QUESTION = st.fixed_dictionaries(
    {"question": st.text(max_size=10) | JSON},
    optional={
        "header": st.text(max_size=5) | JSON,
        "multiSelect": st.booleans() | JSON,
        "options": st.lists(
            st.fixed_dictionaries(
                {"label": st.text(max_size=8) | JSON},
                optional={"description": st.text(max_size=8) | JSON},
            )
            | JSON,
            max_size=4,
        )
        | JSON,
    },
)


def _request(tool_input: dict[str, Any]) -> PermissionRequest:
    return PermissionRequest(
        pending_id="p",
        tool_name="AskUserQuestion",
        input=tool_input,
        normalized=normalize_tool_use("AskUserQuestion", tool_input),
        title="ask",
        tool_call_id="t",
    )


@given(st.lists(QUESTION | JSON, max_size=4) | JSON)
def test_any_input_gives_well_formed_questions_or_none(raw: Any) -> None:
    event = question_event(_request({"questions": raw}))
    if event is None:
        return
    assert event.questions and ("p", "t") == (event.pending_id, event.tool_call_id)
    for question in event.questions:
        assert isinstance(question.question, str) and question.question
        assert question.options and all(isinstance(o.label, str) for o in question.options)
        assert isinstance(question.multi_select, bool)


def test_the_tool_input_is_read_as_the_cli_sends_it() -> None:
    event = question_event(
        _request(
            {
                "questions": [
                    {
                        "question": "Q?",
                        "header": "H",
                        "options": [{"label": "A"}],
                        "multiSelect": True,
                    },
                    {"question": "No options?", "options": []},
                    {"question": "", "options": [{"label": "A"}]},
                ]
            }
        )
    )
    assert event is not None
    assert [
        Question(question="Q?", header="H", options=[QuestionOption(label="A")], multi_select=True)
    ] == event.questions
    assert question_event(_request({"questions": [{"question": "x", "options": []}]})) is None


def _split(text: str) -> list[str]:
    """Items of a multi-select answer as the CLI's tool splits them (", ", JSON-quoted items)."""
    items: list[str] = []
    rest = text
    while rest:
        if rest.startswith('"'):
            decoder = json.JSONDecoder()
            item, end = decoder.raw_decode(rest)
            items.append(item)
            rest = rest[end:]
        else:
            item, _, rest = rest.partition(", ")
            items.append(item)
            continue
        rest = rest.removeprefix(", ")
    return items


ASKED = QuestionRequest(
    pending_id="p",
    questions=[
        Question(question="One?", options=[QuestionOption(label="A")]),
        Question(question="Many?", options=[QuestionOption(label="A")], multi_select=True),
    ],
)
LABEL = (
    st.text(min_size=1, max_size=12)
    .filter(str.strip)
    .filter(lambda s: not s.startswith('"') or ", " in s or '"' in s[1:])
)


@given(st.lists(LABEL, min_size=1, max_size=5))
def test_multi_select_answers_split_back_into_the_same_items(labels: list[str]) -> None:
    checked = check_answers(ASKED, {"Many?": labels})
    answered = updated_input({"questions": []}, checked)
    assert [] == answered["questions"]
    assert labels == _split(answered["answers"]["Many?"])


@given(st.dictionaries(st.sampled_from(["One?", "Many?", "x"]) | st.integers(), JSON, max_size=3))
def test_bad_answers_are_a_typed_error(answers: Any) -> None:
    try:
        checked = check_answers(ASKED, answers)
    except InvalidAnswerError:
        return
    assert set(checked) <= {"One?", "Many?"}
    assert len(checked.get("One?", [])) <= 1


@pytest.mark.parametrize(
    "answers",
    [
        {"One?": ["A", "B"]},
        {"Other?": ["A"]},
        {"One?": "A"},
        {"One?": [""]},
        {"One?": [" "]},
        {"One?": [1]},
        {"One?": ["x" * 10_001]},
        ["One?"],
    ],
)
def test_what_does_not_fit_is_refused(answers: Any) -> None:
    with pytest.raises(InvalidAnswerError):
        check_answers(ASKED, answers)


def test_free_text_and_skipped_questions() -> None:
    assert {"One?": ["my own"]} == check_answers(ASKED, {"One?": ["my own"], "Many?": []})


def test_answers_given_as_a_plain_permission_answer() -> None:
    assert answers_of_input(None) is None
    assert answers_of_input({"answers": "x"}) is None
    assert {"One?": ["A"], "Many?": ["A", "B"]} == answers_of_input(
        {"answers": {"One?": "A", "Many?": ["A", "B", 3], 4: "x"}}
    )


def test_decline_messages() -> None:
    assert "pick any" in decline_message(" pick any ")
    assert "without their answers" in decline_message(None)
