"""One terminal session's failure ends that session only: real programs on real ptys, a screen
hook that raises on what one program prints, and a shell next to it that keeps working."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
import structlog

from adapter.terminals import (
    AGENTS,
    TerminalExit,
    TerminalFailedError,
    TerminalManager,
    TerminalStatus,
    TerminalViewer,
    ViewerItem,
)
from benchmarks import procfs
from tests.support.terminals import wait_for_prompt, wait_for_text
from tests.support.timeouts import HANG_GUARD

from ._helpers import (
    SHOUTER,
    fragile_agent,
    hook_that_breaks_on_boom,
    python_agent,
    read_until,
    shell_env,
)

pytestmark = [pytest.mark.anyio, pytest.mark.pty]


async def _receive_to_the_end(viewer: TerminalViewer) -> tuple[list[ViewerItem], BaseException]:
    """Every item a viewer gets, and what its last ``receive`` raised."""
    items: list[ViewerItem] = []
    with anyio.fail_after(HANG_GUARD):
        while True:
            try:
                items.extend(await viewer.receive())
            except Exception as exc:
                return items, exc


async def test_a_failing_session_ends_alone_with_a_typed_error(tmp_path: Path) -> None:
    agents = {**AGENTS, "fragile": fragile_agent()}
    async with TerminalManager(env=shell_env(tmp_path), agents=agents) as terminals:
        await terminals.start("ok", "shell", cwd=str(tmp_path))
        info = await terminals.start("bad", "fragile", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "ok")
        await wait_for_text(terminals, "bad", "ready")
        async with terminals.attach("ok") as ok_viewer, terminals.attach("bad") as bad_viewer:
            with structlog.testing.capture_logs() as logs:
                await terminals.send_input("bad", "boom\r")
                items, raised = await _receive_to_the_end(bad_viewer)
            # The failed session's viewer: the output up to the failure, the end, the exit
            # (reason "failed"), then a typed error that names the cause, not its internals.
            assert b"BOOM" in b"".join(i for i in items if isinstance(i, bytes))
            exits = [i for i in items if isinstance(i, TerminalExit)]
            assert ["failed"] == [e.reason for e in exits]
            assert TerminalStatus(state="closed") in items
            assert isinstance(raised, TerminalFailedError)
            assert ("bad", "ValueError") == (raised.session_id, raised.cause)
            assert "cannot parse" not in str(raised)
            # Logged, with the exception.
            failed = [e for e in logs if e["event"] == "terminal.failed"]
            assert 1 == len(failed)
            assert ("bad", "ValueError") == (failed[0]["session_id"], failed[0]["error"])
            assert isinstance(failed[0]["exc_info"], BaseException)
            # The program was stopped and reaped: no zombie.
            ended = terminals.get("bad")
            assert (False, "failed", "closed") == (ended.active, ended.exit_reason, ended.state)
            assert not procfs.exists(info.pid)
            # The other session goes on: it takes input, shows output, its viewer follows.
            assert terminals.get("ok").active
            await terminals.send_input("ok", "echo still-$((40+2))\r")
            await wait_for_text(terminals, "ok", "still-42")
            await read_until(ok_viewer, b"still-42")
        # A viewer that attaches after the failure gets the last screen, the exit and the
        # same typed error.
        async with terminals.attach("bad") as late:
            items, raised = await _receive_to_the_end(late)
            assert ["failed"] == [i.reason for i in items if isinstance(i, TerminalExit)]
            assert isinstance(raised, TerminalFailedError)
        # The manager still starts sessions.
        await terminals.start("again", "shell", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "again")
        assert {"ok", "again"} == {t.id for t in terminals.list() if t.active}


async def test_a_session_that_fails_while_stopping_still_ends_and_is_reaped(
    tmp_path: Path,
) -> None:
    """The hook fails while the program ignores the stop signal: SIGKILL after the grace,
    and the session still ends as failed."""
    stubborn = python_agent(
        "stubborn",
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + SHOUTER,
        trust_hook=hook_that_breaks_on_boom,
    )
    agents = {"stubborn": stubborn}
    async with TerminalManager(env=shell_env(tmp_path), agents=agents, stop_grace=0.5) as terms:
        info = await terms.start("s", "stubborn", cwd=str(tmp_path))
        await wait_for_text(terms, "s", "ready")
        await terms.send_input("s", "boom\r")
        final = await terms.wait("s")
        assert ("failed", "SIGKILL") == (final.exit_reason, final.exit_signal_name)
        assert not procfs.exists(info.pid)
