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

from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.events import ContextWindow, ErrorEvent, Event, MessageChunk
from adapter.translate import Translator
from claudecode.messages import InboundMessage, ResultMessage
from tests.adapter.translate_strategies import PROCESSES, Step, noise, sequences
from tests.support.transcripts import (
    Process,
    check_round_trip,
    check_tool_lifecycle,
    emitted_texts,
    of_type,
    step,
    text_bounds,
)


def _run(
    process: Process, steps: list[Step]
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
@given(sequences())
def test_arbitrary_orders_never_break_the_rules(case: tuple[int, list[Step]]) -> None:
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
@given(st.lists(noise, max_size=20))
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
