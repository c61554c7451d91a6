"""``/compact`` shown the same live and from history (tests/fixtures/compact: one real run).

The live view is built from the run's stream-json lines as the session does it (the prompt
it sends as a user message, then the CLI's lines through the translator); the stored view
from the transcript the CLI wrote, through :func:`~adapter.chat.load_events`. A property
test renders generated conversations with compactions both ways from the real lines."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.chat import ChatView, CommandEntry, NoticeEntry, UserEntry
from adapter.events import CompactBoundary, Event, MessageChunk, UserMessage
from adapter.history import load_events
from tests.support.chat import live_events, shown
from tests.support.strategies import json_values

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"
PROTOCOL = FIXTURES / "compact.protocol.jsonl"
TRANSCRIPT = FIXTURES / "compact.transcript.jsonl"
#: The summary the fake Messages API gave the CLI for its compaction request.
SUMMARY = "The user asked me to remember the word teapot; I said I would."


def test_the_recorded_compact_looks_the_same_live_and_stored() -> None:
    live = shown(live_events(PROTOCOL))
    stored = shown(load_events(TRANSCRIPT))
    assert live == stored
    kinds = [e["kind"] for e in stored]
    assert ["user", "text", "command", "notice", "user", "text"] == kinds
    assert {"kind": "command", "name": "compact"} == stored[2]
    assert {"kind": "notice", "text": "Conversation compacted", "notice_kind": "compact"} == (
        stored[3]
    )
    # The summary the conversation continues from is nobody's message.
    assert all(SUMMARY not in json.dumps(e) for e in stored)
    assert ["remember the word teapot", "what was the word?"] == [
        e["text"] for e in stored if e["kind"] == "user"
    ]


def test_the_stored_boundary_keeps_its_metadata() -> None:
    [stored] = [e for e in load_events(TRANSCRIPT) if isinstance(e, CompactBoundary)]
    [live] = [e for e in live_events(PROTOCOL) if isinstance(e, CompactBoundary)]
    assert "manual" == stored.trigger == live.trigger
    assert isinstance(stored.pre_tokens, int) and stored.pre_tokens > 0


# -- generated conversations from the real lines --------------------------------------------


def _real_lines() -> dict[str, dict[str, Any]]:
    """One real line of each kind a compacted conversation has."""
    found: dict[str, dict[str, Any]] = {}
    for raw in TRANSCRIPT.read_bytes().splitlines():
        line = json.loads(raw)
        kind = line.get("type")
        content = line.get("message", {}).get("content")
        if kind == "system" and line.get("subtype") == "compact_boundary":
            found.setdefault("boundary", line)
        elif kind == "assistant":
            found.setdefault("assistant", line)
        elif kind != "user":
            continue
        elif line.get("isCompactSummary"):
            found.setdefault("summary", line)
        elif line.get("isMeta"):
            found.setdefault("caveat", line)
        elif isinstance(content, str) and "<command-name>/compact" in content:
            found.setdefault("command", line)
        elif isinstance(content, str) and content.startswith("<local-command-stdout>"):
            found.setdefault("stdout", line)
        elif isinstance(content, str):
            found.setdefault("prompt", line)
    assert {"boundary", "assistant", "summary", "caveat", "command", "stdout", "prompt"} <= set(
        found
    )
    return found


REAL = _real_lines()

_words = st.text(alphabet="abcdefghij XYZ.,!?", min_size=1, max_size=20).filter(str.strip)
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("prompt"), _words),
        st.tuples(st.just("answer"), _words),
        st.tuples(st.just("compact"), st.one_of(st.just(""), _words)),
        st.tuples(st.just("auto"), st.integers(min_value=0, max_value=10**7)),
    ),
    max_size=12,
)
_junk = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" "))


def _line(kind: str, **changes: Any) -> dict[str, Any]:
    line = copy.deepcopy(REAL[kind])
    for key, value in changes.items():
        if key == "content":
            line["message"]["content"] = value
        else:
            line[key] = value
    return line


def _render(steps: list[tuple[str, Any]]) -> tuple[list[dict[str, Any]], list[Event]]:
    """The transcript lines the CLI writes for ``steps``, and the events a live session
    gives for them."""
    lines: list[dict[str, Any]] = []
    events: list[Event] = []
    for n, (kind, value) in enumerate(steps):
        if kind == "prompt":
            lines.append(_line("prompt", content=value))
            events.append(UserMessage(text=value))
        elif kind == "answer":
            line = _line("assistant", content=[{"type": "text", "text": value}])
            line["message"]["id"] = f"msg_{n}"
            lines.append(line)
            events.append(MessageChunk(message_id=f"msg_{n}", text=value))
        else:
            trigger = "manual" if kind == "compact" else "auto"
            tokens = 1000 + n if kind == "compact" else value
            boundary = _line("boundary")
            boundary["compactMetadata"] = {"trigger": trigger, "preTokens": tokens}
            lines += [boundary, _line("summary")]
            if kind == "compact":
                command = (
                    "<command-name>/compact</command-name>\n"
                    "<command-message>compact</command-message>\n"
                    f"<command-args>{value}</command-args>"
                )
                lines += [
                    _line("caveat"),
                    _line("command", content=command),
                    _line(
                        "stdout", content="<local-command-stdout>Compacted </local-command-stdout>"
                    ),
                ]
                events.append(UserMessage(text=f"/compact {value}".strip()))
            events.append(CompactBoundary(trigger=trigger, pre_tokens=tokens))
    return lines, events


@settings(max_examples=200, deadline=None)
@given(_steps, st.lists(st.tuples(st.integers(min_value=0), _junk), max_size=4))
def test_generated_compactions_look_the_same_live_and_stored(
    tmp_path_factory: Any, steps: list[tuple[str, Any]], junk: list[tuple[int, bytes]]
) -> None:
    lines, live = _render(steps)
    raw = [json.dumps(line, separators=(",", ":")).encode() for line in lines]
    for at, garbage in junk:  # lines that are not JSON change nothing
        raw.insert(at % (len(raw) + 1), garbage)
    path = tmp_path_factory.mktemp("compact") / "t.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in raw))
    stored = load_events(path)
    assert shown(live) == shown(stored)
    assert [e for e in live if isinstance(e, CompactBoundary)] == [
        e for e in stored if isinstance(e, CompactBoundary)
    ]


_json = json_values()


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["trigger", "preTokens", "other"]), _json) | _json)
def test_any_boundary_metadata_gives_one_notice(tmp_path_factory: Any, meta: Any) -> None:
    """Mutated real lines: whatever the boundary's metadata holds, it is one compaction,
    with only the fields of the right type kept."""
    boundary = _line("boundary")
    boundary["compactMetadata"] = meta
    lines = [_line("prompt", content="hello"), boundary, _line("summary")]
    path = tmp_path_factory.mktemp("meta") / "t.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    events = load_events(path)
    [compacted] = [e for e in events if isinstance(e, CompactBoundary)]
    given_meta = meta if isinstance(meta, dict) else {}
    trigger, tokens = given_meta.get("trigger"), given_meta.get("preTokens")
    assert compacted.trigger == (trigger if isinstance(trigger, str) else None)
    expected = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None
    assert compacted.pre_tokens == expected
    entries = [type(e) for e in ChatView().apply(events).added]
    assert [UserEntry, NoticeEntry] == entries
    assert CommandEntry not in entries
