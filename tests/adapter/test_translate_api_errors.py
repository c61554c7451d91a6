"""A failed API call's request id: the CLI says it only on its synthetic "API Error"
assistant message, the failed ``result`` after it does not; the turn's error event carries
it (what Anthropic's support asks for), from the real recorded lines."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.chat import ChatView, ErrorEntry
from adapter.events import ErrorEvent, Event
from adapter.translate import Translator
from claudecode._codec import decode_line
from tests.support.transcripts import processes

_RAW = processes("exit_code.jsonl")[0].raw
#: The CLI's synthetic assistant message for a 400 and the failed result after it.
SYNTHETIC = next(m for m in _RAW if m.get("is_api_error_message"))
RESULT = next(m for m in _RAW if m.get("type") == "result" and m.get("is_error"))


def _feed(translator: Translator, lines: list[dict[str, Any]]) -> list[Event]:
    return translator.feed_many([decode_line(json.dumps(line).encode()) for line in lines])


def test_the_turns_error_has_the_request_id_of_the_cli_message() -> None:
    events = _feed(Translator(), [SYNTHETIC, RESULT])
    [error] = [e for e in events if isinstance(e, ErrorEvent)]
    assert ("api_error", 400) == (error.kind, error.status)
    assert SYNTHETIC["request_id"] == error.request_id
    assert error.request_id and error.request_id.startswith("req_")
    view = ChatView()
    view.apply(events)
    [entry] = view.entries
    assert (
        ErrorEntry(
            id=entry.id,
            message="API Error: 400 fake bad request",
            error_kind="api_error",
            status=400,
            request_id=SYNTHETIC["request_id"],
        )
        == entry
    )


_TURN = st.fixed_dictionaries(
    {
        "flagged": st.booleans(),
        "request_id": st.none() | st.text(min_size=1, max_size=12),
        "parent": st.none() | st.just("toolu_agent"),
        "failed": st.booleans(),
    }
)


@settings(max_examples=200, deadline=None)
@given(turns=st.lists(_TURN, min_size=1, max_size=6))
def test_a_request_id_belongs_to_its_own_turns_api_error(turns: list[dict[str, Any]]) -> None:
    """Whatever the turns: a turn's error has the id of that turn's flagged main-thread
    message, never one of a sub-agent's or of an earlier turn; a turn that succeeded has
    no error at all."""
    translator = Translator()
    for n, turn in enumerate(turns):
        synthetic = copy.deepcopy(SYNTHETIC)
        synthetic["uuid"] = f"synthetic-{n}"  # each line new: repeated ones are dropped
        synthetic["message"]["id"] = f"message-{n}"
        synthetic["is_api_error_message"] = turn["flagged"]
        synthetic["request_id"] = turn["request_id"]
        synthetic["parent_tool_use_id"] = turn["parent"]
        result = copy.deepcopy(RESULT)
        result["uuid"] = f"result-{n}"
        if not turn["failed"]:
            result.update(is_error=False, terminal_reason="completed", result="ok")
            del result["api_error_status"]
        errors = [e for e in _feed(translator, [synthetic, result]) if isinstance(e, ErrorEvent)]
        if not turn["failed"]:
            assert [] == errors
            continue
        [error] = errors
        mine = turn["flagged"] and turn["parent"] is None
        assert (turn["request_id"] if mine else None) == error.request_id
