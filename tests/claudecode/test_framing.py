"""LineBuffer: any chunking of any lines gives the same lines; limits; end of input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from claudecode._framing import LineBuffer, OversizedLine
from claudecode.errors import UsageError

line_bytes = st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"x"))


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    pieces.append(data[last:])
    return [p for p in pieces if p]


def expected_lines(lines: list[bytes]) -> list[bytes]:
    return list(lines)


@given(st.lists(line_bytes, max_size=30), st.lists(st.integers(min_value=0), max_size=40))
def test_any_chunking_yields_the_same_lines(lines: list[bytes], cuts: list[int]) -> None:
    """However the byte stream is cut, the framer returns the lines that were written."""
    data = b"".join(line + b"\n" for line in lines)
    buf = LineBuffer()
    out: list[bytes | OversizedLine] = []
    for piece in chunked(data, cuts):
        out += buf.feed(piece)
    out += buf.feed(b"")
    assert expected_lines(lines) == out
    assert len(lines) == buf.line_number


@given(st.lists(line_bytes, min_size=1, max_size=10), st.lists(st.integers(0), max_size=10))
def test_unterminated_last_line_is_returned_at_eof(lines: list[bytes], cuts: list[int]) -> None:
    """End of input is data: the trailing line without a newline still comes out."""
    lines = [*lines[:-1], lines[-1] or b"z"]
    data = b"\n".join(lines)
    buf = LineBuffer()
    out: list[bytes | OversizedLine] = []
    for piece in chunked(data, cuts):
        out += buf.feed(piece)
    out += buf.feed(b"")
    assert expected_lines(lines) == out


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"y")), max_size=20),
    st.integers(min_value=1, max_value=30),
    st.lists(st.integers(0), max_size=20),
)
def test_lines_over_the_limit_are_reported_and_skipped(
    lines: list[bytes], limit: int, cuts: list[int]
) -> None:
    """A line over max_line_bytes becomes OversizedLine with its size; the rest go on."""
    data = b"".join(line + b"\n" for line in lines)
    buf = LineBuffer(limit)
    out: list[bytes | OversizedLine] = []
    for piece in chunked(data, cuts):
        out += buf.feed(piece)
    out += buf.feed(b"")
    want: list[object] = []
    for number, line in enumerate(lines, 1):
        if len(line) > limit:
            want.append((number, len(line), line[:1024]))
        else:
            want.append(line)
    got = [(o.line_number, o.size, o.head) if isinstance(o, OversizedLine) else o for o in out]
    assert want == got


def test_feed_after_eof_is_a_usage_error() -> None:
    """After end of input, more data is the caller's mistake."""
    buf = LineBuffer()
    buf.feed(b"")
    with pytest.raises(UsageError):
        buf.feed(b"x")


def test_huge_line_in_small_chunks_is_joined_once() -> None:
    """A 20 MiB line arriving in 64 KiB pieces comes out whole and buffers nothing after."""
    line = b"a" * (20 * 1024 * 1024)
    buf = LineBuffer()
    out: list[bytes | OversizedLine] = []
    for i in range(0, len(line), 65536):
        out += buf.feed(line[i : i + 65536])
    assert buf.buffered == len(line)
    out += buf.feed(b"\n")
    assert [line] == out
    assert 0 == buf.buffered


def test_oversized_line_keeps_bounded_memory() -> None:
    """While skipping an oversized line the buffer holds nothing of it."""
    buf = LineBuffer(1000)
    for _ in range(100):
        assert [] == buf.feed(b"z" * 4096)
        assert 0 == buf.buffered
    out = buf.feed(b"tail\nnext\n")
    assert isinstance(out[0], OversizedLine)
    assert 100 * 4096 + 4 == out[0].size
    assert b"z" * 1000 == out[0].head[:1000]
    assert b"next" == out[1]


def test_zero_limit_is_rejected() -> None:
    """A maximum line size below one byte makes no sense."""
    with pytest.raises(UsageError):
        LineBuffer(0)
