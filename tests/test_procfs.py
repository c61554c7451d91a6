"""benchmarks.procfs: processes as /proc shows them, on real processes (a child, its
grandchild, a zombie, a process group) and on a made-up /proc for what real ones rarely show
(a command name with spaces and parentheses, a malformed stat, a process that vanished)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import procfs
from tests.support.waits import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")

#: Hang guard only (a busy machine may take long to start Python).

# A parent in a process group of its own that starts a grandchild, prints its pid, and waits
# for stdin to close. The grandchild sleeps with an argv and environment we can recognise.
PARENT = """
import os, subprocess, sys
child = subprocess.Popen(["sleep", "4242.25"], env={**os.environ, "PROCFS_MARK": "yes"})
print(child.pid, flush=True)
sys.stdin.read()
child.kill()
child.wait()
"""


def _stat_line(pid: int, command: str, state: str, ppid: int, pgrp: int) -> str:
    # pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    # utime stime ...
    return f"{pid} ({command}) {state} {ppid} {pgrp} {pgrp} 34816 {pgrp} 0 0 0 0 0 250 50 0 0\n"


@pytest.fixture
def fake_proc(tmp_path: Path) -> Path:
    """A /proc with a small tree: 1 -> 10 -> (11 zombie, 12 -> 13), 20 on its own; 14 has an
    unreadable stat; ``self`` and a file are not processes."""
    proc = tmp_path / "proc"
    rows = {
        1: ("init", "S", 0, 1),
        10: ("tricky) (name", "S", 1, 10),
        11: ("gone", "Z", 10, 10),
        12: ("sh", "R", 10, 10),
        13: ("sleep", "S", 12, 13),
        20: ("other", "S", 1, 20),
    }
    for pid, (command, state, ppid, pgrp) in rows.items():
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "stat").write_text(_stat_line(pid, command, state, ppid, pgrp))
    (proc / "14").mkdir()
    (proc / "14" / "stat").write_text("14 (broken) S\n")
    (proc / "self").mkdir()
    (proc / "uptime").write_text("1.0 1.0\n")
    (proc / "13" / "cmdline").write_bytes(b"sleep\x00100\x00")
    (proc / "13" / "environ").write_bytes(b"A=1\x00B=x=y\x00EMPTY=\x00")
    (proc / "11" / "cmdline").write_bytes(b"")
    return proc


def test_a_stat_is_read_after_the_last_parenthesis(fake_proc: Path) -> None:
    stat = procfs.read_stat(10, proc=fake_proc)
    assert stat == procfs.ProcStat(
        pid=10,
        command="tricky) (name",
        state="S",
        ppid=1,
        pgrp=10,
        session=10,
        tpgid=10,
        utime=250,
        stime=50,
    )
    assert not stat.zombie
    zombie = procfs.read_stat(11, proc=fake_proc)
    assert zombie is not None and zombie.zombie


def test_gone_and_malformed_processes_are_absent(fake_proc: Path) -> None:
    assert procfs.read_stat(99, proc=fake_proc) is None
    assert procfs.read_stat(14, proc=fake_proc) is None
    assert [1, 10, 11, 12, 13, 14, 20] == sorted(procfs.pids(proc=fake_proc))
    assert [1, 10, 11, 12, 13, 20] == sorted(s.pid for s in procfs.processes(proc=fake_proc))
    assert [] == procfs.pids(proc=fake_proc / "missing")
    assert procfs.cmdline(99, proc=fake_proc) is None
    assert procfs.environ(99, proc=fake_proc) is None
    with pytest.raises(ProcessLookupError):
        procfs.cpu_times(99, proc=fake_proc)


def test_the_tree_of_a_made_up_proc(fake_proc: Path) -> None:
    assert [11, 12] == sorted(procfs.children(10, proc=fake_proc))
    assert [11, 12, 13] == sorted(procfs.children({10, 12}, proc=fake_proc))
    assert [10, 11, 12, 13, 20] == sorted(procfs.descendants(1, proc=fake_proc))
    assert [11, 12, 13] == sorted(procfs.descendants(10, proc=fake_proc))
    assert [] == procfs.descendants(13, proc=fake_proc)
    # The zombie is in group 10 but runs nothing.
    assert [10, 12] == sorted(procfs.group_members(10, proc=fake_proc))
    assert procfs.exists(11, proc=fake_proc) and not procfs.running(11, proc=fake_proc)
    assert procfs.running(12, proc=fake_proc) and not procfs.exists(99, proc=fake_proc)


def test_argv_environment_and_cpu_of_a_made_up_proc(fake_proc: Path) -> None:
    assert [b"sleep", b"100"] == procfs.cmdline(13, proc=fake_proc)
    assert [] == procfs.cmdline(11, proc=fake_proc)
    assert {b"A": b"1", b"B": b"x=y", b"EMPTY": b""} == procfs.environ(13, proc=fake_proc)
    tick = os.sysconf("SC_CLK_TCK")
    assert (250 / tick, 50 / tick) == procfs.cpu_times(10, proc=fake_proc)


@pytest.fixture
def family() -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A real child (leader of its own process group) and the grandchild it started."""
    with subprocess.Popen(
        [sys.executable, "-c", PARENT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as parent:
        try:
            assert parent.stdout is not None
            grandchild = int(parent.stdout.readline())
            yield parent, grandchild
        finally:
            if parent.poll() is None:
                parent.kill()
            parent.wait()
            if procfs.running(grandchild):
                os.kill(grandchild, signal.SIGKILL)


def test_children_descendants_and_group_of_real_processes(
    family: tuple[subprocess.Popen[str], int],
) -> None:
    parent, grandchild = family
    assert parent.pid in procfs.children(os.getpid())
    assert [grandchild] == procfs.children(parent.pid)
    assert [grandchild] == procfs.descendants(parent.pid)
    assert {parent.pid, grandchild} <= set(procfs.descendants(os.getpid()))
    assert {parent.pid, grandchild} == set(procfs.group_members(parent.pid))
    assert [b"sleep", b"4242.25"] == procfs.cmdline(grandchild)
    mine = procfs.environ(os.getpid())
    assert mine is not None and b"PROCFS_MARK" not in mine
    theirs = procfs.environ(grandchild)
    assert theirs is not None and b"yes" == theirs[b"PROCFS_MARK"]
    stat = procfs.read_stat(grandchild)
    assert stat is not None and "sleep" == stat.command and parent.pid == stat.ppid
    user, system = procfs.cpu_times(os.getpid())
    assert user > 0 and system >= 0
    # The precise clock counts what the ticks count (the ticks round down, 10 ms each).
    tick = 1 / os.sysconf("SC_CLK_TCK")
    precise = procfs.cpu_seconds(os.getpid())
    after = sum(procfs.cpu_times(os.getpid()))
    assert user + system - 2 * tick <= precise <= after + 2 * tick
    assert 0 <= procfs.cpu_seconds(grandchild) < 1  # a sleep: next to no CPU


def test_a_killed_child_is_a_zombie_until_reaped(
    family: tuple[subprocess.Popen[str], int],
) -> None:
    parent, _ = family
    parent.send_signal(signal.SIGKILL)
    # Not reaped yet: it exists, but it is a zombie (the kernel may take a moment).
    wait_until(lambda: not procfs.running(parent.pid), what="SIGKILL ended the child")
    assert procfs.exists(parent.pid)
    assert parent.pid not in procfs.group_members(parent.pid)
    assert parent.pid in procfs.children(os.getpid())
    parent.wait()
    assert not procfs.exists(parent.pid) and procfs.read_stat(parent.pid) is None
    with pytest.raises(ProcessLookupError):
        procfs.cpu_times(parent.pid)
    with pytest.raises(ProcessLookupError):
        procfs.cpu_seconds(parent.pid)
