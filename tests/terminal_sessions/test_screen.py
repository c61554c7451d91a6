"""The server-side screen: what it renders reproduces it on a fresh terminal."""

from __future__ import annotations

import re

import pyte
from hypothesis import example, given
from hypothesis import strategies as st
from pyte.screens import wcwidth

from adapter.terminals import TerminalScreen

COLS, ROWS = 30, 8

_pieces = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40),
    st.sampled_from(
        [
            "\r\n",
            "\n",
            "\r",
            "\t",
            "\b",
            "\x1b[1m",
            "\x1b[3m",
            "\x1b[4m",
            "\x1b[7m",
            "\x1b[9m",
            "\x1b[0m",
            "\x1b[31m",
            "\x1b[92m",
            "\x1b[44m",
            "\x1b[38;5;208m",
            "\x1b[48;2;10;20;30m",
            "\x1b[H",
            "\x1b[5;7H",
            "\x1b[2J",
            "\x1b[K",
            "\x1b[2A",
            "\x1b[3C",
            "\x1b[?25l",
            "\x1b[?25h",
            "\x1b[?1h",
            "\x1b[?2004h",
            "é",
            "中文",
            "─│",
        ]
    ),
)


def _cells(screen: pyte.Screen) -> list[list[tuple[object, ...]]]:
    """Every cell; the empty right half of a wide character whose left half was overwritten
    counts as the blank a terminal shows there."""
    rows = []
    for y in range(screen.lines):
        row: list[tuple[object, ...]] = []
        for x in range(screen.columns):
            cell = tuple(screen.buffer[y][x])
            if cell[0] == "" and not (x and wcwidth(str(row[-1][0])[:1] or " ") == 2):
                cell = (" ", *cell[1:])
            row.append(cell)
        rows.append(row)
    return rows


def _display(screen: pyte.Screen) -> list[str]:
    """pyte's ``display`` (which raises on such an orphaned half), from :func:`_cells`."""
    lines = []
    for row in _cells(screen):
        text, skip = [], False
        for cell in row:
            if not skip:
                text.append(str(cell[0]))
            skip = not skip and wcwidth(str(cell[0])[:1] or " ") == 2
        lines.append("".join(text))
    return lines


@given(st.lists(_pieces, max_size=60), st.integers(min_value=1, max_value=64))
@example(pieces=["中文", "X", "\x1b[H", "000"], chunk=1)  # half a wide character overwritten
def test_render_reproduces_text_attributes_cursor_and_modes(pieces: list[str], chunk: int) -> None:
    data = "".join(pieces).encode()
    screen = TerminalScreen(COLS, ROWS, scrollback=0)
    for i in range(0, len(data), chunk):  # arbitrary chunking, UTF-8 split anywhere
        screen.feed(data[i : i + chunk])
    expected = pyte.Screen(COLS, ROWS)
    pyte.ByteStream(expected).feed(data)
    assert _display(expected) == screen.lines()

    replayed = pyte.Screen(COLS, ROWS)
    pyte.ByteStream(replayed).feed(screen.render())
    assert _cells(expected) == _cells(replayed)
    assert (expected.cursor.x, expected.cursor.y) == (
        min(replayed.cursor.x, COLS),
        replayed.cursor.y,
    ) or expected.cursor.x >= COLS
    for mode in (1 << 5, 25 << 5, 2004 << 5):
        assert (mode in expected.mode) == (mode in replayed.mode)


def test_scrollback_keeps_lines_scrolled_off_the_top() -> None:
    screen = TerminalScreen(20, 5, scrollback=3)
    screen.feed(b"".join(b"row-%d\r\n" % i for i in range(10)))
    assert ["row-3", "row-4", "row-5"] == screen.scrollback_lines()
    assert "row-6" == screen.lines()[0].rstrip()
    # A fresh terminal of the same size gets the history in its own scrollback.
    replayed = TerminalScreen(20, 5, scrollback=100)
    replayed.feed(screen.render())
    assert screen.lines() == replayed.lines()
    assert ["row-3", "row-4", "row-5"] == replayed.scrollback_lines()


def test_a_flood_resyncs_the_screen_from_recent_output() -> None:
    screen = TerminalScreen(20, 4, scrollback=0, max_pending=1000)
    for i in range(500):
        screen.feed(b"line %d\r\n" % i)
    assert screen.pending_bytes <= 1000
    assert "line 499" == screen.lines()[-2].rstrip()
    assert 1 == screen.resyncs


def test_status_and_cursor_position_queries_are_answered_as_xterm_does() -> None:
    answers: list[bytes] = []
    screen = TerminalScreen(10, 5, on_report=answers.append)
    screen.feed(b"abc\x1b[6n")  # row 1, after "abc"
    screen.feed(b"\x1b[3;7H\x1b[5n\x1b[6n")  # status first, then the position
    screen.feed(b"\x1b[4;1H0123456789\x1b[6n")  # a wrap is pending: the last column
    screen.feed(b"\x1b[2;4r\x1b[?6h\x1b[2;2H\x1b[6n")  # origin mode: rows from the margin
    screen.feed(b"\x1b[?6n")  # the private form is not answered
    assert [] == answers  # answered as the output is parsed, not as it is queued
    screen.flush()
    assert [b"\x1b[1;4R", b"\x1b[0n", b"\x1b[3;7R", b"\x1b[4;10R", b"\x1b[2;2R"] == answers
    assert 0 == screen.parse_errors
    silent = TerminalScreen(10, 5)  # without on_report: no answers, no errors
    silent.feed(b"\x1b[6n\x1b[5n")
    assert 0 == silent.parse_errors and "" == silent.text().strip()


_ANSWER = re.compile(rb"\x1b\[(0n|([0-9]+);([0-9]+)R)")


@given(st.lists(st.binary(max_size=64), max_size=30))
def test_any_bytes_leave_a_usable_screen(chunks: list[bytes]) -> None:
    answers: list[bytes] = []
    screen = TerminalScreen(COLS, ROWS, scrollback=5, on_report=answers.append)
    for chunk in chunks:
        screen.feed(chunk)
        screen.feed(b"\x1b[?1;2m\x1b[>4;1m")  # private SGR forms real TUIs send
    # End whatever string or sequence is open (BEL, ST, CAN), then a full reset (RIS).
    screen.feed(b"\x07\x1b\\\x18\x1bcstill-here")
    assert "still-here" in screen.text()
    # Whatever was asked, every answer is a well-formed report of a cell on the screen.
    for answer in answers:
        match = _ANSWER.fullmatch(answer)
        assert match is not None, answer
        if match[2] is not None:
            assert 1 <= int(match[2]) <= ROWS and 1 <= int(match[3]) <= COLS
    replayed = pyte.Screen(COLS, ROWS)
    pyte.ByteStream(replayed).feed(screen.render())
    assert "still-here" in "\n".join(replayed.display)


def test_overwriting_half_a_wide_character_leaves_a_blank() -> None:
    """The right half left behind is a blank in the text and in what a viewer is sent (pyte's
    own ``display`` raises on it, which took the session's screen task down)."""
    screen = TerminalScreen(10, 2)
    screen.feed("中文X\x1b[H000".encode())
    assert "000 X" == screen.lines()[0].rstrip()
    replayed = pyte.Screen(10, 2)
    pyte.ByteStream(replayed).feed(screen.render())
    assert "000 X" == replayed.display[0].rstrip()
