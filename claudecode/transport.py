"""Byte transports under a session: a small, dull interface and the subprocess one.

A transport moves bytes; everything about messages lives in the layer above
(:mod:`claudecode.protocol`). :class:`SubprocessTransport` runs the CLI with an argv list
(never a shell string), always drains its stderr (a full stderr pipe would block the CLI)
into debug logs and a bounded tail that errors carry, and shuts down in steps: close stdin,
wait ``close_grace``, SIGTERM, wait ``kill_after``, SIGKILL — reaping the child on every path.

The CLI leads its own process group, and it is reaped only after that group got SIGKILL: the
shells and tools it started never outlive it, and since an exited but unreaped child keeps
its process id the signal cannot reach an unrelated process that got the id again (the exit
is awaited without reaping, :mod:`claudecode._child_exit`). Its end is watched apart from its
stdout: a CLI that exits while a child of it keeps stdout open ends the output after
``exit_grace`` (that child is killed with the group, what the pipe holds is still read), where
the output would otherwise never end.

The child's stdout is a pipe we create and read ourselves, non-blocking: a read takes what
the pipe holds straight into the bytes the protocol splits (the event loop's pipe transport
would read each chunk into a fresh 256 KiB buffer and copy it twice more through a
``StreamReader``), and the poller is asked only when the pipe is empty.

Its stderr is such a pipe too, so that the tail an error carries is complete: reading
:attr:`SubprocessTransport.stderr_tail` first takes (without waiting, bounded) whatever the
pipe still holds, and the tail ends with a last line the CLI did not finish. Otherwise the
watchdog, or an exit whose stderr stays open in a grandchild, would report the tail as far as
the drain task had got, without the last words of a CLI that crashed or went silent.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence

import anyio
import anyio.abc
import anyio.lowlevel

from ._child_exit import ChildExit
from ._log import get_logger
from ._private_args import redact_argv
from .errors import CLIStartError

__all__ = ("SubprocessTransport", "Transport")

_log = get_logger("claudecode.transport")

READ_SIZE = 256 * 1024
#: Longest stderr line the tail keeps (longer ones are cut), and longest unfinished line
#: held back before it counts as a line.
_STDERR_LINE_CHARS = 2000
_STDERR_PENDING_MAX = 64 * 1024
#: At most this much stderr is read at once when the tail is asked for (the rest: the drain).
_STDERR_DRAIN_MAX = 1024 * 1024
#: How often an exited CLI's stdout is looked at while the reader still drains it.
_DRAIN_POLL = 0.05


class Transport(ABC):
    """Bytes to and from a peer that speaks stream-json."""

    @abstractmethod
    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Connect (spawn), running any helper tasks in ``task_group``."""

    @abstractmethod
    async def send(self, data: bytes) -> None:
        """Write ``data``; raises ``anyio.BrokenResourceError`` when the peer is gone."""

    @abstractmethod
    async def receive(self) -> bytes:
        """Return the next chunk of output, or ``b""`` at end of output.

        It may return without yielding to other tasks while output is buffered: a caller
        that loops on it yields once per chunk (the session's reader does)."""

    @abstractmethod
    async def close_input(self) -> None:
        """Signal end of input (close the peer's stdin)."""

    @abstractmethod
    async def aclose(self, *, force: bool = False) -> None:
        """Stop the peer and release everything; ``force`` skips the grace period."""

    @abstractmethod
    async def wait(self) -> int | None:
        """Wait for the peer to end; return its exit code when it has one."""

    @property
    @abstractmethod
    def returncode(self) -> int | None:
        """The exit code once the peer ended, else ``None``."""

    @property
    def stderr_tail(self) -> str:
        """The last lines the peer wrote on stderr (empty when there are none)."""
        return ""


class SubprocessTransport(Transport):
    """Run a command as a child process and talk to it over its stdin and stdout.

    Args:
        argv: the command, executable first.
        cwd: its working directory.
        env: its whole environment.
        close_grace: seconds to wait for exit after closing stdin, before SIGTERM.
        kill_after: seconds between SIGTERM and SIGKILL.
        exit_grace: seconds the output may stay open after the CLI itself exited (held by
            a child of it) before that child's process group is killed and the output ends.
        stderr_tail_lines: how many stderr lines to keep for errors.
        on_stderr: called with each complete stderr line (on the event loop, by the drain
            task or whoever reads :attr:`stderr_tail`; must not block).
        user: run the child as this user.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        close_grace: float = 5.0,
        kill_after: float = 5.0,
        exit_grace: float = 2.0,
        stderr_tail_lines: int = 50,
        on_stderr: Callable[[str], None] | None = None,
        user: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.close_grace = close_grace
        self.kill_after = kill_after
        self.exit_grace = exit_grace
        self.on_stderr = on_stderr
        self.user = user
        self._tail_lines = max(1, stderr_tail_lines)
        self._tail: collections.deque[str] = collections.deque(maxlen=self._tail_lines)
        self._process: subprocess.Popen[bytes] | None = None
        self._exit: ChildExit | None = None
        self._reaped = False
        self._exit_watch = anyio.CancelScope()
        self._exit_seen = anyio.Event()
        self._stdin: int | None = None
        self._stdout: int | None = None
        self._stderr: int | None = None
        self._stderr_pending = b""
        self._stderr_done = anyio.Event()
        self._stdin_closed = False
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The child's process id once started."""
        return self._process.pid if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process is not None else None

    @property
    def stderr_tail(self) -> str:
        """The last lines the CLI wrote on stderr, up to the moment of asking: what its
        stderr pipe still holds is read first (without waiting), and a last line it did
        not finish is included."""
        self._read_stderr()
        lines = list(self._tail)
        unfinished = _stderr_text(self._stderr_pending)
        if unfinished:
            lines = [*lines, unfinished[:_STDERR_LINE_CHARS]][-self._tail_lines :]
        return "\n".join(lines)

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        # Every end is created non-inheritable; the child gets its ends as fds 0, 1 and 2.
        # Plain Popen, not the event loop's subprocess support: asyncio's child watcher
        # reaps the child the moment it exits, before its process group could be signalled.
        in_read, in_write = os.pipe()
        read_end, write_end = os.pipe()
        err_read, err_write = os.pipe()
        try:
            # Spawning blocks as briefly as the event loop's own spawn does (fork/exec).
            self._process = subprocess.Popen(  # noqa: ASYNC220
                self.argv,
                stdin=in_read,
                stdout=write_end,
                stderr=err_write,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                user=self.user,
            )
        except OSError as exc:
            for fd in (in_write, read_end, err_read):
                os.close(fd)
            raise CLIStartError(f"could not start {self.argv[0]!r}: {exc}") from exc
        except BaseException:
            for fd in (in_write, read_end, err_read):
                os.close(fd)
            raise
        finally:
            # Only the child writes: its exit (and its children's) is our end of input.
            os.close(in_read)
            os.close(write_end)
            os.close(err_write)
        self._exit = ChildExit(self._process.pid)
        for fd in (in_write, read_end, err_read):
            os.set_blocking(fd, False)
        self._stdin = in_write
        self._stdout = read_end
        self._stderr = err_read
        _log.debug("cli.spawned", pid=self._process.pid, argv=redact_argv(self.argv))
        task_group.start_soon(self._drain_stderr, name="claudecode stderr drain")
        task_group.start_soon(self._watch_exit, name="claudecode exit watch")

    async def _watch_exit(self) -> None:
        """End the output of a CLI that exited while a child of it holds its stdout."""
        assert self._exit is not None
        with self._exit_watch:
            try:
                await self._exit.wait()  # the one waiter on the pidfd; others: the event
            except (anyio.ClosedResourceError, OSError):
                return
            finally:
                self._exit_seen.set()
            # The reader normally meets the end of output (and reaps) within this grace.
            await anyio.sleep(self.exit_grace)
            if self._reaped or self._closed:
                return
            _log.debug("cli.exited_output_open", pid=self.pid)
            self._reap()  # its process group is killed first: the holders of stdout die
            # The reader drains what the pipe holds, then meets its end (the holders are
            # gone) -- or, for a holder that left the group, the pipe is closed once empty.
            while (fd := self._stdout) is not None:
                state = _pipe_state(fd)
                if state == "empty":
                    # No await since the check: nothing can be read between it and this.
                    _log.warning("cli.exited_output_held", pid=self.pid)
                    self._close_stdout()
                    return
                if state == "ended":
                    return  # the reader will see the end itself
                await anyio.sleep(_DRAIN_POLL)

    def _reap(self) -> int:
        """Kill what is left of the exited CLI's process group, then reap the CLI.

        Call only once it has exited (the group id is still its own until the reap)."""
        process = self._require()
        if not self._reaped:
            self._kill_group(signal.SIGKILL)
            process.wait()
            self._reaped = True
            if self._exit is not None:
                self._exit.close()
        returncode = process.returncode
        assert returncode is not None
        return returncode

    async def _drain_stderr(self) -> None:
        try:
            while self._read_stderr():
                fd = self._stderr
                if fd is None:
                    break
                try:
                    await anyio.wait_readable(fd)
                except (anyio.ClosedResourceError, OSError):
                    break
        finally:
            self._stderr_done.set()

    def _read_stderr(self, limit: int = _STDERR_DRAIN_MAX) -> bool:
        """Record what the stderr pipe holds now (up to ``limit`` bytes), without waiting.
        ``False`` once the pipe is at its end (or closed)."""
        fd = self._stderr
        if fd is None:
            return False
        taken = 0
        while taken < limit:
            try:
                chunk = os.read(fd, min(READ_SIZE, limit - taken))
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                self._end_stderr()
                return False
            taken += len(chunk)
            self._take_stderr(chunk)
        return True

    def _take_stderr(self, chunk: bytes) -> None:
        *lines, pending = (self._stderr_pending + chunk).split(b"\n")
        for raw in lines:
            self._record_stderr(raw)
        if len(pending) > _STDERR_PENDING_MAX:
            self._record_stderr(pending)
            pending = b""
        self._stderr_pending = pending

    def _end_stderr(self) -> None:
        """The pipe's end (or our close): the unfinished last line counts as a line."""
        pending, self._stderr_pending = self._stderr_pending, b""
        if pending:
            self._record_stderr(pending)
        fd, self._stderr = self._stderr, None
        if fd is not None:
            anyio.notify_closing(fd)  # wakes the drain task waiting on it
            os.close(fd)

    def _record_stderr(self, raw: bytes) -> None:
        text = _stderr_text(raw)
        if not text:
            return
        self._tail.append(text[:_STDERR_LINE_CHARS])
        _log.debug("cli.stderr", pid=self.pid, line=text[:_STDERR_LINE_CHARS])
        if self.on_stderr is not None:
            try:
                self.on_stderr(text)
            except Exception as exc:  # a faulty callback must not stop the drain
                _log.warning("cli.stderr_callback_failed", error=repr(exc))

    async def send(self, data: bytes) -> None:
        self._require()
        # The checkpoint comes first (as trio's own streams do it): once the bytes are
        # written, send returns without letting the reader see the peer's answer first.
        await anyio.lowlevel.checkpoint()
        view = memoryview(data)
        while view:
            fd = self._stdin
            if fd is None:
                raise anyio.ClosedResourceError
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                try:
                    await anyio.wait_writable(fd)
                except anyio.ClosedResourceError:
                    raise
                except OSError as exc:
                    raise anyio.BrokenResourceError from exc
                continue
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            view = view[written:]

    async def receive(self) -> bytes:
        self._require()
        while True:
            fd = self._stdout
            if fd is None:
                return b""
            try:
                data = os.read(fd, READ_SIZE)
            except BlockingIOError:
                try:
                    await anyio.wait_readable(fd)
                except anyio.ClosedResourceError:
                    return b""
                continue
            except OSError:
                return b""
            # No checkpoint when the pipe had data (each costs an event-loop turn, ~14% of
            # the client's time at full speed): the caller yields once per read.
            return data

    def _close_stdout(self) -> None:
        fd, self._stdout = self._stdout, None
        if fd is not None:
            anyio.notify_closing(fd)  # wakes a reader waiting on it (ClosedResourceError)
            os.close(fd)

    async def close_input(self) -> None:
        if self._stdin_closed or self._process is None:
            return
        self._stdin_closed = True
        self._close_stdin()
        await anyio.lowlevel.checkpoint()

    def _close_stdin(self) -> None:
        fd, self._stdin = self._stdin, None
        if fd is not None:
            anyio.notify_closing(fd)  # wakes a writer waiting on it (ClosedResourceError)
            with contextlib.suppress(OSError):
                os.close(fd)

    async def wait(self) -> int | None:
        self._require()
        while not await self._exited(1.0):
            pass
        code = self._reap()
        self._exit_watch.cancel()  # its work is done
        # Let the stderr drain finish so error messages carry the whole tail.
        with anyio.move_on_after(1):
            await self._stderr_done.wait()
        return code

    async def _exited(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the CLI's exit (without reaping it)."""
        assert self._exit is not None
        if self._reaped:
            return True
        with anyio.move_on_after(timeout):
            await self._exit_seen.wait()
        # Asked again: the exit watch may not run (its task group cancelled, say).
        return self._reaped or self._exit.has_exited()

    async def aclose(self, *, force: bool = False) -> None:
        if self._closed or self._process is None:
            return
        self._closed = True
        process = self._process
        with anyio.CancelScope(shield=True):
            try:
                exited = False
                if not force:
                    await self.close_input()
                    exited = await self._exited(self.close_grace)
                if not exited and not force:
                    self._kill_group(signal.SIGTERM)
                    exited = await self._exited(self.kill_after)
                while not exited:
                    self._kill_group(signal.SIGKILL)
                    exited = await self._exited(max(self.kill_after, 1.0))
                self._reap()  # kills what is left of its group first
            finally:
                self._exit_watch.cancel()
                self._close_stdout()
                # The last of stderr into the tail, then our end closed (a grandchild that
                # keeps the pipe open must not keep the drain task alive).
                self._read_stderr()
                self._end_stderr()
                self._close_stdin()
                if self._exit is not None:
                    self._exit.close()
                _log.debug("cli.reaped", pid=process.pid, returncode=process.returncode)

    def _kill_group(self, sig: signal.Signals) -> None:
        # The child leads its own process group (start_new_session), so the signal also
        # reaches the shells and tools it started. Never after the reap: the id may be reused.
        if self._reaped:
            return
        assert self._process is not None
        try:
            os.killpg(self._process.pid, sig)
        except (ProcessLookupError, PermissionError):
            # Not Popen.send_signal: it polls, which would reap.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._process.pid, sig)

    def _require(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise RuntimeError("transport not started")
        return self._process


def _pipe_state(fd: int) -> str:
    """Whether a pipe's read end holds bytes (``"data"``), is at its end (``"ended"``: every
    writer is gone), or is ``"empty"`` with a writer still holding it open."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    events = poller.poll(0)
    if not events:
        return "empty"
    try:
        available = int.from_bytes(
            fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder, signed=True
        )
    except OSError:
        return "data"
    return "data" if available > 0 else "ended"


def _stderr_text(raw: bytes) -> str:
    """One stderr line as text (undecodable bytes replaced, without its ``\\r``)."""
    return raw.decode("utf-8", "replace").rstrip("\r")
