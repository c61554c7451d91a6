"""A child process in a pseudo-terminal, driven without threads on the event loop.

The child is started in its own session (``setsid``) with the pty's slave side as its
controlling terminal, so Ctrl-C typed into the terminal interrupts its foreground job and
``stop`` can signal the whole process group. The master side is non-blocking; reads and
writes wait for readiness with :func:`anyio.wait_readable` / :func:`anyio.wait_writable`, which
work on asyncio and trio alike. The child's exit is awaited on a pidfd (Linux), falling back
to polling ``waitid(WNOWAIT)`` elsewhere (:mod:`claudecode._child_exit`, which the client's
subprocess transport uses too); either way the child is not reaped until
:meth:`PtyProcess.reap`, so its process group id cannot be reused while we may still signal it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence

import anyio
import anyio.lowlevel

from claudecode.internal import ChildExit

__all__ = ("PtyProcess",)

#: Reads in a row before yielding to other tasks while output keeps coming.
_READS_PER_CHECKPOINT = 8


def _make_controlling_terminal() -> None:  # pragma: no cover (runs in the child)
    # Runs after setsid() (start_new_session=True): stdin is the pty slave.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class PtyProcess:
    """One child process on a pseudo-terminal (see the module docstring)."""

    def __init__(self, popen: subprocess.Popen[bytes], master_fd: int) -> None:
        self._popen = popen
        self.pid = popen.pid
        self._fd = master_fd
        self._closed = False
        self._reaped = False
        self._reads = 0
        self._exit = ChildExit(popen.pid)
        #: Set once a wait saw the exit.
        self._exit_seen = False
        #: While one task watches the child's exit: the event it sets when it stops watching.
        self._watch: anyio.Event | None = None

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: str | None,
        env: Mapping[str, str],
        cols: int,
        rows: int,
    ) -> PtyProcess:
        """Start ``argv`` on a new pseudo-terminal of ``cols`` x ``rows``.

        Raises :class:`OSError` (e.g. :class:`FileNotFoundError`) when it cannot start.
        """
        master, slave = os.openpty()
        try:
            _set_size(master, cols, rows)
            attrs = termios.tcgetattr(slave)
            # Backspace erases whole UTF-8 characters (Linux; absent on some platforms).
            attrs[0] |= getattr(termios, "IUTF8", 0)
            termios.tcsetattr(slave, termios.TCSANOW, attrs)
            popen = subprocess.Popen(
                list(argv),
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
                preexec_fn=_make_controlling_terminal,  # two syscalls, then exec
                close_fds=True,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        return cls(popen, master)

    @property
    def fd(self) -> int:
        """The master side's file descriptor."""
        return self._fd

    @property
    def returncode(self) -> int | None:
        """The exit status once reaped: ``>= 0`` an exit code, ``< 0`` the killing signal."""
        return self._popen.returncode

    async def read(self, max_bytes: int = 65536) -> bytes:
        """The output available now (at least one byte, at most ``max_bytes``; waits for
        some); ``b""`` once every writer of the terminal is gone."""
        self._reads += 1
        if self._reads >= _READS_PER_CHECKPOINT:
            self._reads = 0
            await anyio.lowlevel.checkpoint()
        while True:
            try:
                first = os.read(self._fd, max_bytes)
            except BlockingIOError:
                self._reads = 0
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                if exc.errno == errno.EIO:  # Linux: the slave side is closed
                    return b""
                raise
            break
        # A pty hands out at most a few KB per read: take what else is there now, so the
        # layers above handle (and send to viewers) fewer, larger chunks.
        if len(first) >= max_bytes or not first:
            return first
        chunks = [first]
        size = len(first)
        while size < max_bytes:
            try:
                chunk = os.read(self._fd, max_bytes - size)
            except OSError:  # EAGAIN: nothing more now; EIO: reported by the next read
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)

    def read_available(self, max_bytes: int = 65536) -> bytes:
        """Whatever output is buffered right now, without waiting (``b""`` if none)."""
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(self._fd, max_bytes)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    async def write(self, data: bytes) -> None:
        """Type ``data`` into the terminal (waits while the terminal's input queue is full).

        Raises :class:`OSError` (``EIO``) when the terminal has hung up.
        """
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            view = view[written:]

    def resize(self, cols: int, rows: int) -> None:
        """Set the terminal size (the kernel sends SIGWINCH to the foreground job)."""
        _set_size(self._fd, cols, rows)

    def size(self) -> tuple[int, int]:
        """The terminal's ``(cols, rows)`` as the kernel knows it."""
        rows, cols, _, _ = struct.unpack(
            "HHHH", fcntl.ioctl(self._fd, termios.TIOCGWINSZ, b"\0" * 8)
        )
        return cols, rows

    def signal_group(self, sig: int) -> bool:
        """Send ``sig`` to the child's whole process group; ``False`` if it is gone."""
        if self._reaped:
            return False
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def signal_foreground(self, sig: int) -> bool:
        """Send ``sig`` to the terminal's foreground job (what a key like Ctrl-C reaches)."""
        if self._reaped or self._closed:
            return False
        try:
            pgrp = os.tcgetpgrp(self._fd)
        except OSError:
            pgrp = self.pid
        try:
            os.killpg(pgrp, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def has_exited(self) -> bool:
        """Whether the child has exited (it stays unreaped until :meth:`reap`)."""
        return self._reaped or self._exit_seen or self._exit.has_exited()

    async def wait_exited(self) -> None:
        """Wait until the child exits, without reaping it.

        Any number of tasks may wait at once (the session's main task, a stop, a kill after
        the grace): one of them watches the child's pidfd -- a file descriptor has one
        waiting reader at a time, a second one would raise :class:`anyio.BusyResourceError`
        -- and the others wait for the event it sets when it stops watching. If the watcher
        is cancelled, a remaining waiter takes the watch over.

        Raises :class:`anyio.ClosedResourceError` when :meth:`close` was called before the
        child exited, and in every wait in progress when it is called (where the exit is
        watched on a pidfd: Linux; where it is polled, those waits go on until the exit).
        """
        while not (self._exit_seen or self._reaped):
            if self._closed:
                if not self._exit.has_exited():
                    raise anyio.ClosedResourceError
                self._exit_seen = True
                return
            watch = self._watch
            if watch is not None:
                await watch.wait()
                continue
            watch = self._watch = anyio.Event()
            try:
                await self._exit.wait()
                self._exit_seen = True
            finally:
                self._watch = None
                watch.set()

    def reap(self) -> int:
        """Collect the exited child's status (call after :meth:`wait_exited`)."""
        if not self._reaped:
            self._popen.wait()
            self._reaped = True
        returncode = self._popen.returncode
        assert returncode is not None
        return returncode

    def close(self) -> None:
        """Close the master side (the terminal hangs up) and the pidfd (which ends every
        :meth:`wait_exited` in progress with :class:`anyio.ClosedResourceError`).
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        anyio.notify_closing(self._fd)
        os.close(self._fd)
        self._exit.close()
