"""Hypothesis strategies over the recorded transcripts, shared by the translator tests:
real lines shuffled, dropped, duplicated, mutated and mixed with garbage."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from claudecode._codec import decode_line
from claudecode.messages import InboundMessage, StreamEvent, UnknownMessage
from tests.support.transcripts import NAMES, Process, processes

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


noise: st.SearchStrategy[InboundMessage] = st.one_of(
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
Step = int | InboundMessage | None


def _once_per_stream_event(messages: list[InboundMessage], order: list[int]) -> list[Step]:
    """``order`` without the repeats of ``stream_event`` lines (their first time stays).

    The CLI repeats only lines of its transcript (a resumed session replays it), and
    ``stream_event`` lines are not in it: the translator does not check them for duplicates
    (a set lookup per token), so only the other lines are repeated here.
    """
    seen: set[int] = set()
    steps: list[Step] = []
    for index in order:
        if isinstance(messages[index], StreamEvent):
            if index in seen:
                continue
            seen.add(index)
        steps.append(index)
    return steps


@st.composite
def sequences(draw: st.DrawFn) -> tuple[int, list[Step]]:
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
    steps: list[Step] = _once_per_stream_event(PROCESSES[which].messages, order)
    extras = draw(st.lists(st.tuples(st.integers(0, len(steps)), st.none() | noise), max_size=6))
    for position, extra in sorted(extras, key=lambda pair: -pair[0]):
        steps.insert(position, extra)
    return which, steps
