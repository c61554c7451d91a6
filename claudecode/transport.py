"""Byte transports under a session: a small, dull interface and the subprocess one.

A transport moves bytes; everything about messages lives in the layer above
(:mod:`claudecode.protocol`). :class:`SubprocessTransport` runs the CLI with an argv list
(never a shell string), always drains its stderr (a full stderr pipe would block the CLI)
into debug logs and a bounded tail that errors carry, and shuts down in steps: close stdin,
wait ``close_grace``, SIGTERM, wait ``kill_after``, SIGKILL — reaping the child on every path.

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
import os
import signal
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence

import anyio
import anyio.abc

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
        stderr_tail_lines: int = 50,
        on_stderr: Callable[[str], None] | None = None,
        user: str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.close_grace = close_grace
        self.kill_after = kill_after
        self.on_stderr = on_stderr
        self.user = user
        self._tail_lines = max(1, stderr_tail_lines)
        self._tail: collections.deque[str] = collections.deque(maxlen=self._tail_lines)
        self._process: anyio.abc.Process | None = None
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
        # Every end is created non-inheritable; the child gets the write ends as fds 1 and 2.
        read_end, write_end = os.pipe()
        err_read, err_write = os.pipe()
        try:
            self._process = await anyio.open_process(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=write_end,
                stderr=err_write,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
                user=self.user,
            )
        except OSError as exc:
            os.close(read_end)
            os.close(err_read)
            raise CLIStartError(f"could not start {self.argv[0]!r}: {exc}") from exc
        except BaseException:
            os.close(read_end)
            os.close(err_read)
            raise
        finally:
            # Only the child writes: its exit (and its children's) is our end of input.
            os.close(write_end)
            os.close(err_write)
        os.set_blocking(read_end, False)
        os.set_blocking(err_read, False)
        self._stdout = read_end
        self._stderr = err_read
        _log.debug("cli.spawned", pid=self._process.pid, argv=redact_argv(self.argv))
        task_group.start_soon(self._drain_stderr, name="claudecode stderr drain")

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
        process = self._require()
        assert process.stdin is not None
        await process.stdin.send(data)

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
        assert self._process.stdin is not None
        with contextlib.suppress(OSError, anyio.BrokenResourceError):
            await self._process.stdin.aclose()

    async def wait(self) -> int | None:
        process = self._require()
        code = await process.wait()
        # Let the stderr drain finish so error messages carry the whole tail.
        with anyio.move_on_after(1):
            await self._stderr_done.wait()
        return code

    async def aclose(self, *, force: bool = False) -> None:
        if self._closed or self._process is None:
            return
        self._closed = True
        process = self._process
        with anyio.CancelScope(shield=True):
            try:
                if not force:
                    await self.close_input()
                    with anyio.move_on_after(self.close_grace):
                        await process.wait()
                if process.returncode is None and not force:
                    self._signal(signal.SIGTERM)
                    with anyio.move_on_after(self.kill_after):
                        await process.wait()
                if process.returncode is None:
                    self._signal(signal.SIGKILL)
                await process.wait()
            finally:
                self._close_stdout()
                # The last of stderr into the tail, then our end closed (a grandchild that
                # keeps the pipe open must not keep the drain task alive).
                self._read_stderr()
                self._end_stderr()
                if process.stdin is not None:
                    with contextlib.suppress(OSError, anyio.BrokenResourceError):
                        await process.stdin.aclose()
                _log.debug("cli.reaped", pid=process.pid, returncode=process.returncode)

    def _signal(self, sig: signal.Signals) -> None:
        # The child leads its own process group (start_new_session), so the signal also
        # reaches the shells and tools it started.
        assert self._process is not None
        try:
            os.killpg(self._process.pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(sig)

    def _require(self) -> anyio.abc.Process:
        if self._process is None:
            raise RuntimeError("transport not started")
        return self._process


def _stderr_text(raw: bytes) -> str:
    """One stderr line as text (undecodable bytes replaced, without its ``\\r``)."""
    return raw.decode("utf-8", "replace").rstrip("\r")
