"""Readable terminal rendering of the event stream (``claudecode-bridge run``)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from normalize import ModifyFile, ShellExec

from .._escape import escape_control as _safe
from ..events import (
    ApiRetry,
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    ModeChanged,
    PermissionCancelled,
    PermissionDenied,
    PermissionResolved,
    RateLimit,
    Reasoning,
    SessionStatus,
    ToolCall,
    ToolUpdate,
)

__all__ = ("TerminalRenderer",)

_DIFF_LINES = 40
_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class TerminalRenderer:
    """Writes events as a person would like to read them: streamed text, tool lines with
    their outcome, diffs of file edits, and a cost / token summary per turn.

    Everything that comes from the model, a tool or the CLI is written with its control
    characters escaped (see :mod:`adapter._escape`): a tool's output cannot retitle, clear or
    reprogram the terminal. Newlines and tabs are kept.

    On a terminal a running tool shows a live spinner with its elapsed time (advanced by
    :meth:`tick`), replaced by the outcome line when the tool finishes; elsewhere a static
    "running" line is written.

    Args:
        out: where to write (stdout by default).
        color: ANSI colours; by default when ``out`` is a terminal.
        live: the spinner; by default when ``out`` is a terminal.
    """

    def __init__(
        self, out: TextIO | None = None, *, color: bool | None = None, live: bool | None = None
    ) -> None:
        self.out = out or sys.stdout
        tty = self.out.isatty()
        self.color = tty if color is None else color
        self.live = tty if live is None else live
        self._in_text = False
        self._in_reasoning = False
        self._running: dict[str, str] = {}
        # The spinner line: (tool call id, title, start time), while it is the last line.
        self._spinner: tuple[str, str, float] | None = None
        self._frame = 0

    def _c(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _line(self, text: str = "") -> None:
        self._break()
        self.out.write(text + "\n")

    def _break(self) -> None:
        if self._spinner is not None:
            self.out.write("\n")  # leave the spinner line as it is
            self._spinner = None
        if self._in_text or self._in_reasoning:
            self.out.write("\n")
            self._in_text = self._in_reasoning = False

    def pause(self) -> None:
        """End the current line (before someone else writes to the terminal)."""
        self._break()
        self.out.flush()

    def tick(self) -> None:
        """Advance the spinner of the running tool, if one is shown."""
        if self._spinner is None:
            return
        _, title, started = self._spinner
        self._frame = (self._frame + 1) % len(_FRAMES)
        elapsed = time.monotonic() - started
        self.out.write(
            "\r\x1b[2K"
            + self._c("36", f"⏺ {title}")
            + self._c("2", f"  {_FRAMES[self._frame]} {elapsed:.1f}s")
        )
        self.out.flush()

    def render(self, event: Event) -> None:
        """Write one event."""
        match event:
            case MessageChunk(text=text):
                if self._in_reasoning:
                    self._break()
                self._in_text = True
                self.out.write(_safe(text))
            case Reasoning(text=text):
                if not self._in_reasoning:
                    self._break()
                    self.out.write(self._c("2;3", "thinking: "))
                    self._in_reasoning = True
                self.out.write(self._c("2;3", _safe(text)))
            case ToolCall():
                title = _safe(event.title)
                self._running[event.tool_call_id] = title
                if self.live:
                    self._break()
                    self._spinner = (event.tool_call_id, title, time.monotonic())
                    self.out.write(self._c("36", f"⏺ {title}") + self._c("2", "  …"))
                else:
                    self._line(self._c("36", f"⏺ {title}") + self._c("2", "  … running"))
            case ToolUpdate():
                self._running.pop(event.tool_call_id, None)
                ok = event.status == "complete"
                mark = self._c("32", "✓") if ok else self._c("31", "✗")
                if self._spinner is not None and self._spinner[0] == event.tool_call_id:
                    self.out.write("\r\x1b[2K")  # the outcome replaces the spinner line
                    self._spinner = None
                self._line(f"{mark} {_safe(event.title)}")
                self._details(event)
            case PermissionCancelled(pending_id=pending_id, reason=reason):
                self._line(
                    self._c("33", f"  permission request {_safe(pending_id)} withdrawn ({reason})")
                )
            case PermissionResolved(decision="answered", answers=answers):
                said = "; ".join(f"{q} {', '.join(a)}" for q, a in (answers or {}).items())
                self._line(self._c("2", _safe(f"  answered: {said}")))
            case PermissionResolved(decision="declined", by=by, message=message):
                self._line(self._c("33", _safe(f"  question declined by {by}: {message or ''}")))
            case PermissionDenied(tool_name=tool, message=message):
                self._line(self._c("33", _safe(f"  {tool} denied: {message}")))
            case SessionStatus():
                model = event.model or "default model"
                mode = event.permission_mode or "default"
                session = event.cli_session_id or "?"
                self._line(self._c("2", _safe(f"● session {session} · {model} · mode {mode}")))
            case ModeChanged(mode=mode):
                self._line(self._c("2", _safe(f"● permission mode: {mode}")))
            case ApiRetry():
                self._line(
                    self._c(
                        "33",
                        _safe(f"  API retry {event.attempt}: {event.error or event.error_status}"),
                    )
                )
            case RateLimit(status=status):
                self._line(self._c("33", _safe(f"  rate limit: {status}")))
            case ErrorEvent(message=message, kind=kind):
                self._line(self._c("31", _safe(f"error ({kind}): {message}")))
            case Complete():
                self._summary(event)
            case _:
                pass
        self.out.flush()

    def _details(self, event: ToolUpdate) -> None:
        payload = event.normalized
        if isinstance(payload, ModifyFile):
            for mutation in payload.mutations:
                if mutation.diff:
                    lines = _safe(mutation.diff).splitlines()
                    for raw in lines[:_DIFF_LINES]:
                        code = "32" if raw.startswith("+") else "31" if raw.startswith("-") else "2"
                        self.out.write("    " + self._c(code, raw) + "\n")
                    if len(lines) > _DIFF_LINES:
                        self.out.write(
                            self._c("2", f"    … {len(lines) - _DIFF_LINES} more lines\n")
                        )
        elif isinstance(payload, ShellExec) and payload.output is not None:
            text = _safe((payload.output.stdout or "") + (payload.output.stderr or ""))
            lines = text.rstrip("\n").splitlines()
            for raw in lines[:8]:
                self.out.write(self._c("2", "    " + raw) + "\n")
            if len(lines) > 8:
                self.out.write(self._c("2", f"    … {len(lines) - 8} more lines\n"))
        elif payload.error:
            self.out.write(self._c("31", f"    {_safe(payload.error)}") + "\n")

    def _summary(self, event: Complete) -> None:
        tokens = event.tokens
        seconds = event.duration_ms / 1000
        outcome = self._c("31", "failed") if event.is_error else self._c("32", "done")
        tokens_in = tokens.input + tokens.cache_read + tokens.cache_creation
        self._line(
            f"{outcome} · ${event.cost_usd:.4f} · {tokens_in} in / {tokens.output} out tokens"
            f" · {seconds:.1f}s · {event.num_turns} turns"
        )
