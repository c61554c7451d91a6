"""Viewers of a terminal session: the current screen first, live output, bounded buffers."""

from __future__ import annotations

from pathlib import Path

import anyio
import pyte
import pytest

from adapter.terminals import (
    TerminalExit,
    TerminalManager,
    TerminalResized,
    TerminalStatus,
    ViewerDroppedError,
    ViewerItem,
)
from tests.support.terminals import wait_for_prompt, wait_for_text
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

from ._helpers import read_until, shell_env

pytestmark = [pytest.mark.anyio, pytest.mark.pty]


def replay(data: bytes, cols: int, rows: int) -> pyte.Screen:
    """What a fresh terminal of ``cols`` x ``rows`` shows after ``data``."""
    screen = pyte.Screen(cols, rows)
    pyte.ByteStream(screen).feed(data)
    return screen


async def test_two_viewers_see_the_same_output_and_a_late_one_the_screen(
    tmp_path: Path,
) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        await terminals.start("t1", "shell", cwd=str(tmp_path), cols=90, rows=20)
        await wait_for_prompt(terminals, "t1")
        async with terminals.attach("t1") as first, terminals.attach("t1") as second:
            assert 2 == terminals.get("t1").viewers
            await terminals.send_input(
                "t1", "printf '\\033[1;31mred\\033[0m plain \\033[44mblue-bg\\033[0m\\n'\r"
            )
            for viewer in (first, second):
                items = await read_until(viewer, b"blue-bg")
                assert isinstance(items[0], bytes)  # the screen as it was on attach
                assert TerminalStatus in {type(i) for i in items}
            await wait_for_text(terminals, "t1", "red plain blue-bg")
            await terminals.send_input("t1", "for i in $(seq 1 40); do echo line-$i; done\r")
            await wait_for_text(terminals, "t1", "line-40")
        # A viewer who comes now gets the current screen exactly, colours included.
        async with terminals.attach("t1") as late:
            (snapshot, status) = (await late.receive())[:2]
            assert isinstance(snapshot, bytes) and isinstance(status, TerminalStatus)
            shown = replay(snapshot, 90, 20)
            assert terminals.screen_lines("t1") == shown.display
            # The screen's history reaches back beyond the visible rows.
            assert "line-1" in terminals.scrollback_lines("t1")
        assert 0 == terminals.get("t1").viewers


async def test_resize_and_exit_reach_viewers(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        await terminals.start("t1", "shell", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "t1")
        async with terminals.attach("t1") as viewer:
            await terminals.resize("t1", 70, 20)
            await terminals.send_input("t1", "exit 3\r")
            items: list[ViewerItem] = []
            with anyio.fail_after(HANG_GUARD):
                async for batch in viewer:
                    items.extend(batch)
        assert TerminalResized(cols=70, rows=20) in items
        assert TerminalExit(code=3, signal=None, signal_name=None, reason="exited") == items[-1]
        # An ended session still shows its last screen and how it ended.
        async with terminals.attach("t1") as after:
            batch = await after.receive()
            assert isinstance(batch[0], bytes) and batch[-1] == items[-1]
            with pytest.raises(anyio.EndOfStream):
                await after.receive()


async def test_a_slow_viewer_is_dropped_not_the_session(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        await terminals.start("t1", "shell", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "t1")
        slow_viewer = terminals.attach("t1", max_bytes=4096)
        async with slow_viewer as slow, terminals.attach("t1") as keen:
            await slow.receive()  # the screen; then it stops reading
            await keen.receive()
            await terminals.send_input("t1", "seq 1 3000; echo done-$((2*21))\r")
            await read_until(keen, b"done-42")
            assert slow.dropped
            with pytest.raises(ViewerDroppedError):
                await slow.receive()
            assert 1 == terminals.get("t1").viewers
        await wait_for_text(terminals, "t1", "done-42")
        assert terminals.get("t1").active


async def test_without_a_screen_model_viewers_get_the_raw_tail(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path), screen=False) as terminals:
        await terminals.start("t1", "shell", cwd=str(tmp_path))
        await terminals.send_input("t1", "echo raw-$((40+2))\r")

        async def raw_tail() -> bool:
            async with terminals.attach("t1") as viewer:
                snapshot = (await viewer.receive())[0]
            assert isinstance(snapshot, bytes)
            return b"raw-42" in snapshot

        await eventually(raw_tail, poll=0.05, what="raw-42 in the raw tail")
        assert "" == terminals.screen_text("t1")
