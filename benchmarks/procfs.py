"""Processes as Linux ``/proc`` shows them: one reading of ``/proc/PID/stat`` for the
benchmarks (CPU time of children, emitters) and the tests (children left behind, zombies,
process groups).

It lives here rather than under ``tests/`` because the benchmarks need it and must not import
the tests; the tests already import ``benchmarks``. Every function takes the ``/proc`` to read
(``proc=``) so that its own tests can give it a made-up one.

A process that ends while it is being read is simply not there: nothing here raises for a
pid that is gone, except :func:`cpu_times` (asked about one process, "gone" is an answer the
caller must see).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = (
    "PROC",
    "ProcStat",
    "children",
    "cmdline",
    "cpu_seconds",
    "cpu_times",
    "descendants",
    "environ",
    "exists",
    "group_members",
    "pids",
    "processes",
    "read_stat",
    "running",
)

#: The real ``/proc``.
PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class ProcStat:
    """The fields of ``/proc/PID/stat`` the benchmarks and tests use."""

    pid: int
    #: The command name (``comm``: at most 15 bytes; may hold spaces and parentheses).
    command: str
    #: One letter: ``R`` running, ``S`` sleeping, ``Z`` zombie, ``X`` dead, ...
    state: str
    ppid: int
    #: The process group.
    pgrp: int
    session: int
    #: The foreground process group of the process's terminal (-1 without one).
    tpgid: int
    #: CPU time in clock ticks (``SC_CLK_TCK``), in user and in kernel mode.
    utime: int
    stime: int

    @property
    def zombie(self) -> bool:
        """Ended and not reaped yet (or being torn down): it runs no code any more."""
        return self.state in ("Z", "X")


def read_stat(pid: int, *, proc: Path = PROC) -> ProcStat | None:
    """``/proc/PID/stat`` of ``pid``; None once (or if) it is gone."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    return _parse(pid, text)


def _parse(pid: int, text: str) -> ProcStat | None:
    # The command name may contain spaces and parentheses: the fields start after the last ')'.
    close = text.rfind(")")
    fields = text[close + 2 :].split()
    try:
        return ProcStat(
            pid=pid,
            command=text[text.find("(") + 1 : close],
            state=fields[0],
            ppid=int(fields[1]),
            pgrp=int(fields[2]),
            session=int(fields[3]),
            tpgid=int(fields[5]),
            utime=int(fields[11]),
            stime=int(fields[12]),
        )
    except (IndexError, ValueError):
        return None


def pids(*, proc: Path = PROC) -> list[int]:
    """Every pid ``/proc`` lists now (empty without a ``/proc``)."""
    try:
        names = os.listdir(proc)
    except OSError:
        return []
    return [int(name) for name in names if name.isdigit()]


def processes(*, proc: Path = PROC) -> Iterator[ProcStat]:
    """The stat of every process (the ones that end meanwhile are skipped)."""
    for pid in pids(proc=proc):
        stat = read_stat(pid, proc=proc)
        if stat is not None:
            yield stat


def children(parents: int | Iterable[int], *, proc: Path = PROC) -> list[int]:
    """The processes whose parent is ``parents`` (a pid or several), zombies included."""
    wanted = {parents} if isinstance(parents, int) else set(parents)
    return [stat.pid for stat in processes(proc=proc) if stat.ppid in wanted]


def descendants(pid: int, *, proc: Path = PROC) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), zombies included; from one
    reading of ``/proc``."""
    by_parent: dict[int, list[int]] = {}
    for stat in processes(proc=proc):
        by_parent.setdefault(stat.ppid, []).append(stat.pid)
    found: list[int] = []
    frontier = [pid]
    while frontier:
        below = by_parent.get(frontier.pop(), [])
        found.extend(below)
        frontier.extend(below)
    return found


def group_members(pgid: int, *, proc: Path = PROC) -> list[int]:
    """The running processes (not zombies) of process group ``pgid``."""
    return [s.pid for s in processes(proc=proc) if s.pgrp == pgid and not s.zombie]


def exists(pid: int, *, proc: Path = PROC) -> bool:
    """Whether ``pid`` exists at all (a zombie counts: nobody has reaped it)."""
    return (proc / str(pid)).exists()


def running(pid: int, *, proc: Path = PROC) -> bool:
    """Whether ``pid`` exists and is not a zombie (a zombie waiting for a reaper that may never
    come holds no port, no file and no CPU)."""
    stat = read_stat(pid, proc=proc)
    return stat is not None and not stat.zombie


def cmdline(pid: int, *, proc: Path = PROC) -> list[bytes] | None:
    """The argv of ``pid`` (empty for a kernel thread or a zombie); None once it is gone."""
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return raw.split(b"\0")[:-1] if raw else []


def environ(pid: int, *, proc: Path = PROC) -> dict[bytes, bytes] | None:
    """The environment ``pid`` started with; None once it is gone or not ours to read."""
    try:
        raw = (proc / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    pairs = (entry.partition(b"=") for entry in raw.split(b"\0") if entry)
    return {name: value for name, _, value in pairs}


def cpu_times(pid: int, *, proc: Path = PROC) -> tuple[float, float]:
    """(user, system) CPU seconds of ``pid`` so far; :class:`ProcessLookupError` once it is
    gone."""
    stat = read_stat(pid, proc=proc)
    if stat is None:
        raise ProcessLookupError(pid)
    tick = os.sysconf("SC_CLK_TCK")
    return stat.utime / tick, stat.stime / tick


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system, every thread, those that ended included) of ``pid`` so
    far, to the nanosecond: the kernel's CPU clock of the process, where
    :func:`cpu_times` counts clock ticks (10 ms: a tenth of a front end's turn of 40,000
    lines); :class:`ProcessLookupError` once it is gone.

    Linux names the clock of another process ``(~pid << 3) | 2`` (``clock_getcpuclockid``,
    which Python does not expose): its CPU clock with the scheduler's accounting."""
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except OSError as exc:  # EINVAL: no such process
        if read_stat(pid) is None:
            raise ProcessLookupError(pid) from exc
        return sum(cpu_times(pid))  # a kernel without per-process clocks: ticks
