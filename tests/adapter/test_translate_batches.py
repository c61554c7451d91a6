"""Translator.feed_many: the same events as feed() one by one, with adjacent deltas merged."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.events import Event, MessageChunk, Reasoning, ToolInputDelta, encode_event
from adapter.translate import Translator
from claudecode import decode_line


def coalesce(events: list[Event]) -> list[Event]:
    """The oracle: merge adjacent deltas of the same message or tool call, naively."""
    out: list[Event] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, MessageChunk | Reasoning) and type(last) is type(event):
            assert isinstance(last, MessageChunk | Reasoning)
            if (last.message_id, last.parent_tool_call_id) == (
                event.message_id,
                event.parent_tool_call_id,
            ):
                last.text += event.text
                continue
        if (
            isinstance(event, ToolInputDelta)
            and isinstance(last, ToolInputDelta)
            and last.tool_call_id == event.tool_call_id
        ):
            last.partial_json += event.partial_json
            continue
        out.append(event)
    return out


TRANSCRIPTS = Path(__file__).parents[1] / "fixtures" / "transcripts"
NAMES = sorted(p.name for p in TRANSCRIPTS.glob("*.jsonl") if not p.name.endswith(".api.jsonl"))


def messages(name: str) -> list[object]:
    out = []
    for raw in (TRANSCRIPTS / name).read_text().splitlines():
        entry = json.loads(raw)
        if entry.get("dir") == "from_cli":
            msg = entry["msg"]
            if msg.get("type") in ("control_request", "control_response"):
                continue
            out.append(decode_line(json.dumps(msg).encode()))
    return out


@settings(max_examples=60)
@given(st.sampled_from(NAMES), st.lists(st.integers(min_value=1, max_value=40), max_size=20))
def test_batches_equal_single_feeds_coalesced(name: str, sizes: list[int]) -> None:
    """However the messages are batched, the result is feed() per message, coalesced."""
    msgs = messages(name)
    one_by_one = Translator()
    expected = coalesce([e for m in msgs for e in one_by_one.feed(m)])  # type: ignore[arg-type]
    batched = Translator()
    got = []
    start = 0
    for size in [*sizes, len(msgs)]:
        got += batched.feed_many(msgs[start : start + size])  # type: ignore[arg-type]
        start += size
    # Merging may stop at a batch edge; compare after merging across edges too.
    assert [encode_event(e) for e in expected] == [encode_event(e) for e in coalesce(got)]


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**16),
    st.lists(st.integers(min_value=1, max_value=200), max_size=30),
)
def test_benchmark_corpus_batches_equal_single_feeds(seed: int, sizes: list[int]) -> None:
    """The same oracle over the benchmark corpus: thinking, text and tool-input delta runs
    (the fast path), signature deltas, Grep / Glob / WebFetch / Bash / Read / Edit results."""
    from benchmarks.corpus import generate_lines

    lines, _ = generate_lines(400, seed)
    msgs = [decode_line(line) for line in lines]
    one_by_one = Translator()
    expected = coalesce([e for m in msgs for e in one_by_one.feed(m)])
    batched = Translator()
    got = []
    start = 0
    for size in [*sizes, len(msgs)]:
        got += batched.feed_many(msgs[start : start + size])
        start += size
    assert [encode_event(e) for e in expected] == [encode_event(e) for e in coalesce(got)]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**16),
    st.lists(st.integers(min_value=0, max_value=399), max_size=30),
    st.lists(st.integers(min_value=1, max_value=120), max_size=20),
)
def test_repeated_lines_are_dropped_in_batches_as_one_by_one(
    seed: int, repeats: list[int], sizes: list[int]
) -> None:
    """Lines seen before (in an earlier batch or the same one) are dropped by feed_many as
    by feed(), and repeated ``stream_event`` lines are kept by both (never checked)."""
    from benchmarks.corpus import generate_lines

    lines, _ = generate_lines(400, seed)
    msgs = [decode_line(line) for line in lines]
    for index in sorted(repeats, reverse=True):  # a line again, a few lines later
        at = min(len(msgs), index + 1 + index % 7)
        msgs.insert(at, msgs[min(index, len(msgs) - 1)])
    one_by_one = Translator()
    expected = coalesce([e for m in msgs for e in one_by_one.feed(m)])
    batched = Translator()
    got = []
    start = 0
    for size in [*sizes, len(msgs)]:
        got += batched.feed_many(msgs[start : start + size])
        start += size
    assert [encode_event(e) for e in expected] == [encode_event(e) for e in coalesce(got)]
