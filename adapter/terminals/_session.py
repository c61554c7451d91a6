"""One terminal session: a program on a pty, its screen, its viewers and its lifecycle.

Three tasks run per session, all on the event loop: the reader (pty output -> screen queue
and every viewer's buffer, nothing else on the hot path), the screen task (parses queued
output at a bounded rate, runs the agent's trust hook, derives busy / waiting / idle) and, until
the first output, the spawn watchdog. The session's main task waits for the child's exit, then
drains the last output, kills what is left of the process group, reaps the child and tells the
viewers how it ended. Nothing here blocks: a session costs no thread.

A program that asks the terminal for its cursor position (DSR, as Codex does at start) gets
its answer from the viewers' terminals; with no viewer attached, nobody would answer and the
program would wait, so the screen task answers from the server's screen model instead.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence

import anyio

from claudecode.internal import get_logger

from ._agents import Agent
from ._errors import TerminalClosedError
from ._escapees import MARKER_VAR, kill_marked, new_marker
from ._options import SessionOptions
from ._pty import PtyProcess
from ._screen import TerminalScreen
from ._types import (
    TerminalExit,
    TerminalInfo,
    TerminalResized,
    TerminalState,
    TerminalStatus,
    ViewerItem,
)
from ._viewer import TerminalViewer

__all__ = ("TerminalSession",)

_log = get_logger("claudecode.terminals")

#: Output within this many seconds counts as "busy" when no marker decides.
_ACTIVITY_WINDOW = 1.0
#: Shortest pause between two screen refreshes; the pause grows with the parse cost so the
#: screen never takes more than about a fifth of the loop.
_MIN_REFRESH_INTERVAL = 0.05
_REFRESH_COST_FACTOR = 4.0
#: Output parsed by the screen task between two pauses.
_PARSE_SLICE = 1024
#: While a trust prompt is on screen, look again this often even without new output (a key
#: typed too early may have been refused by the dialog).
_HOOK_RETRY_INTERVAL = 0.5
#: Without a screen model, a new viewer gets this much of the latest raw output.
_RAW_TAIL = 64 * 1024
_KILL_WAIT = 10.0


class TerminalSession:
    """A running (or ended) terminal session. Made by :class:`~terminals.TerminalManager`."""

    def __init__(
        self,
        *,
        session_id: str,
        agent: Agent,
        argv: Sequence[str],
        cwd: str,
        env: dict[str, str],
        cols: int,
        rows: int,
        accept_trust: bool,
        options: SessionOptions,
        on_change: Callable[[TerminalSession], None],
    ) -> None:
        self.id = session_id
        self.agent = agent
        self.argv = list(argv)
        self.cwd = cwd
        self.cols = cols
        self.rows = rows
        self.created_at = time.time()
        self._created_monotonic = time.monotonic()
        # Output and input stamp this (one clock read, no event): listings convert it.
        self._last_activity = self._created_monotonic
        self._options = options
        self._on_change = on_change
        self._accept_trust = accept_trust and agent.trust_hook is not None
        self.trust_accepted = False
        self._hook_sent_at = float("-inf")
        self._marker = new_marker()
        env = {**env, MARKER_VAR: self._marker}
        self._proc = PtyProcess.spawn(argv, cwd=cwd, env=env, cols=cols, rows=rows)
        self.pid = self._proc.pid
        self._screen = (
            TerminalScreen(
                cols, rows, scrollback=options.scrollback, on_report=self._on_screen_report
            )
            if options.screen
            else None
        )
        self._reports: deque[bytes] = deque()
        self._raw_tail: deque[bytes] = deque()
        self._raw_tail_bytes = 0
        self._viewers: set[TerminalViewer] = set()
        self._write_lock = anyio.Lock()
        self._dirty = anyio.Event()
        self._ended = anyio.Event()
        self._output_seen = False
        self._last_output = float("-inf")
        self.state: TerminalState = "starting"
        self._stop_reason: str | None = None
        self.exit: TerminalExit | None = None
        #: The type of the exception that ended the session (reason ``failed``), if one did.
        self.failure: str | None = None
        self.ended_at: float | None = None
        self.output_bytes = 0

    # -- what callers see ---------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether the program still runs."""
        return self.exit is None

    def info(self) -> TerminalInfo:
        """The session's snapshot."""
        exit_ = self.exit
        return TerminalInfo(
            id=self.id,
            agent=self.agent.name,
            cwd=self.cwd,
            command=self.argv[0],
            created_at=self.created_at,
            last_activity=self.created_at + (self._last_activity - self._created_monotonic),
            active=exit_ is None,
            pid=self.pid,
            cols=self.cols,
            rows=self.rows,
            state=self.state,
            viewers=len(self._viewers),
            trust_accepted=self.trust_accepted,
            exit_code=None if exit_ is None else exit_.code,
            exit_signal=None if exit_ is None else exit_.signal,
            exit_signal_name=None if exit_ is None else exit_.signal_name,
            exit_reason=None if exit_ is None else exit_.reason,
            ended_at=self.ended_at,
        )

    def screen_lines(self) -> list[str]:
        """The rendered screen, one string per row (empty without a screen model)."""
        return [] if self._screen is None else self._screen.lines()

    def screen_text(self) -> str:
        """The rendered screen as text (trailing blanks removed)."""
        return "" if self._screen is None else self._screen.text()

    def scrollback_lines(self) -> list[str]:
        """The screen's scrollback, oldest first."""
        return [] if self._screen is None else self._screen.scrollback_lines()

    @property
    def screen_resyncs(self) -> int:
        """How often the screen restarted from recent output after a flood."""
        return 0 if self._screen is None else self._screen.resyncs

    # -- input, size, viewers -------------------------------------------------------------------

    async def send_input(self, data: bytes) -> None:
        """Type ``data``. Raises :class:`TerminalClosedError` once the program has ended."""
        await self._write(data)
        self._last_activity = time.monotonic()

    async def _write(self, data: bytes) -> None:
        if self.exit is not None or self._proc.has_exited():
            raise TerminalClosedError(self.id)
        async with self._write_lock:
            try:
                await self._proc.write(data)
            except OSError as exc:
                raise TerminalClosedError(self.id) from exc

    def resize(self, cols: int, rows: int) -> bool:
        """Resize the terminal; a failure is logged and answered ``False``."""
        if self.exit is not None:
            _log.info("terminal.resize_ended", session_id=self.id)
            return False
        try:
            self._proc.resize(cols, rows)
        except OSError as exc:
            _log.warning("terminal.resize_failed", session_id=self.id, error=str(exc))
            return False
        self.cols, self.rows = cols, rows
        if self._screen is not None:
            self._screen.resize(cols, rows)
        self._publish(TerminalResized(cols=cols, rows=rows))
        self._on_change(self)
        return True

    def signal_foreground(self, sig: int) -> bool:
        """Send ``sig`` to the terminal's foreground job."""
        return self._proc.signal_foreground(sig)

    def attach(
        self, *, scrollback: int | None = None, max_bytes: int | None = None
    ) -> TerminalViewer:
        """A new viewer: the current screen first, then live output (see TerminalViewer)."""
        budget = self._options.viewer_max_bytes if max_bytes is None else max_bytes
        viewer = TerminalViewer(self.id, budget)
        if self._screen is not None:
            snapshot = self._screen.render(scrollback=scrollback)
        else:
            snapshot = b"".join(self._raw_tail)
        viewer._push(snapshot, force=True)
        viewer._push(TerminalStatus(state=self.state))
        if self.exit is not None:
            viewer._push(self.exit)
            viewer._end(self.failure)
        else:
            self._viewers.add(viewer)
            self._on_change(self)
        return viewer

    def detach(self, viewer: TerminalViewer) -> None:
        """Forget ``viewer`` (no-op if it is gone)."""
        if viewer in self._viewers:
            self._viewers.discard(viewer)
            viewer._end()
            self._on_change(self)

    def _publish(self, item: ViewerItem) -> None:
        dropped = [viewer for viewer in self._viewers if not viewer._push(item)]
        for viewer in dropped:
            self._viewers.discard(viewer)
            _log.warning("terminal.viewer_dropped", session_id=self.id)
        if dropped:
            self._on_change(self)

    # -- lifecycle ----------------------------------------------------------------------------

    async def stop(self, *, reason: str = "stopped") -> TerminalInfo:
        """Send the agent's stop signal (SIGTERM; SIGHUP for a shell) to the process group,
        SIGKILL after the grace period, and wait until the child is reaped."""
        if self.exit is None:
            if self._stop_reason is None:
                self._stop_reason = reason
            await self._terminate()
            await self._ended.wait()
        return self.info()

    async def _terminate(self) -> None:
        proc = self._proc
        self._signal_stop()
        with anyio.move_on_after(self._options.stop_grace):
            # Ended early by the session's own end, which closes the process (after giving
            # up on a child that would not die): what is left is the SIGKILL below.
            with contextlib.suppress(anyio.ClosedResourceError):
                await proc.wait_exited()
        if not proc.has_exited():
            _log.warning("terminal.kill_after_grace", session_id=self.id, pid=self.pid)
            proc.signal_group(signal.SIGKILL)

    async def run(self) -> None:
        """The session's lifetime (run in the manager's task group).

        A failure of the session's own tasks (a bug, a screen hook that raises) ends this
        session only: it is logged, the program is stopped (stop signal, SIGKILL after the
        grace) and reaped, and the viewers get the exit (reason ``failed``) and then a
        :class:`~terminals.TerminalFailedError`. Nothing of it reaches the manager's task
        group, whose other sessions go on.
        """
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._read_loop)
                tg.start_soon(self._screen_loop)
                if self._options.spawn_timeout is not None:
                    tg.start_soon(self._watchdog, self._options.spawn_timeout)
                await self._proc.wait_exited()
                tg.cancel_scope.cancel()
        except Exception as exc:
            self._failed(exc)
        finally:
            with anyio.CancelScope(shield=True):
                if self.failure is not None:
                    await self._stop_after_failure()
                await self._finish()

    def _failed(self, exc: BaseException) -> None:
        """Record (and log, with its traceback) that the session's own tasks failed."""
        # anyio wraps a task's exception in an ExceptionGroup: name the first real one.
        cause = exc
        while isinstance(cause, BaseExceptionGroup) and cause.exceptions:
            cause = cause.exceptions[0]
        if self.failure is None:
            self.failure = type(cause).__name__
        self._stop_reason = "failed"
        _log.error(
            "terminal.failed",
            session_id=self.id,
            pid=self.pid,
            agent=self.agent.name,
            error=self.failure,
            exc_info=exc,
        )

    async def _stop_after_failure(self) -> None:
        # As ``stop`` would, without the tasks that are gone: the agent's stop signal, the
        # grace, then _finish's SIGKILL for whatever is left.
        proc = self._proc
        if proc.has_exited():
            return
        self._signal_stop()
        with anyio.move_on_after(self._options.stop_grace):
            await proc.wait_exited()

    def _signal_stop(self) -> None:
        """The agent's stop signal (and SIGTERM) to the process group."""
        self._proc.signal_group(self.agent.stop_signal)
        if self.agent.stop_signal != signal.SIGTERM:
            self._proc.signal_group(signal.SIGTERM)

    async def _read_loop(self) -> None:
        proc = self._proc
        while True:
            try:
                data = await proc.read()
            except OSError as exc:
                _log.warning("terminal.read_failed", session_id=self.id, error=str(exc))
                return
            if not data:
                return
            self._on_output(data)

    def _on_output(self, data: bytes) -> None:
        self._last_output = anyio.current_time()
        self._last_activity = time.monotonic()
        self._output_seen = True
        self.output_bytes += len(data)
        if self._screen is not None:
            self._screen.feed(data)
        else:
            self._raw_tail.append(data)
            self._raw_tail_bytes += len(data)
            while self._raw_tail_bytes - len(self._raw_tail[0]) >= _RAW_TAIL:
                self._raw_tail_bytes -= len(self._raw_tail.popleft())
        if not self._dirty.is_set():
            self._dirty.set()
        if self._viewers:
            self._publish(data)

    async def _watchdog(self, timeout: float) -> None:
        await anyio.sleep(timeout)
        if self._output_seen or self._proc.has_exited():
            return
        _log.warning("terminal.watchdog", session_id=self.id, pid=self.pid, timeout=timeout)
        if self._stop_reason is None:
            self._stop_reason = "watchdog"
        await self._terminate()

    async def _screen_loop(self) -> None:
        while True:
            timeout = self._refresh_timeout()
            with anyio.move_on_after(timeout):
                await self._dirty.wait()
            if self._dirty.is_set():
                self._dirty = anyio.Event()
            await self._parse_in_slices()
            await self._send_reports()
            started = anyio.current_time()
            await self._refresh()
            cost = anyio.current_time() - started
            await anyio.sleep(max(_MIN_REFRESH_INTERVAL, cost * _REFRESH_COST_FACTOR))

    async def _parse_in_slices(self) -> None:
        # A flood is parsed a small slice at a time within the manager's parse budget, so
        # keystrokes, viewers and other sessions never wait long behind a screen.
        screen = self._screen
        if screen is None:
            return
        budget = self._options.budget
        while screen.pending_bytes:
            await budget.wait()
            started = anyio.current_time()
            screen.flush(max_bytes=_PARSE_SLICE)
            budget.spent(started, anyio.current_time() - started)

    def _on_screen_report(self, answer: bytes) -> None:
        # Called as the screen parses a status or cursor-position query. Viewers got the
        # query with the output and their terminals answer it; a viewer that attaches later
        # gets a redrawn screen without it (attach parses first, so it is not counted here).
        if self._viewers:
            return
        self._reports.append(answer)
        if not self._dirty.is_set():
            self._dirty.set()

    async def _send_reports(self) -> None:
        while self._reports:
            answer = self._reports.popleft()
            try:
                await self._write(answer)
            except TerminalClosedError:
                self._reports.clear()
                return
            _log.debug("terminal.status_reported", session_id=self.id, answer=answer)

    def _refresh_timeout(self) -> float:
        if self._accept_trust and not self.trust_accepted and self._output_seen:
            return _HOOK_RETRY_INTERVAL
        if self.state == "busy":
            # Re-evaluate when the activity window closes.
            return _ACTIVITY_WINDOW
        return float("inf")

    async def _refresh(self) -> None:
        # What has been parsed so far: a flood still being parsed is not waited for here.
        lines = self._screen.lines(parsed_only=True) if self._screen is not None else []
        if self._accept_trust and not self.trust_accepted and lines:
            await self._run_trust_hook(lines)
        self._set_state(self._detect_state(lines))

    async def _run_trust_hook(self, lines: list[str]) -> None:
        hook = self.agent.trust_hook
        assert hook is not None
        keys = hook(lines)
        now = anyio.current_time()
        if keys is None or now - self._hook_sent_at < _HOOK_RETRY_INTERVAL:
            return
        self._hook_sent_at = now
        if keys == b"\r":
            self.trust_accepted = True
            _log.info("terminal.trust_accepted", session_id=self.id, agent=self.agent.name)
        try:
            await self.send_input(keys)
        except TerminalClosedError:
            return

    def _detect_state(self, lines: list[str]) -> TerminalState:
        if not self._output_seen:
            return "starting"
        if lines:
            text = "\n".join(lines)
            if any(marker in text for marker in self.agent.waiting_markers):
                return "waiting"
            if any(marker in text for marker in self.agent.busy_markers):
                return "busy"
        if anyio.current_time() - self._last_output < _ACTIVITY_WINDOW:
            return "busy"
        return "idle"

    def _set_state(self, state: TerminalState) -> None:
        if state == self.state or self.exit is not None:
            return
        self.state = state
        self._publish(TerminalStatus(state=state))
        self._on_change(self)

    async def _finish(self) -> None:
        # Each step guarded: whatever goes wrong, the child is reaped and the viewers and
        # waiters hear of the end.
        returncode: int | None = None
        try:
            tail = self._proc.read_available()
            if tail:
                self._on_output(tail)
        except Exception as exc:
            self._failed(exc)
        try:
            returncode = await self._end_process()
        except Exception as exc:
            self._failed(exc)
        self._announce_exit(returncode)

    async def _end_process(self) -> int | None:
        """Kill what is left of the program, reap the child: its return code."""
        proc = self._proc
        try:
            if not proc.has_exited():
                # Cancelled from outside (the manager is shutting down) with the program alive.
                if self._stop_reason is None:
                    self._stop_reason = "closed"
                proc.signal_group(signal.SIGKILL)
                with anyio.move_on_after(_KILL_WAIT):
                    await proc.wait_exited()
            # The leader is a zombie now, so its process group id cannot have been reused:
            # sweep whatever it left behind in its group.
            proc.signal_group(signal.SIGKILL)
            # And whatever detached from the group on purpose (daemons started by the program).
            escaped = kill_marked(self._marker)
            if escaped:
                _log.info("terminal.detached_processes_killed", session_id=self.id, pids=escaped)
            return proc.reap() if proc.has_exited() else None
        finally:
            proc.close()

    def _announce_exit(self, returncode: int | None) -> None:
        code: int | None = None
        sig: int | None = None
        if returncode is not None:
            if returncode >= 0:
                code = returncode
            else:
                sig = -returncode
        self.exit = TerminalExit(
            code=code,
            signal=sig,
            signal_name=None if sig is None else _signal_name(sig),
            reason=self._stop_reason or "exited",
        )
        self.ended_at = time.time()
        self._last_activity = time.monotonic()
        self.state = "closed"
        _log.info(
            "terminal.ended",
            session_id=self.id,
            pid=self.pid,
            code=code,
            signal=sig,
            reason=self.exit.reason,
        )
        for viewer in self._viewers:
            viewer._push(TerminalStatus(state="closed"), force=True)
            viewer._push(self.exit, force=True)
            viewer._end(self.failure)
        self._viewers.clear()
        self._ended.set()
        self._on_change(self)

    async def wait(self) -> TerminalInfo:
        """Wait until the session has ended; its final snapshot."""
        await self._ended.wait()
        return self.info()


def _signal_name(sig: int) -> str | None:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return None
