"""A CLI that exits leaving a child of it behind: the session still ends, with the right
outcome, and no process of the CLI's group is left running.

The child (``sleep``) either keeps the CLI's stdout open -- without a watch on the CLI's own
exit the output would never end, and the session would hang -- or has its own stdout, so the
output ends but the child would outlive a transport that reaped the CLI without killing its
process group."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks import procfs
from claudecode import CLIExitedError
from claudecode.messages import AssistantMessage, ResultMessage
from claudecode.session import Session
from claudecode.transport import SubprocessTransport
from tests.claudecode._scripted_cli import result_line, scripted_options
from tests.support.timeouts import PROCESSES_GUARD

pytestmark = pytest.mark.anyio

_TEXT = {
    "type": "assistant",
    "message": {"role": "assistant", "content": [{"type": "text", "text": "partial"}]},
}


def _plan(tmp_path: Path, lines: list[Any], code: int, *, quiet: bool) -> dict[str, Any]:
    return {
        "user": [lines],
        "exit_after_user": 1,
        "exit_code": code,
        "spawn_before_exit": ["sleep", "600"],
        "spawn_quiet": quiet,
        "spawn_pid_file": str(tmp_path / "leftover.pid"),
    }


async def _assert_no_leftover(tmp_path: Path, cli_pid: int | None) -> None:
    assert cli_pid is not None
    leftover = int((tmp_path / "leftover.pid").read_text())
    # SIGKILL is delivered at once, but the kernel may take a moment to tear the process
    # down on a loaded machine: a hang guard, not a timing assertion.
    with anyio.fail_after(PROCESSES_GUARD):
        # Polled: a process that is not our child raises no event to wait for.
        while procfs.running(leftover) or procfs.group_members(cli_pid):  # noqa: ASYNC110
            await anyio.sleep(0.05)


@pytest.mark.parametrize("quiet", [False, True], ids=["holds-stdout", "own-stdout"])
async def test_a_crash_leaving_a_child_ends_with_the_crash_error(
    tmp_path: Path, quiet: bool
) -> None:
    options = scripted_options(tmp_path, _plan(tmp_path, [_TEXT], 3, quiet=quiet))
    got = []
    with anyio.fail_after(PROCESSES_GUARD):
        async with Session(options) as session:
            assert isinstance(session.transport, SubprocessTransport)
            pid = session.transport.pid
            await session.send("go")

            async def read_turn() -> None:
                async for message in session.receive_response():
                    got.append(message)

            with pytest.raises(CLIExitedError) as info:
                await read_turn()
    assert info.value.exit_code == 3
    assert [type(m) for m in got] == [AssistantMessage]  # what came before is delivered
    await _assert_no_leftover(tmp_path, pid)


@pytest.mark.parametrize("quiet", [False, True], ids=["holds-stdout", "own-stdout"])
async def test_an_exit_0_after_the_result_leaving_a_child_ends_quietly(
    tmp_path: Path, quiet: bool
) -> None:
    options = scripted_options(tmp_path, _plan(tmp_path, [_TEXT, result_line()], 0, quiet=quiet))
    with anyio.fail_after(PROCESSES_GUARD):
        async with Session(options) as session:
            assert isinstance(session.transport, SubprocessTransport)
            pid = session.transport.pid
            await session.send("go")
            turn = [m async for m in session.receive_response()]
            # The output ends although the child holds (or held) the CLI's stdout.
            assert [m async for m in session.messages()] == []
    assert [type(m) for m in turn] == [AssistantMessage, ResultMessage]
    assert session.exit_code == 0
    await _assert_no_leftover(tmp_path, pid)


async def test_aclose_after_the_exit_kills_what_the_cli_left(tmp_path: Path) -> None:
    # The transport alone: the CLI stand-in starts a child with its own stdout and exits;
    # its output ends, the transport sees the exit, and only then is it closed.
    pid_file = tmp_path / "leftover.pid"
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen(['sleep', '600'], stdout=subprocess.DEVNULL,\n"
        "                         stderr=subprocess.DEVNULL)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('bye', flush=True)\n"
    )
    transport = SubprocessTransport([sys.executable, "-c", code], close_grace=5, kill_after=5)
    async with anyio.create_task_group() as tg:
        await transport.start(tg)
        with anyio.fail_after(PROCESSES_GUARD):
            output = b""
            while chunk := await transport.receive():
                output += chunk
            await transport.aclose()
    assert output == b"bye\n"
    assert transport.returncode == 0
    await _assert_no_leftover(tmp_path, transport.pid)


async def test_a_child_outside_the_group_holding_stdout_does_not_hang_the_output(
    tmp_path: Path,
) -> None:
    # A child that left the CLI's process group (setsid) escapes the group kill; once the
    # pipe is drained the output ends anyway.
    pid_file = tmp_path / "leftover.pid"
    code = (
        "import subprocess\n"
        "child = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('bye', flush=True)\n"
        "raise SystemExit(5)\n"
    )
    transport = SubprocessTransport(
        [sys.executable, "-c", code], close_grace=5, kill_after=5, exit_grace=0.2
    )
    try:
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            with anyio.fail_after(PROCESSES_GUARD):
                output = b""
                while chunk := await transport.receive():
                    output += chunk
                assert await transport.wait() == 5
                await transport.aclose()
        assert output == b"bye\n"
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), 9)
