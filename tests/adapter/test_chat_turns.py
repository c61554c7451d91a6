"""Turn ends in the chat view (``ChatView.turns``): from live ``complete`` events and from a
stored transcript the real CLI wrote (``load_events(turn_ends=True)``), and a transcript cut
at a message (``load_events(until=...)``, what a session resumed there sees)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.chat import ChatView, UserEntry
from adapter.events import Complete, MessageChunk, UserMessage
from adapter.history import load_events

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "history"
SESSION = "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7"


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "claude")
    return tmp_path / "claude" / "projects" / "-work-demo" / f"{SESSION}.jsonl"


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def last_answer_before_second_prompt(lines: list[dict[str, object]]) -> str:
    """The uuid of the assistant line the first turn ended with (read from the file itself)."""
    answer = None
    for line in lines:
        message = line.get("message")
        if line["type"] == "assistant":
            answer = line["uuid"]
        elif line["type"] == "user" and isinstance(message, dict):
            content = message["content"]
            is_prompt = isinstance(content, str) or not any(
                b.get("type") == "tool_result" for b in content
            )
            if is_prompt and answer is not None:
                return str(answer)
    raise AssertionError("no second prompt")


def test_live_turns_mark_where_each_turn_ended() -> None:
    view = ChatView()
    view.apply(
        [
            UserMessage(text="one", seq=1),
            MessageChunk(message_id="m1", text="first", seq=2),
            Complete(last_message_uuid="u1", seq=3),
            UserMessage(text="two", seq=4),
            # A failed turn commits nothing: its uuid is the previous one's, no second mark.
            Complete(is_error=True, last_message_uuid="u1", seq=5),
            MessageChunk(message_id="m2", text="second", seq=6),
            Complete(last_message_uuid="u2", seq=7),
            Complete(seq=8),  # no uuid (nothing committed): no mark
        ]
    )
    turns = view.snapshot().turns
    assert [(1, "u1", "text:m1"), (2, "u2", "text:m2")] == [
        (t.number, t.last_message_uuid, t.after) for t in turns
    ]
    wire = msgspec.json.decode(msgspec.json.encode(view.snapshot()))
    assert {
        "number": 1,
        "last_message_uuid": "u1",
        "cli_session_id": None,
        "after": "text:m1",
    } == wire["turns"][0]


def test_stored_turns_and_a_cut(transcript: Path) -> None:
    lines = lines_of(transcript)
    first = last_answer_before_second_prompt(lines)
    view = ChatView()
    view.apply(load_events(transcript, turn_ends=True))
    assert 2 == len(view.turns)
    assert first == view.turns[0].last_message_uuid
    assert {SESSION} == {t.cli_session_id for t in view.turns}
    last_assistant = [x["uuid"] for x in lines if x["type"] == "assistant"][-1]
    assert last_assistant == view.turns[1].last_message_uuid
    # Without turn_ends nothing changes for the other readers.
    assert not any(isinstance(e, Complete) for e in load_events(transcript))

    cut = ChatView()
    cut.apply(load_events(transcript, until=first, turn_ends=True))
    assert ["say hello"] == [e.text for e in cut.entries if isinstance(e, UserEntry)]
    assert [first] == [t.last_message_uuid for t in cut.turns]
    assert cut.entries == view.entries[: len(cut.entries)]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_cut_reads_as_the_file_up_to_that_line(
    transcript: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    raw = transcript.read_text().splitlines()
    # The CLI resumes at a message: any user or assistant line.
    messages = [i for i, x in enumerate(raw) if json.loads(x)["type"] in ("user", "assistant")]
    at = data.draw(st.sampled_from(messages))
    uuid = json.loads(raw[at])["uuid"]
    short = tmp_path_factory.mktemp("cut") / "short.jsonl"
    short.write_text("\n".join(raw[: at + 1]) + "\n")
    ends = data.draw(st.booleans())
    assert load_events(short, turn_ends=ends) == load_events(transcript, until=uuid, turn_ends=ends)
    # A uuid the file does not hold cuts nothing.
    assert load_events(transcript) == load_events(transcript, until="not-in-the-file")
