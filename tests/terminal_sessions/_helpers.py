"""Helpers for terminal tests: waiting on screens (generous hang guards, never timings),
process inspection through /proc."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import anyio

from terminals import Agent, TerminalManager

#: Hang guard for anything a test waits for (the machine may be very busy).
TIMEOUT = float(os.environ.get("CLAUDECODE_BRIDGE_TEST_TIMEOUT", "60"))


async def wait_for_screen(
    terminals: TerminalManager,
    session_id: str,
    predicate: Callable[[str], bool],
    *,
    timeout: float = TIMEOUT,
) -> str:
    """Poll the session's rendered screen until ``predicate(text)`` holds; the text."""
    text = ""
    with anyio.move_on_after(timeout):
        while True:
            text = terminals.screen_text(session_id)
            if predicate(text):
                return text
            await anyio.sleep(0.05)
    raise AssertionError(f"screen of {session_id} never matched; it shows:\n{text}")


async def wait_for_text(
    terminals: TerminalManager, session_id: str, needle: str, *, timeout: float = TIMEOUT
) -> str:
    """Poll until ``needle`` is on the session's screen."""
    return await wait_for_screen(terminals, session_id, lambda t: needle in t, timeout=timeout)


async def wait_until(predicate: Callable[[], bool], *, what: str, timeout: float = TIMEOUT) -> None:
    """Poll ``predicate`` until it holds."""
    with anyio.move_on_after(timeout):
        while not predicate():  # noqa: ASYNC110 (polls /proc and snapshots)
            await anyio.sleep(0.05)
        return
    raise AssertionError(f"timed out waiting for {what}")


async def wait_for_prompt(terminals: TerminalManager, session_id: str) -> str:
    """Poll until the shell shows a prompt (``$`` or ``#`` ends the last line)."""
    return await wait_for_screen(terminals, session_id, lambda t: t.rstrip().endswith(("$", "#")))


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


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` exists at all (a zombie counts: it was not reaped)."""
    return Path(f"/proc/{pid}").exists()


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` according to /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def open_fds() -> set[str]:
    """This process's open file descriptors as ``fd -> target`` strings."""
    result = set()
    for entry in Path("/proc/self/fd").iterdir():
        try:
            result.add(f"{entry.name}->{os.readlink(entry)}")
        except OSError:
            continue
    return result
