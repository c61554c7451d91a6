"""The fake CLI's stdout: one flushed NDJSON line per message, written by one thread at a
time, with the script's crash faults applied after each line; and the hang a script can ask
for.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any, NoReturn

__all__ = (
    "hang_forever",
    "Output",
)

Json = dict[str, Any]


class Output:
    """stdout as NDJSON: one flushed line per message, with the crash faults applied."""

    def __init__(self, stream: IO[bytes], script: Json) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.lines = 0
        self._crash_after = script.get("crash_after_lines")
        self._crash_type = script.get("crash_after_type")
        self._crash_code = int(script.get("crash_exit_code", 1))
        #: Sees every message written (the session transcript, when the script keeps one).
        self.observer: Callable[[Json], None] | None = None

    def send(self, msg: Json) -> None:
        """Write ``msg`` as one JSON line."""
        data = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode()
        self._write((data, b"\n"))
        if self.observer is not None:
            self.observer(msg)
        self._after_line(msg)

    def send_raw(self, line: str) -> None:
        """Write ``line`` verbatim (a garbage line); a newline is appended."""
        self._write((line.encode("utf-8", "surrogateescape"), b"\n"))
        self._after_line(None)

    def send_big(self, msg: Json, marker: str, size: int) -> None:
        """Write ``msg`` with the string ``marker`` replaced by ``size`` bytes of ``x``.

        The filler goes out in 1 MiB slices, so a 100 MiB line never exists in memory.
        """
        data = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode()
        head, _, tail = data.partition(marker.encode())
        chunk = b"x" * min(size, 1 << 20)

        def parts() -> Any:
            yield head
            left = size
            while left > 0:
                yield chunk[:left] if left < len(chunk) else chunk
                left -= len(chunk)
            yield tail
            yield b"\n"

        self._write(parts())
        self._after_line(msg)

    def _write(self, parts: Any) -> None:
        with self._lock:
            try:
                for part in parts:
                    self._stream.write(part)
                self._stream.flush()
            except (BrokenPipeError, ValueError):
                os._exit(1)  # the host went away; nothing left to talk to
            self.lines += 1

    def _after_line(self, msg: Json | None) -> None:
        if self._crash_after is not None and self.lines >= int(self._crash_after):
            self.crash()
        if self._crash_type is not None and msg is not None:
            kinds = {msg.get("type"), msg.get("subtype")}
            request = msg.get("request")
            if isinstance(request, dict):
                kinds.add(request.get("subtype"))
            if self._crash_type in kinds:
                self.crash()

    def crash(self) -> NoReturn:
        """Die at once, as a crashing CLI would: no result, no cleanup."""
        sys.stderr.write(f"fake claude: crashing on purpose after {self.lines} lines\n")
        sys.stderr.flush()
        os._exit(self._crash_code)


def hang_forever() -> NoReturn:
    """Write nothing more and never exit; only a signal ends the process."""
    sys.stderr.flush()
    while True:
        time.sleep(3600)
