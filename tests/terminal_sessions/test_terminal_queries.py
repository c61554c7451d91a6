"""A program that asks the terminal where its cursor is (as Codex does at start) and waits.

With no viewer attached the server answers from its screen model; with a viewer attached the
viewer's terminal answers and the server stays silent (one answer, never two).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter.terminals import Agent, TerminalManager
from tests.support.terminals import wait_for_text

from ._helpers import python_agent, read_until, shell_env

pytestmark = [pytest.mark.anyio, pytest.mark.pty]


def _asker(*, wait_for_go: bool) -> Agent:
    """Moves its cursor to row 5, column 10, asks for the position (DSR) and waits for the
    answer; prints it, then prints whatever else it was sent before a ``q``."""
    go = "while os.read(0, 1) != b'g':\n    pass\n" if wait_for_go else ""
    return python_agent(
        "asker",
        "import os, time, tty\n"
        "tty.setraw(0)\n"  # no echo, no line buffering: the answer comes back as sent
        "os.write(1, b'ready\\r\\n')\n"
        f"{go}"
        "os.write(1, b'\\x1b[5;10H\\x1b[6n')\n"
        "reply = b''\n"
        "while not reply.endswith(b'R'):\n"
        "    reply += os.read(0, 1)\n"
        "os.write(1, b'\\r\\nreply=' + reply[1:] + b'\\r\\n')\n"
        "extra = b''\n"
        "while not extra.endswith(b'q'):\n"
        "    extra += os.read(0, 1)\n"
        "os.write(1, b'extra=' + repr(extra[:-1]).encode() + b'\\r\\n')\n"
        "time.sleep(1000)\n",
    )


async def test_without_a_viewer_the_server_answers_the_cursor_position(tmp_path: Path) -> None:
    agents = {"asker": _asker(wait_for_go=False)}
    async with TerminalManager(env=shell_env(tmp_path), agents=agents) as terminals:
        await terminals.start("a", "asker", cwd=str(tmp_path))
        await wait_for_text(terminals, "a", "reply=[5;10R")
        await terminals.send_input("a", "q")
        await wait_for_text(terminals, "a", "extra=b''")


async def test_with_a_viewer_attached_the_viewer_answers(tmp_path: Path) -> None:
    agents = {"asker": _asker(wait_for_go=True)}
    async with TerminalManager(env=shell_env(tmp_path), agents=agents) as terminals:
        await terminals.start("a", "asker", cwd=str(tmp_path))
        async with terminals.attach("a") as viewer:
            await wait_for_text(terminals, "a", "ready")
            await terminals.send_input("a", "g")
            await read_until(viewer, b"\x1b[6n")
            # Have the screen parse the question while the viewer is there (a wrong answer
            # from the server would be queued now, ahead of the viewer's).
            terminals.screen_text("a")
            await terminals.send_input("a", b"\x1b[7;3R")  # what the viewer's terminal says
            await wait_for_text(terminals, "a", "reply=[7;3R")
            await terminals.send_input("a", "q")
            await wait_for_text(terminals, "a", "extra=b''")
