"""Hypothesis: the translator on arbitrary orders of real messages, mutations and garbage.

Sequences are built from the recorded transcripts: shuffled, with lines dropped and
duplicated (not ``stream_event`` lines, which the CLI never repeats), with lines whose
fields were replaced by random JSON, and with unknown and malformed lines and random bytes
in between; ``finish_turn`` is called at random points.
Whatever comes in, the translator

* never raises and never reports an internal error,
* never leaves a tool call open at a ``Complete`` (nor announces or completes one twice),
* never emits more text for a message than that message has (text never appears twice),
* never repeats an unchanged context window,
* emits only events that survive the public JSON form.
"""

from __future__ import annotations

import copy
import json
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_translate_support import (
    NAMES,
    Process,
    check_round_trip,
    check_tool_lifecycle,
    emitted_texts,
    of_type,
    processes,
    step,
    text_bounds,
)

from adapter.events import ContextWindow, ErrorEvent, Event, MessageChunk
from adapter.translate import Translator
from claudecode._codec import decode_line
from claudecode.messages import InboundMessage, ResultMessage, StreamEvent, UnknownMessage

PROCESSES: list[Process] = [p for name in NAMES for p in processes(name)]
#: Lines to mutate (not the CLI's huge initialize answer: keeps failure reports readable).
RAW_LINES: list[dict[str, Any]] = [
    line for p in PROCESSES for line in p.raw if line.get("type") != "control_response"
]

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)

_TYPES = [
    "assistant",
    "user",
    "result",
    "stream_event",
    "system",
    "tool_progress",
    "rate_limit_event",
]


@st.composite
def mutated_line(draw: st.DrawFn) -> bytes:
    """A real line with one field (top level, or inside message / event / delta / usage)
    replaced or removed, as the CLI would write it."""
    obj = copy.deepcopy(draw(st.sampled_from(RAW_LINES)))
    target = obj
    for nested in ("message", "event", "delta", "usage"):
        if isinstance(target.get(nested), dict) and draw(st.booleans()):
            target = target[nested]
    if target:
        key = draw(st.sampled_from(sorted(target)))
        if draw(st.booleans()):
            del target[key]
        else:
            target[key] = draw(_json)
    return json.dumps(obj).encode()


@st.composite
def _shaped(draw: st.DrawFn) -> InboundMessage:
    """A random object with a known ``type``: mostly malformed, sometimes a typed oddity."""
    obj = draw(st.dictionaries(st.text(max_size=8), _json, max_size=4))
    obj["type"] = draw(st.sampled_from(_TYPES))
    return decode_line(json.dumps(obj).encode(), draw(st.integers(0, 10_000)))


_noise: st.SearchStrategy[InboundMessage] = st.one_of(
    mutated_line().map(decode_line),
    _shaped(),
    st.binary(min_size=1, max_size=40).map(decode_line),
    st.builds(
        UnknownMessage,
        type=st.text(max_size=10),
        subtype=st.none() | st.text(max_size=10),
        raw=st.binary(max_size=30),
    ),
)

#: One step: an index into the process's messages, an extra message, or ``None`` for "the
#: session calls finish_turn() here". Indices keep hypothesis' failure reports short.
_Step = int | InboundMessage | None


def _once_per_stream_event(messages: list[InboundMessage], order: list[int]) -> list[_Step]:
    """``order`` without the repeats of ``stream_event`` lines (their first time stays).

    The CLI repeats only lines of its transcript (a resumed session replays it), and
    ``stream_event`` lines are not in it: the translator does not check them for duplicates
    (a set lookup per token), so only the other lines are repeated here.
    """
    seen: set[int] = set()
    steps: list[_Step] = []
    for index in order:
        if isinstance(messages[index], StreamEvent):
            if index in seen:
                continue
            seen.add(index)
        steps.append(index)
    return steps


@st.composite
def _sequences(draw: st.DrawFn) -> tuple[int, list[_Step]]:
    which = draw(st.integers(0, len(PROCESSES) - 1))
    n = len(PROCESSES[which].messages)
    order = draw(
        st.one_of(
            st.just(list(range(n))),
            st.permutations(list(range(n))),
            st.lists(st.integers(0, n - 1), max_size=2 * n),
            # mostly in order, with drops and duplicates
            st.lists(st.sampled_from([0, 1, 1, 1, 2]), min_size=n, max_size=n).map(
                lambda times: [i for i, k in enumerate(times) for _ in range(k)]
            ),
        )
    )
    steps: list[_Step] = _once_per_stream_event(PROCESSES[which].messages, order)
    extras = draw(st.lists(st.tuples(st.integers(0, len(steps)), st.none() | _noise), max_size=6))
    for position, extra in sorted(extras, key=lambda pair: -pair[0]):
        steps.insert(position, extra)
    return which, steps


def _run(
    process: Process, steps: list[_Step]
) -> tuple[Translator, list[Event], list[InboundMessage]]:
    translator = Translator()
    events: list[Event] = []
    fed: list[InboundMessage] = []
    for item in steps:
        if item is None:
            events += translator.finish_turn()
            continue
        message = process.messages[item] if isinstance(item, int) else item
        fed.append(message)
        events += step(translator, message, process.initialize_ids)
    events += translator.close(None)
    return translator, events, fed


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sequences())
def test_arbitrary_orders_never_break_the_rules(case: tuple[int, list[_Step]]) -> None:
    """Never raises; nothing open at a Complete; text bounded per message; JSON round trip."""
    which, steps = case
    translator, events, fed = _run(PROCESSES[which], steps)

    assert not [e for e in events if isinstance(e, ErrorEvent) and e.kind == "internal"]
    check_tool_lifecycle(events)
    assert () == translator.pending_tool_calls
    assert not translator.turn_open
    check_round_trip(events)

    bounds = text_bounds(fed)
    for key, text in emitted_texts(events).items():
        if key[0].startswith("result:") and key not in bounds:
            continue  # a result without uuid: checked below
        assert len(text) <= bounds.get(key, 0), key
    result_ids = [
        e.message_id for e in of_type(events, MessageChunk) if e.message_id.startswith("result:")
    ]
    assert len(result_ids) == len(set(result_ids))
    assert len(result_ids) <= len([m for m in fed if isinstance(m, ResultMessage)])

    windows = [(w.size, w.used) for w in of_type(events, ContextWindow)]
    assert all(a != b for a, b in pairwise(windows))


@settings(max_examples=100, deadline=None)
@given(st.lists(_noise, max_size=20))
def test_garbage_alone_never_breaks_it(noise: list[InboundMessage]) -> None:
    """Mutated, shapeless, unknown and undecodable lines: events, never an exception."""
    translator = Translator()
    events: list[Event] = []
    for item in noise:
        events += translator.feed(item)
    events += translator.close("gone")
    assert not [e for e in events if isinstance(e, ErrorEvent) and e.kind == "internal"]
    check_tool_lifecycle(events)
    check_round_trip(events)


def test_in_order_replay_shows_every_message_text_exactly() -> None:
    """The unshuffled sequences reach the bound: every message's full text, once."""
    for process in PROCESSES:
        _, events, fed = _run(process, list(range(len(process.messages))))
        _check_exact(events, fed)


def _check_exact(events: list[Event], fed: list[InboundMessage]) -> None:
    bounds = text_bounds(fed)
    emitted = emitted_texts(events)
    for key, text in emitted.items():
        if not key[0].startswith("result:"):
            assert len(text) == bounds[key], key
