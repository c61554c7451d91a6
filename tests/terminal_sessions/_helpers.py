"""Helpers for the terminal tests: shells and agents to run, the foreground job, and
process inspection through /proc (waits on screens: tests.support.terminals)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

from adapter.terminals import Agent, TerminalViewer, ViewerItem
from benchmarks import procfs
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually


async def read_until(viewer: TerminalViewer, needle: bytes) -> list[ViewerItem]:
    """Receive from ``viewer`` until its output holds ``needle``; every item received."""
    items: list[ViewerItem] = []
    seen = b""
    with anyio.fail_after(HANG_GUARD):
        while needle not in seen:
            batch = await viewer.receive()
            items.extend(batch)
            seen += b"".join(i for i in batch if isinstance(i, bytes))
    return items


def shell_env(home: Path) -> dict[str, str]:
    """A predictable interactive bash: no user rc files, a plain prompt."""
    return {
        "SHELL": "/bin/bash",
        "HOME": str(home),
        "PS1": "$ ",
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
    }


def python_agent(name: str, code: str, **kwargs: object) -> Agent:
    """An agent that runs ``python -c code`` (for lifecycle tests)."""
    return Agent(
        name=name,
        command=sys.executable,
        args=("-u", "-c", code),
        install_hint="python",
        **kwargs,  # type: ignore[arg-type]
    )


#: Prints "ready", then every line typed into it in capitals, until stopped.
SHOUTER = (
    "import sys\n"
    "print('ready', flush=True)\n"
    "for line in sys.stdin:\n"
    "    print(line.strip().upper(), flush=True)\n"
)


def hook_that_breaks_on_boom(lines: list[str]) -> bytes | None:
    """A screen hook with a bug: it raises once the program prints BOOM."""
    if any("BOOM" in line for line in lines):
        raise ValueError("this hook cannot parse BOOM")
    return None


def fragile_agent() -> Agent:
    """A real program whose session fails (through its screen hook) on demand."""
    return python_agent("fragile", SHOUTER, trust_hook=hook_that_breaks_on_boom)


def foreground_job(shell_pid: int, command: str) -> int | None:
    """The shell's child running ``command`` as the terminal's foreground job, if there is one.

    A child appears the moment the shell forks, before it has moved into its own process
    group, taken the terminal and exec'd the command; a signal from the terminal (Ctrl-C)
    in that window goes to the shell or to the forked shell still holding the shell's
    handlers, and the command then runs on untouched. Only once the child has exec'd
    ``command`` (its name in /proc) and its group is the terminal's foreground group
    (``pgrp == tpgid``) does Ctrl-C reach it.
    """
    for child in procfs.children(shell_pid):
        found = procfs.read_stat(child)
        if found is not None and found.command == command and found.pgrp == found.tpgid:
            return child
    return None


async def wait_for_foreground_job(shell_pid: int, command: str) -> int:
    """Poll until the shell runs ``command`` as the terminal's foreground job; its pid."""
    found: list[int] = []

    def running() -> bool:
        job = foreground_job(shell_pid, command)
        found[:] = [] if job is None else [job]
        return bool(found)

    await eventually(running, what=f"{command} to be the foreground job")
    return found[0]


def open_fds() -> set[str]:
    """This process's open file descriptors as ``fd -> target`` strings."""
    result = set()
    for entry in Path("/proc/self/fd").iterdir():
        try:
            result.add(f"{entry.name}->{os.readlink(entry)}")
        except OSError:
            continue
    return result
