"""NDJSON framing: bytes in (any chunk boundaries), complete lines out.

Theory of operation: chunks are appended to one ``bytearray``; the search for ``\\n`` resumes
where the previous search stopped, so every byte is scanned once and the whole input costs
linear time however it is chunked (a 100 MiB line fed in 64 KiB chunks is scanned once, not
1,600 times). Consumed bytes are dropped once per :meth:`LineBuffer.feed`, never per line.

A line longer than ``max_line_bytes`` is not kept: the buffer reports it as an
:class:`OversizedLine` (with its first bytes, for diagnosis) and discards the rest up to the
next newline, so one huge line costs bounded memory and the stream goes on. End of input is
data: ``feed(b"")`` turns a trailing unterminated line into a final line; feeding after that is
a :class:`~claudecode.errors.UsageError`. Every line comes out, empty ones included, so the
caller can number lines exactly as the peer wrote them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import UsageError

__all__ = ("DEFAULT_MAX_LINE_BYTES", "LineBuffer", "OversizedLine")

#: Real tool results exceed the 1 MiB cap that broke the official SDK. A tool's output is
#: written twice in its ``user`` line (the ``tool_result`` block and the structured
#: ``tool_use_result``), with JSON escapes and the envelope around it: 160 MiB lets a 64 MiB
#: output through.
DEFAULT_MAX_LINE_BYTES = 160 * 1024 * 1024

_HEAD_BYTES = 1024
_TAIL_BYTES = 4096


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A line that exceeded ``max_line_bytes``; only its first KiB and last 4 KiB are kept
    (2.1.332 writes a result's ``type`` key after its text: the tail still tells)."""

    line_number: int
    size: int
    head: bytes
    tail: bytes = b""


class LineBuffer:
    """Split a byte stream into lines, in linear time, with a maximum line size.

    Args:
        max_line_bytes: the longest line accepted, newline excluded.
    """

    __slots__ = (
        "_discard_head",
        "_discard_tail",
        "_eof",
        "_line_number",
        "_max",
        "_pending",
        "_pending_len",
    )

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise UsageError("max_line_bytes must be at least 1")
        self._max = max_line_bytes
        # The incomplete last line, kept as chunks and joined once its newline arrives.
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._line_number = 0
        self._eof = False
        # Set while an oversized line is being skipped: its first bytes, and its last ones.
        self._discard_head: bytes | None = None
        self._discard_tail = b""

    @property
    def line_number(self) -> int:
        """How many lines (blank ones included) have been completed so far."""
        return self._line_number

    @property
    def buffered(self) -> int:
        """Bytes held for the incomplete last line (none while skipping an oversized one)."""
        return 0 if self._discard_head is not None else self._pending_len

    @property
    def at_eof(self) -> bool:
        """True once ``feed(b"")`` was called."""
        return self._eof

    def feed(self, data: bytes) -> list[bytes | OversizedLine]:
        """Add ``data`` and return the lines it completed, without their newlines.

        ``b""`` means end of input: a pending unterminated line is returned as the last line.
        Empty lines are returned too (the caller decides what to skip).

        Raises:
            UsageError: data fed after end of input.
        """
        if self._eof:
            raise UsageError("LineBuffer.feed() called after end of input")
        out: list[bytes | OversizedLine] = []
        if not data:
            self._eof = True
            if self._pending_len or self._discard_head is not None:
                self._complete(out, b"")
            return out
        parts = data.split(b"\n")
        last = parts.pop()
        if parts:
            self._complete(out, parts[0])
            rest = parts[1:]
            if len(data) <= self._max:
                out += rest  # no line of this chunk can be too long: no per-line check
            else:
                max_len = self._max
                number = self._line_number
                for line in rest:
                    number += 1
                    if len(line) > max_len:
                        out.append(
                            OversizedLine(
                                number, len(line), line[:_HEAD_BYTES], line[-_TAIL_BYTES:]
                            )
                        )
                    else:
                        out.append(line)
            self._line_number += len(rest)
        if last:
            self._add_pending(last)
        return out

    def _add_pending(self, chunk: bytes) -> None:
        self._pending_len += len(chunk)
        head = self._discard_head
        if head is not None:
            # Only the length and the first bytes of a skipped line are kept.
            if len(head) < _HEAD_BYTES:
                self._discard_head = head + chunk[: _HEAD_BYTES - len(head)]
            self._discard_tail = (self._discard_tail + chunk[-_TAIL_BYTES:])[-_TAIL_BYTES:]
        else:
            self._pending.append(chunk)
            if self._pending_len > self._max:
                joined = b"".join(self._pending)
                self._discard_head = joined[:_HEAD_BYTES]
                self._discard_tail = joined[-_TAIL_BYTES:]
                self._pending.clear()

    def _complete(self, out: list[bytes | OversizedLine], tail: bytes) -> None:
        """Finish the pending line with ``tail`` (the bytes before its newline)."""
        self._line_number += 1
        size = self._pending_len + len(tail)
        if self._discard_head is not None or size > self._max:
            head = self._discard_head
            end = self._discard_tail
            if head is None:
                joined = b"".join(self._pending)
                head, end = joined[:_HEAD_BYTES], joined[-_TAIL_BYTES:]
            if len(head) < _HEAD_BYTES:
                head += tail[: _HEAD_BYTES - len(head)]
            end = (end + tail[-_TAIL_BYTES:])[-_TAIL_BYTES:]
            out.append(OversizedLine(self._line_number, size, head, end))
        else:
            if self._pending:
                self._pending.append(tail)
                line = b"".join(self._pending)
            else:
                line = tail
            out.append(line)
        self._pending.clear()
        self._pending_len = 0
        self._discard_head = None
        self._discard_tail = b""
