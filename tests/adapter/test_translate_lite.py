"""The adapter's fast path: stream events decoded without their ids (StreamEventLite).

Whatever the bytes and however they are cut into reads, a protocol with the lite decoders
plus the translator gives exactly the events of the plain protocol plus the translator:
real transcript lines, the benchmark corpus (thinking, text and tool-input deltas, Grep /
Glob / WebFetch / Bash / Read / Edit results) and real lines with a field replaced by
random JSON or removed (so some take the careful path in one mode and not the other).
The adapter's session uses the fast path unless it writes a protocol file; both end to end
on the fake CLI, on asyncio and trio.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.config import SessionConfig
from adapter.events import Complete, Event, MessageChunk, ToolCall, ToolUpdate, encode_event
from adapter.policies import PermissionPolicy
from adapter.session import AgentSession
from adapter.translate import Translator
from claudecode import ClaudeCodeProtocol
from claudecode._stream_lite import StreamEventLite, decode_line_lite, decode_small_line_lite
from claudecode.messages import StreamEvent
from claudecode.testing import fake_cli_command, script, tool_turn
from tests.adapter.translate_strategies import RAW_LINES, mutated_line
from tests.support.timeouts import HANG_GUARD

_real: st.SearchStrategy[bytes] = st.sampled_from(RAW_LINES).map(lambda o: json.dumps(o).encode())


def _translate(data: bytes, cuts: list[int], *, lite: bool) -> tuple[list[bytes], int]:
    """The events of ``data`` read in pieces cut at ``cuts``; how many lite messages came."""
    protocol = ClaudeCodeProtocol()
    if lite:
        protocol._decode_fast = decode_line_lite
        protocol._decode_small = decode_small_line_lite
    translator = Translator()
    events: list[Event] = []
    lite_count = 0
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    pieces = [data[a:b] for a, b in pairwise(bounds) if b > a]
    for piece in [*pieces, b""]:  # b"": the end of the output
        batch = protocol.receive_data(piece)
        lite_count += sum(type(m) is StreamEventLite for m in batch)
        events += translator.feed_many(batch)
    events += translator.close(None)
    return [encode_event(e) for e in events], lite_count


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(_real, _real, mutated_line()), min_size=1, max_size=60),
    st.lists(st.integers(min_value=0, max_value=2**20), max_size=12),
)
def test_lite_stream_events_give_the_same_events(lines: list[bytes], cuts: list[int]) -> None:
    """Real and mutated transcript lines, cut anywhere: the same events either way."""
    data = b"\n".join(lines) + b"\n"
    plain, none = _translate(data, cuts, lite=False)
    fast, _ = _translate(data, cuts, lite=True)
    assert none == 0
    assert plain == fast


@settings(max_examples=20, deadline=None)
@given(
    st.integers(min_value=0, max_value=2**16),
    st.lists(st.integers(min_value=0, max_value=2**22), max_size=30),
)
def test_lite_stream_events_on_the_benchmark_corpus(seed: int, cuts: list[int]) -> None:
    """The benchmark corpus (every delta kind, tool results), cut anywhere: same events."""
    from benchmarks.corpus import generate_lines

    lines, _ = generate_lines(600, seed)
    data = b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines)
    plain, _ = _translate(data, cuts, lite=False)
    fast, lite_count = _translate(data, cuts, lite=True)
    assert lite_count > 0  # the fast path was taken
    assert plain == fast


def test_a_stream_event_the_fast_decode_refuses_takes_the_careful_path() -> None:
    """A stream event with a broken ``event`` is the plain class (or unknown) either way."""
    line = b'{"type":"stream_event","event":{"type":"content_block_delta","index":"x"}}'
    assert type(ClaudeCodeProtocol().receive_data(line + b"\n")[0]) is not StreamEventLite
    good = b'{"type":"stream_event","event":{"type":"ping"},"uuid":"u","session_id":"s"}'
    message = decode_line_lite(good)
    assert type(message) is StreamEventLite and not hasattr(message, "uuid")


def _shape(events: list[Event]) -> list[tuple[str, str]]:
    """What a user sees of a turn, without the ids that differ from run to run, and with
    adjacent chunks joined (how deltas merge depends on how the output was read)."""
    out: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, MessageChunk):
            if out and out[-1][0] == "text":
                out[-1] = ("text", out[-1][1] + event.text)
            else:
                out.append(("text", event.text))
        elif isinstance(event, ToolCall):
            out.append(("call", f"{event.tool_name} {event.title}"))
        elif isinstance(event, ToolUpdate):
            out.append(("update", f"{event.status} {event.title}"))
        elif isinstance(event, Complete):
            out.append(("complete", event.subtype))
    return out


async def _turn(tmp_path: Path, name: str, *, debug: bool) -> tuple[list[Event], bool]:
    body = script(tool_turn("Bash", {"command": "echo hi"}))
    work = tmp_path / name
    work.mkdir()
    cfg = SessionConfig(
        cli_path=fake_cli_command(body, tmp_path / f"{name}-cli"),
        cwd=work,
        policy=PermissionPolicy("autonomous"),
        debug_dir=tmp_path / f"{name}-debug" if debug else None,
    )
    seen: list[Event] = []
    async with AgentSession(cfg) as session:
        assert session._client is not None
        lite = session._client._protocol._decode_fast is decode_line_lite
        with session.subscribe(after_seq=0) as events:
            await session.prompt("go")
            async for event in events:
                seen.append(event)
                if isinstance(event, Complete):
                    break
    return seen, lite


@pytest.mark.anyio
async def test_the_session_reads_lite_stream_events_unless_it_writes_a_protocol_file(
    tmp_path: Path,
) -> None:
    """Same turn, with the fast path and without it (a protocol file): the same events."""
    with anyio.fail_after(HANG_GUARD):
        fast, fast_lite = await _turn(tmp_path, "fast", debug=False)
        plain, plain_lite = await _turn(tmp_path, "plain", debug=True)
    assert fast_lite and not plain_lite
    assert ("call", "Bash Run `echo hi`") in _shape(fast)
    assert "text" in {kind for kind, _ in _shape(fast)}
    assert _shape(fast) == _shape(plain)


def test_stream_event_classes_differ_only_in_skipped_fields() -> None:
    """StreamEventLite keeps the fields the translator reads, by the same names."""
    kept = set(StreamEventLite.__struct_fields__)
    assert kept <= set(StreamEvent.__struct_fields__)
    assert {"event", "parent_tool_use_id", "api_message_id"} <= kept
