"""The agent's questions in ACP (adapter.acp.questions): what goes out is valid for the ACP
schema whatever the questions, and no answer from an editor raises or means more than it says."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from adapter.acp.questions import (
    answers_of_elicitation,
    answers_of_permission,
    elicitation_params,
    permission_params,
)
from adapter.events import Question, QuestionOption, QuestionRequest
from tests.support.acp_schema import errors_of

TEXT = st.text(min_size=1, max_size=12)
QUESTION = st.builds(
    Question,
    question=TEXT,
    header=st.text(max_size=6),
    options=st.lists(
        st.builds(QuestionOption, label=TEXT, description=st.text(max_size=8)),
        min_size=1,
        max_size=4,
    ),
    multi_select=st.booleans(),
)
REQUEST = st.builds(
    QuestionRequest,
    pending_id=TEXT,
    questions=st.lists(QUESTION, min_size=1, max_size=3, unique_by=lambda q: q.question),
    tool_call_id=st.none() | TEXT,
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(REQUEST)
def test_what_is_asked_follows_the_schema(event: QuestionRequest) -> None:
    params = elicitation_params("s", event)
    assert [] == errors_of("CreateElicitationRequest", params)
    assert len(params["requestedSchema"]["properties"]) == 2 * len(event.questions)
    for index in range(len(event.questions)):
        asked = permission_params("s", event, index)
        assert [] == errors_of("RequestPermissionRequest", asked)
        assert len(event.questions[index].options) + 1 == len(asked["options"])


@given(REQUEST, JSON | st.fixed_dictionaries({"action": st.just("accept"), "content": JSON}))
def test_any_elicitation_answer_is_read_without_error(event: QuestionRequest, result: Any) -> None:
    kind, answers = answers_of_elicitation(event, result)
    asked = {q.question: q for q in event.questions}
    if kind != "answer":
        assert {} == answers
    for text, picks in answers.items():
        assert picks and all(isinstance(p, str) and p.strip() for p in picks)
        if not asked[text].multi_select:
            assert 1 == len(picks)


def test_accepted_forms() -> None:
    event = QuestionRequest(
        pending_id="p",
        questions=[
            Question(question="One?", options=[QuestionOption(label="A")]),
            Question(question="Many?", options=[QuestionOption(label="A")], multi_select=True),
            Question(question="Skipped?", options=[QuestionOption(label="A")]),
        ],
    )
    content = {
        "question_0": "A",
        "question_0_custom": "note",
        "question_1": ["A"],
        "question_1_custom": " mine ",
    }
    assert ("answer", {"One?": ["A"], "Many?": ["A", "mine"]}) == answers_of_elicitation(
        event, {"action": "accept", "content": content}
    )
    own = {"action": "accept", "content": {"question_0_custom": "my own"}}
    assert ("answer", {"One?": ["my own"]}) == answers_of_elicitation(event, own)
    assert ("decline", {}) == answers_of_elicitation(event, {"action": "decline"})
    assert ("cancel", {}) == answers_of_elicitation(event, {"action": "cancel"})
    assert ("cancel", {}) == answers_of_elicitation(event, {"action": "_other"})
    assert ("answer", "A") == answers_of_permission(event, 0, "answer_0")
    for unknown in ("answer_1", "answer_x", "allow_once", "decline", ""):
        assert ("decline", "") == answers_of_permission(event, 0, unknown)
    assert ("cancel", "") == answers_of_permission(event, 0, None)
