"""A private Linux network namespace in which only loopback exists.

:meth:`NetNamespace.create` starts ``unshare --net`` holding a fresh namespace open (the holder
process exits by itself when its stdin closes, so a crashed test run leaves nothing behind),
then brings ``lo`` up inside it. Listening sockets for the fake API are created INSIDE the
namespace by a short-lived thread that joined it with ``setns(2)`` (network namespaces are
per-thread on Linux); a socket keeps its namespace, so it can then be served from any thread.
Real CLI processes are started through a wrapper script that ``exec``s
``nsenter --net=/proc/<pid>/ns/net -- <claude>``, so the CLI (same PID as the one we spawn)
sees only ``lo``: every non-loopback connect fails at once with ``ENETUNREACH``.

When namespaces are unavailable (not Linux, not privileged, tools missing) ``create`` returns an
object with ``isolated=False`` and a ``reason``, and everything falls back to the host's
loopback: the refusing proxy and ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` remain the guards.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from claudecode._log import get_logger

__all__ = ("NetNamespace",)

_log = get_logger(__name__)

T = TypeVar("T")

_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_IFREQ = "16sh22x"  # struct ifreq: name[16], short flags, padding to 40 bytes


def _bring_loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        current = fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, struct.pack(_IFREQ, b"lo", 0))
        flags = struct.unpack(_IFREQ, current)[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))


class NetNamespace:
    """A network namespace with only ``lo`` up, or the host network when ``isolated`` is false."""

    def __init__(
        self, holder: subprocess.Popen[bytes] | None, nsenter: str | None, reason: str = ""
    ) -> None:
        self._holder = holder
        self._nsenter = nsenter
        self.reason = reason
        """Why the namespace is not isolated ("" when it is)."""

    @property
    def isolated(self) -> bool:
        """Whether processes and sockets of this object live in a private namespace."""
        return self._holder is not None

    @property
    def path(self) -> str:
        """``/proc/<holder pid>/ns/net`` (only when isolated)."""
        if self._holder is None:
            raise RuntimeError(f"not isolated: {self.reason}")
        return f"/proc/{self._holder.pid}/ns/net"

    @classmethod
    def unavailable(cls, reason: str) -> NetNamespace:
        """A non-isolated stand-in; logs a warning with the reason."""
        _log.warning("no network namespace; real CLI tests run on the host network", reason=reason)
        return cls(None, None, reason)

    @classmethod
    def create(cls) -> NetNamespace:
        """Create and prepare a fresh namespace, or fall back to :meth:`unavailable`."""
        if not sys.platform.startswith("linux"):
            return cls.unavailable(f"network namespaces need Linux (this is {sys.platform})")
        unshare, nsenter = shutil.which("unshare"), shutil.which("nsenter")
        if unshare is None or nsenter is None:
            return cls.unavailable("unshare/nsenter (util-linux) not found")
        holder = subprocess.Popen(
            [unshare, "--net", "--", "/bin/sh", "-c", "echo ready; read _ignored"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert holder.stdout is not None
        assert holder.stderr is not None
        ready = holder.stdout.readline()
        if ready != b"ready\n":
            err = holder.stderr.read().decode(errors="replace").strip()
            cls._reap(holder)
            return cls.unavailable(f"unshare --net failed: {err or 'no output'}")
        holder.stdout.close()
        holder.stderr.close()
        ns = cls(holder, nsenter)
        try:
            ns.run_inside(_bring_loopback_up)
        except OSError as exc:
            ns.close()
            return cls.unavailable(f"cannot enter the namespace or bring lo up: {exc}")
        return ns

    @staticmethod
    def _reap(holder: subprocess.Popen[bytes]) -> None:
        for stream in (holder.stdin, holder.stdout, holder.stderr):
            if stream is not None:
                stream.close()
        try:
            holder.wait(timeout=5)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()

    def close(self) -> None:
        """Let the holder process exit; the namespace goes away with its last process."""
        if self._holder is not None:
            self._reap(self._holder)
            self._holder = None
            self.reason = "closed"

    def run_inside(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a new thread that joined the namespace (directly when not isolated)."""
        if self._holder is None:
            return fn()
        path = self.path
        result: list[T] = []
        error: list[BaseException] = []

        def target() -> None:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    if libc.setns(fd, _CLONE_NEWNET) != 0:
                        errno = ctypes.get_errno()
                        raise OSError(errno, f"setns({path}): {os.strerror(errno)}")
                finally:
                    os.close(fd)
                result.append(fn())
            except BaseException as exc:
                error.append(exc)

        thread = threading.Thread(target=target, name="netns-enter")
        thread.start()
        thread.join()
        if error:
            raise error[0]
        return result[0]

    def listen(self) -> socket.socket:
        """A TCP socket listening on an ephemeral port of 127.0.0.1 inside the namespace."""
        return self.run_inside(lambda: socket.create_server(("127.0.0.1", 0)))

    def command_prefix(self) -> list[str]:
        """Argv prefix that runs a command inside the namespace (``[]`` when not isolated)."""
        if self._nsenter is None or self._holder is None:
            return []
        return [self._nsenter, f"--net={self.path}", "--"]

    def wrap(self, executable: str | os.PathLike[str], directory: Path) -> Path:
        """Write an executable ``directory/claude`` that ``exec``s ``executable`` in the namespace.

        ``nsenter`` execs too, so the PID of the spawned wrapper is the PID of the real program.
        When not isolated, returns ``executable`` unchanged.
        """
        if not self.isolated:
            return Path(executable)
        directory.mkdir(parents=True, exist_ok=True)
        wrapper = directory / "claude"
        argv = " ".join(shlex.quote(a) for a in [*self.command_prefix(), os.fspath(executable)])
        wrapper.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
        wrapper.chmod(0o755)
        return wrapper
