"""The server-side screen of a terminal session: a :mod:`pyte` virtual terminal.

Output is queued with :meth:`TerminalScreen.feed` (cheap: a list append) and parsed when the
screen is read (:meth:`lines`, :meth:`render`, :meth:`resize`) or, in bounded slices, by the
session's screen task (:meth:`flush` with ``max_bytes``), so a flood of output costs the
session's reader nothing and parsing never holds the event loop for long. The queue is
bounded: past ``max_pending`` bytes the oldest queued output is dropped and the screen
restarts from a clean state fed with the newest output, which is what a person looking at a
flooding terminal sees anyway (counted in ``resyncs``).

:meth:`render` turns the screen (and a bounded scrollback) into bytes that, written to a fresh
xterm-compatible terminal, reproduce it: text with colours and attributes, the cursor position
and the input modes that change what keys send (application cursor keys, bracketed paste,
mouse reporting), so a viewer who connects late sees the current screen exactly instead of a
garbled replay of raw output.

A program may ask the terminal where its cursor is (DSR, ``ESC[6n``) or whether it is well
(``ESC[5n``); with ``on_report``, the screen answers those as xterm would, at the point of the
output where the question was parsed (the session sends the answer when no viewer's terminal
is there to do it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import pyte
from pyte.screens import Char, wcwidth

__all__ = ("TerminalScreen",)

_DEFAULT_MAX_PENDING = 32 * 1024

_NAMED_COLOURS = {
    "black": 0,
    "red": 1,
    "green": 2,
    "brown": 3,
    "yellow": 3,
    "blue": 4,
    "magenta": 5,
    "cyan": 6,
    "white": 7,
}

#: Private modes replayed to a new viewer: cursor keys, cursor visibility, mouse, focus,
#: bracketed paste (pyte records every private mode shifted left by 5).
_REPLAYED_PRIVATE_MODES = (1, 25, 1000, 1002, 1003, 1004, 1006, 2004)


def _colour(value: str, *, background: bool) -> str:
    if value == "default":
        return ""
    base = 40 if background else 30
    if value.startswith("bright"):
        index = _NAMED_COLOURS.get(value[6:])
        if index is not None:
            return str(base + 60 + index)
    index = _NAMED_COLOURS.get(value)
    if index is not None:
        return str(base + index)
    if len(value) == 6:
        try:
            r, g, b = int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)
        except ValueError:
            return ""
        return f"{base + 8};2;{r};{g};{b}"
    return ""


def _sgr(char: Char) -> str:
    codes = ["0"]
    if char.bold:
        codes.append("1")
    if char.italics:
        codes.append("3")
    if char.underscore:
        codes.append("4")
    if char.blink:
        codes.append("5")
    if char.reverse:
        codes.append("7")
    if char.strikethrough:
        codes.append("9")
    fg = _colour(char.fg, background=False)
    if fg:
        codes.append(fg)
    bg = _colour(char.bg, background=True)
    if bg:
        codes.append(bg)
    return "\x1b[" + ";".join(codes) + "m"


def _attrs(char: Char) -> tuple[Any, ...]:
    return (
        char.fg,
        char.bg,
        char.bold,
        char.italics,
        char.underscore,
        char.strikethrough,
        char.reverse,
        char.blink,
    )


_PLAIN = _attrs(Char(" "))


def _row_text(line: Any, columns: int) -> str:
    """A row as text, as pyte's ``Screen.display`` shows it: a wide character once, its right
    half skipped. Where a program overwrote only the left half, the right half is left
    behind empty: a blank here (pyte's ``display`` raises ``IndexError`` on it)."""
    chars: list[str] = []
    wide = False
    for x in range(columns):
        if wide:
            wide = False
            continue
        data = line[x].data or " "
        wide = wcwidth(data[0]) == 2
        chars.append(data)
    return "".join(chars)


def _render_line(line: Any, columns: int) -> str:
    # Drop trailing blank cells in the default style: they cost bytes and change nothing.
    last = columns - 1
    while last >= 0:
        cell = line[last]
        if cell.data not in (" ", "") or _attrs(cell) != _PLAIN:
            break
        last -= 1
    parts: list[str] = []
    current = _PLAIN
    wide = False
    for x in range(last + 1):
        cell = line[x]
        data = cell.data
        if data == "" and wide:  # the right half of a wide character
            wide = False
            continue
        # An empty cell after anything else is a half whose wide character was overwritten:
        # a blank, or what follows would be drawn a column to the left.
        data = data or " "
        wide = wcwidth(data[0]) == 2
        attrs = _attrs(cell)
        if attrs != current:
            parts.append(_sgr(cell))
            current = attrs
        parts.append(data)
    if current != _PLAIN:
        parts.append("\x1b[0m")
    return "".join(parts)


class _Screen(pyte.Screen):
    """A pyte screen that keeps the lines scrolled off its top (a bounded scrollback)."""

    def select_graphic_rendition(self, *attrs: int, private: bool = False) -> None:
        # ``CSI ? ... m`` / ``CSI > ... m`` (e.g. xterm's modifyOtherKeys) are not colours.
        if not private:
            super().select_graphic_rendition(*attrs)

    def __init__(
        self,
        columns: int,
        lines: int,
        scrollback: int,
        on_report: Callable[[bytes], None] | None = None,
    ) -> None:
        self.scrollback: deque[Any] = deque(maxlen=max(scrollback, 1))
        self._keep_scrollback = scrollback > 0
        self._on_report = on_report
        super().__init__(columns, lines)

    def report_device_status(self, mode: int = 0, *, private: bool = False) -> None:
        # pyte's own version rejects the private form (``ESC[?6n``) and reports a column
        # past the last one while a wrap is pending; xterm reports the last column.
        if self._on_report is None or private:
            return
        if mode == 5:
            self._on_report(b"\x1b[0n")
        elif mode == 6:
            row = self.cursor.y + 1
            if pyte.modes.DECOM in self.mode and self.margins is not None:
                row -= self.margins.top
            column = min(self.cursor.x, self.columns - 1) + 1
            self._on_report(f"\x1b[{row};{column}R".encode())

    def index(self) -> None:
        top, bottom = self.margins or pyte.screens.Margins(0, self.lines - 1)
        if self._keep_scrollback and top == 0 and self.cursor.y == bottom:
            self.scrollback.append(self.buffer[0])
        super().index()


class _TolerantStream(pyte.ByteStream):
    """A byte stream whose parser survives sequences the screen rejects: pyte resets its
    parser and re-raises; we count the error and carry on with the next byte."""

    errors = 0

    def _send_to_parser(self, data: str) -> bool | None:
        try:
            return super()._send_to_parser(data)
        except Exception:
            self.errors += 1
            return True  # pyte's fresh parser takes plain text


class TerminalScreen:
    """A virtual terminal fed with a session's output (see the module docstring)."""

    def __init__(
        self,
        cols: int,
        rows: int,
        *,
        scrollback: int = 1000,
        max_pending: int = _DEFAULT_MAX_PENDING,
        on_report: Callable[[bytes], None] | None = None,
    ) -> None:
        self._scrollback_size = scrollback
        self._on_report = on_report
        self._screen = _Screen(cols, rows, scrollback, on_report)
        self._stream = _TolerantStream(self._screen)
        self._pending: deque[bytes] = deque()
        self._pending_bytes = 0
        self._max_pending = max_pending
        self._reset_needed = False
        self.resyncs = 0

    @property
    def cols(self) -> int:
        """Columns."""
        return int(self._screen.columns)

    @property
    def rows(self) -> int:
        """Rows."""
        return int(self._screen.lines)

    @property
    def parse_errors(self) -> int:
        """Sequences the screen could not apply (skipped)."""
        return self._stream.errors

    @property
    def pending_bytes(self) -> int:
        """Output queued but not parsed yet."""
        return self._pending_bytes

    def feed(self, data: bytes) -> None:
        """Queue output for the screen (parsed when the screen is next read)."""
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes > self._max_pending:
            while self._pending_bytes - len(self._pending[0]) > self._max_pending // 2:
                self._pending_bytes -= len(self._pending.popleft())
            self._reset_needed = True

    def flush(self, max_bytes: int | None = None) -> bool:
        """Parse queued output now: all of it, or about ``max_bytes`` (so a caller on an event
        loop can parse a flood in slices). Returns whether output is still queued."""
        if not self._pending:
            return False
        if self._reset_needed:
            self._reset_needed = False
            self.resyncs += 1
            self._start_over()
        if max_bytes is None or self._pending_bytes <= max_bytes:
            data = b"".join(self._pending)
            self._pending.clear()
        else:
            parts: list[bytes] = []
            taken = 0
            while self._pending and taken < max_bytes:
                chunk = self._pending.popleft()
                room = max_bytes - taken
                if len(chunk) > room:
                    self._pending.appendleft(chunk[room:])
                    chunk = chunk[:room]
                parts.append(chunk)
                taken += len(chunk)
            data = b"".join(parts)
        self._pending_bytes -= len(data)
        try:
            self._stream.feed(data)
        except Exception:
            # Whatever a program prints must not break its session: start the screen over.
            self.resyncs += 1
            self._start_over()
        return bool(self._pending)

    def _start_over(self) -> None:
        """A blank screen of the same size (after a flood, or output pyte could not take)."""
        self._screen = _Screen(self.cols, self.rows, self._scrollback_size, self._on_report)
        self._stream = _TolerantStream(self._screen)

    def resize(self, cols: int, rows: int) -> None:
        """Change the screen size (queued output is parsed at the old size first)."""
        self.flush()
        self._screen.resize(lines=rows, columns=cols)

    def lines(self, *, parsed_only: bool = False) -> list[str]:
        """The visible screen as text, one string per row (padded to the width).
        ``parsed_only``: as far as output has been parsed, without parsing what is queued."""
        if not parsed_only:
            self.flush()
        screen = self._screen
        return [_row_text(screen.buffer[y], screen.columns) for y in range(screen.lines)]

    def text(self) -> str:
        """The visible screen as text, trailing blanks removed."""
        return "\n".join(line.rstrip() for line in self.lines())

    def scrollback_lines(self) -> list[str]:
        """The scrollback as text, oldest first."""
        self.flush()
        cols = self.cols
        return [
            "".join(line[x].data for x in range(cols)).rstrip() for line in self._screen.scrollback
        ]

    def render(self, *, scrollback: int | None = None) -> bytes:
        """Bytes that redraw this screen (after up to ``scrollback`` lines of history) on a
        fresh terminal of the same size."""
        self.flush()
        screen = self._screen
        cols, rows = self.cols, self.rows
        out: list[str] = ["\x1b[0m\x1b[H\x1b[2J\x1b[3J"]
        history = list(screen.scrollback) if screen._keep_scrollback else []
        if scrollback is not None:
            history = history[-scrollback:] if scrollback > 0 else []
        for line in history:
            out.append(_render_line(line, cols))
            out.append("\r\n")
        if history:
            # Scroll exactly the history lines off the visible area; the rows are drawn over
            # the blank screen below at absolute positions.
            out.append("\n" * (rows - 1))
        for y in range(rows):
            out.append(f"\x1b[{y + 1};1H")
            out.append(_render_line(screen.buffer[y], cols))
        modes = screen.mode
        for mode in _REPLAYED_PRIVATE_MODES:
            shifted = mode << 5
            if mode == 25:
                if shifted not in modes:
                    out.append("\x1b[?25l")
            elif shifted in modes:
                out.append(f"\x1b[?{mode}h")
        cursor = screen.cursor
        out.append(f"\x1b[{cursor.y + 1};{min(cursor.x, cols - 1) + 1}H")
        out.append(_sgr(cursor.attrs) if _attrs(cursor.attrs) != _PLAIN else "")
        return "".join(out).encode("utf-8", "replace")
