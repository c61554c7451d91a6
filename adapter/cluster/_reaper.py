"""A killed worker's CLIs go too.

Each CLI a worker starts leads a process group of its own (so that closing a session also
stops the shells and tools the CLI started), which means nothing takes the CLIs down when
the worker is killed outright (SIGKILL, the OOM killer): they would keep running, and
spending, for sessions that another worker resumes meanwhile.

So a worker started with ``reap_orphans`` starts this small watchdog first, as a process of
its own, with the read end of a pipe whose write end only the worker holds, and puts
``CLAUDECODE_BRIDGE_WORKER=<token>`` into the environment of every CLI it starts (their
children inherit it). The watchdog reads until the pipe ends — the worker exited, however
it exited — then finds the processes that carry the token (Linux ``/proc/<pid>/environ``)
and stops their process groups: SIGTERM, and SIGKILL for what is left after a grace
period. After a clean shutdown it finds none.

Run as a file with the standard library only (``python -I -S _reaper.py TOKEN``), so it
starts fast and small and imports nothing of the bridge but the scan of ``/proc``
(:mod:`claudecode._proc_environ`, itself standard library only), loaded by its path.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid

if __name__ != "__main__":
    from claudecode.internal import pids_with_env
else:
    # Run as a file by the watchdog (``python -I -S``: no site-packages, so no claudecode
    # package to import): load the one standard-library module it needs by its path.
    import importlib.util

    _scan_path = os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        "claudecode",
        "_proc_environ.py",
    )
    _scan_spec = importlib.util.spec_from_file_location("_proc_environ", _scan_path)
    assert _scan_spec is not None and _scan_spec.loader is not None
    _scan = importlib.util.module_from_spec(_scan_spec)
    _scan_spec.loader.exec_module(_scan)
    pids_with_env = _scan.pids_with_env

__all__ = ("MARK", "OrphanReaper", "marked", "reap")

#: The environment variable that marks a worker's CLIs (and their children).
MARK = "CLAUDECODE_BRIDGE_WORKER"
#: Seconds between SIGTERM and SIGKILL.
GRACE = 5.0


def marked(token: str) -> list[int]:
    """The running processes whose environment carries ``MARK=token`` (never this one)."""
    return pids_with_env(MARK, token)


def _signal_all(pids: list[int], sig: int) -> None:
    own_group = os.getpgrp()
    groups = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            groups.add(os.getpgid(pid))
    for group in groups - {own_group, 0, 1}:
        with contextlib.suppress(OSError):
            os.killpg(group, sig)
    for pid in pids:  # any that left its group
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def reap(token: str, grace: float = GRACE) -> list[int]:
    """Stop every process marked with ``token``; the pids that were found."""
    pids = marked(token)
    if not pids:
        return []
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        left = marked(token)
        if not left:
            return pids
        time.sleep(0.1)
    _signal_all(marked(token), signal.SIGKILL)
    return pids


class OrphanReaper:
    """The worker's side: :meth:`start` the watchdog, mark each CLI's environment with
    :attr:`env`, :meth:`stop` after the sessions closed (Linux only: elsewhere it does
    nothing)."""

    def __init__(self) -> None:
        self.token = uuid.uuid4().hex
        self._write: int | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """What to add to a CLI's environment (nothing when not started)."""
        return {MARK: self.token} if self._process is not None else {}

    def start(self) -> None:
        if not sys.platform.startswith("linux") or self._process is not None:
            return
        read, write = os.pipe()  # neither end is inherited by the CLIs (non-inheritable)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__), self.token],
                stdin=read,
                stdout=subprocess.DEVNULL,
                start_new_session=True,  # not in the worker's group: it must outlive it
            )
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        self._write = write

    def stop(self, timeout: float = 2 * GRACE + 5) -> None:
        """End the pipe (the watchdog reaps what is left, normally nothing) and wait for it."""
        write, self._write = self._write, None
        if write is not None:
            os.close(write)
        process, self._process = self._process, None
        if process is not None:
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main(argv: list[str]) -> int:
    """``_reaper.py TOKEN``: wait for the end of standard input, then :func:`reap`."""
    if len(argv) != 2 or not argv[1]:
        print("usage: _reaper.py TOKEN", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is for the worker
    stdin = sys.stdin.buffer
    while stdin.read(4096):
        pass
    reap(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
