"""Shell terminal sessions end to end: a real bash on a real pty, read back from the screen."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from adapter.terminals import (
    AGENTS,
    AgentUnavailableError,
    InvalidTerminalSizeError,
    TerminalClosedError,
    TerminalExistsError,
    TerminalManager,
    TerminalStartError,
    TerminalStatus,
    TooManyTerminalsError,
    UnknownAgentError,
    UnknownTerminalError,
    as_session_info,
)
from benchmarks import procfs
from tests.support.terminals import wait_for_prompt, wait_for_text
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

from ._helpers import open_fds, python_agent, shell_env, wait_for_foreground_job

pytestmark = [pytest.mark.anyio, pytest.mark.pty]


async def test_echo_is_read_back_from_the_screen(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        info = await terminals.start("t1", "shell", cwd=str(tmp_path))
        assert "shell" == info.agent and info.active and info.pid > 0
        assert (80, 24) == (info.cols, info.rows)
        await wait_for_prompt(terminals, "t1")
        # The typed line holds `hel""lo-$((6*7))`, only the output holds `hello-42`.
        await terminals.send_input("t1", 'echo hel""lo-$((6*7))\r')
        await wait_for_text(terminals, "t1", "hello-42")
        await terminals.send_input("t1", b'echo "$TERM $FORCE_COLOR $COLORTERM"\r')
        await wait_for_text(terminals, "t1", "xterm-256color 1 truecolor")
        await terminals.send_input("t1", "pwd\r")
        await wait_for_text(terminals, "t1", str(tmp_path))


async def test_resize_reaches_the_program_and_the_screen(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        await terminals.start("t1", "shell", cwd=str(tmp_path), cols=100, rows=30)
        await wait_for_prompt(terminals, "t1")
        await terminals.send_input("t1", 'echo "cols=$(tput cols) lines=$(tput lines)"\r')
        await wait_for_text(terminals, "t1", "cols=100 lines=30")
        assert await terminals.resize("t1", 123, 40)
        info = terminals.get("t1")
        assert (123, 40) == (info.cols, info.rows)
        assert 40 == len(terminals.screen_lines("t1"))
        assert 123 == len(terminals.screen_lines("t1")[0])
        await terminals.send_input("t1", 'echo "cols=$(tput cols) lines=$(tput lines)"\r')
        await wait_for_text(terminals, "t1", "cols=123 lines=40")
        with pytest.raises(InvalidTerminalSizeError):
            await terminals.resize("t1", 0, 10)


async def test_ctrl_c_interrupts_the_foreground_job(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        info = await terminals.start("t1", "shell", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "t1")
        await terminals.send_input("t1", "sleep 1000\r")
        # Not just a child of the shell: until sleep is the foreground job, Ctrl-C misses it.
        sleeper = await wait_for_foreground_job(info.pid, "sleep")
        await terminals.send_input("t1", b"\x03")
        await eventually(lambda: not procfs.exists(sleeper), what="sleep to be interrupted")
        await terminals.send_input("t1", 'echo "status=$?"\r')
        await wait_for_text(terminals, "t1", "status=130")
        assert terminals.get("t1").active


async def test_exit_status_is_reported(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        info = await terminals.start("t1", "shell", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "t1")
        async with terminals.attach("t1") as viewer:
            await terminals.send_input("t1", "exit 7\r")
            items = []
            with anyio.fail_after(HANG_GUARD):
                async for batch in viewer:
                    items.extend(batch)
        final = terminals.get("t1")
        assert not final.active
        assert (7, None, "exited") == (final.exit_code, final.exit_signal, final.exit_reason)
        assert "closed" == final.state
        exit_event = items[-1]
        assert {"code": 7, "signal": None, "reason": "exited"}.items() <= {
            "code": exit_event.code,  # type: ignore[union-attr]
            "signal": exit_event.signal,  # type: ignore[union-attr]
            "reason": exit_event.reason,  # type: ignore[union-attr]
        }.items()
        assert TerminalStatus(state="closed") in items
        assert not procfs.exists(info.pid)
        with pytest.raises(TerminalClosedError):
            await terminals.send_input("t1", "echo too late\r")
        assert not await terminals.resize("t1", 100, 30)  # logged, not raised


async def test_stop_signals_the_group_and_reaps(tmp_path: Path) -> None:
    sleeper = python_agent("sleeper", "import time; print('ready', flush=True); time.sleep(1000)")
    agents = {**AGENTS, "sleeper": sleeper}
    async with TerminalManager(env=shell_env(tmp_path), agents=agents) as terminals:
        info = await terminals.start("py", "sleeper", cwd=str(tmp_path))
        await wait_for_text(terminals, "py", "ready")
        final = await terminals.stop("py")
        assert (None, signal.SIGTERM, "SIGTERM", "stopped") == (
            final.exit_code,
            final.exit_signal,
            final.exit_signal_name,
            final.exit_reason,
        )
        assert not procfs.exists(info.pid)
        # A shell ignores SIGTERM; it is stopped with SIGHUP, as closing a terminal does,
        # and the job it runs goes with its process group.
        sh = await terminals.start("sh", "shell", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "sh")
        await terminals.send_input("sh", "sleep 1000\r")
        job = await wait_for_foreground_job(sh.pid, "sleep")
        final = await terminals.stop("sh")
        assert "SIGHUP" == final.exit_signal_name and "stopped" == final.exit_reason
        assert not procfs.exists(sh.pid)
        await eventually(lambda: not procfs.exists(job), what="the shell's job to end")
        # Stopping an ended session just reports it.
        assert final == await terminals.stop("sh")


def _pids_running(argv: list[bytes]) -> list[int]:
    return [pid for pid in procfs.pids() if procfs.cmdline(pid) == argv]


async def test_stop_ends_processes_that_detached_from_the_terminal(tmp_path: Path) -> None:
    """A daemon the program started in a session of its own (as Codex does) goes too."""
    argv = [b"sleep", b"4243.5"]
    async with TerminalManager(env=shell_env(tmp_path), agents=AGENTS) as terminals:
        sh = await terminals.start("sh", "shell", cwd=str(tmp_path))
        await wait_for_prompt(terminals, "sh")
        await terminals.send_input("sh", "setsid sleep 4243.5 < /dev/null > /dev/null 2>&1 &\r")
        await eventually(lambda: bool(_pids_running(argv)), what="the daemon to start")
        (daemon,) = _pids_running(argv)
        assert daemon not in procfs.children(sh.pid) or os.getsid(daemon) != os.getsid(sh.pid)
        await terminals.stop("sh")
        await eventually(lambda: not procfs.exists(daemon), what="the detached daemon to end")


async def test_a_program_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    stubborn = python_agent(
        "stubborn",
        "import signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        "print('ignoring', flush=True)\n"
        "time.sleep(1000)\n",
    )
    async with TerminalManager(
        env=shell_env(tmp_path), agents={"stubborn": stubborn}, stop_grace=0.5
    ) as terminals:
        info = await terminals.start("s", "stubborn", cwd=str(tmp_path))
        await wait_for_text(terminals, "s", "ignoring")
        final = await terminals.stop("s")
        assert ("SIGKILL", "stopped") == (final.exit_signal_name, final.exit_reason)
        assert not procfs.exists(info.pid)


async def test_the_watchdog_stops_a_silent_program(tmp_path: Path) -> None:
    silent = python_agent("silent", "import time; time.sleep(1000)")
    async with TerminalManager(
        env=shell_env(tmp_path), agents={"silent": silent}, spawn_timeout=0.5
    ) as terminals:
        info = await terminals.start("s", "silent", cwd=str(tmp_path))
        with anyio.fail_after(HANG_GUARD):
            final = await terminals.wait("s")
        assert ("watchdog", "SIGTERM") == (final.exit_reason, final.exit_signal_name)
        assert not procfs.exists(info.pid)


async def test_errors_are_typed(tmp_path: Path) -> None:
    missing = python_agent("missing", "")
    missing = type(missing)(
        name="missing", command="no-such-agent-cli", install_hint="npm install -g no-such-agent"
    )
    agents = {**AGENTS, "missing": missing}
    async with TerminalManager(env=shell_env(tmp_path), agents=agents, max_sessions=2) as terminals:
        await terminals.start("t1", "shell", cwd=str(tmp_path))
        with pytest.raises(TerminalExistsError):
            await terminals.start("t1", "shell", cwd=str(tmp_path))
        with pytest.raises(UnknownTerminalError):
            await terminals.send_input("nope", "x")
        with pytest.raises(UnknownTerminalError):
            terminals.get("nope")
        with pytest.raises(UnknownAgentError):
            await terminals.start("t2", "vim")
        with pytest.raises(AgentUnavailableError, match="npm install -g no-such-agent"):
            await terminals.start("t2", "missing")
        assert not terminals.available("missing")
        status = {s.name: s for s in terminals.agents()}["missing"]
        assert (False, None, "npm install -g no-such-agent") == (
            status.available,
            status.path,
            status.install_hint,
        )
        with pytest.raises(InvalidTerminalSizeError):
            await terminals.start("t2", "shell", cols=0)
        with pytest.raises(TerminalStartError, match="not a directory"):
            await terminals.start("t2", "shell", cwd=str(tmp_path / "absent"))
        await terminals.start("t2", "shell", cwd=str(tmp_path))
        with pytest.raises(TooManyTerminalsError):
            await terminals.start("t3", "shell", cwd=str(tmp_path))
        # An ended session's id can be used again.
        await terminals.stop("t2")
        await terminals.start("t2", "shell", cwd=str(tmp_path))
        assert terminals.get("t2").active


async def test_many_sessions_and_nothing_leaks(tmp_path: Path) -> None:
    fds_before = open_fds()
    count = 12
    pids: list[int] = []
    jobs: list[int] = []
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        for i in range(count):
            pids.append((await terminals.start(f"t{i}", "shell", cwd=str(tmp_path))).pid)
        for i in range(count):
            await wait_for_prompt(terminals, f"t{i}")
            await terminals.send_input(f"t{i}", f"echo marker-$(({i}*1000+7))\r")
        for i in range(count):
            await wait_for_text(terminals, f"t{i}", f"marker-{i * 1000 + 7}")
        # Half of them leave a job running in the foreground when the manager closes.
        for i in range(0, count, 2):
            await terminals.send_input(f"t{i}", "sleep 1000\r")
        for i in range(0, count, 2):
            jobs.append(await wait_for_foreground_job(pids[i], "sleep"))
        assert count == len([s for s in terminals.list() if s.active])
    # Leaving the block stopped every session and reaped every child.
    assert [] == [pid for pid in pids if procfs.exists(pid)]
    await eventually(lambda: not any(procfs.exists(p) for p in jobs), what="jobs to end")
    assert fds_before == open_fds()


async def test_screen_state_follows_activity(tmp_path: Path) -> None:
    async with TerminalManager(env=shell_env(tmp_path)) as terminals:
        await terminals.start("t1", "shell", cwd=str(tmp_path))
        await eventually(lambda: terminals.get("t1").state == "idle", what="idle")
        await terminals.send_input("t1", "while true; do echo tick; sleep 0.1; done\r")
        await eventually(lambda: terminals.get("t1").state == "busy", what="busy")
        await terminals.send_input("t1", b"\x03")
        await eventually(lambda: terminals.get("t1").state == "idle", what="idle again")


async def test_last_activity_follows_output_input_and_the_end(tmp_path: Path) -> None:
    """Output and typed input move ``last_activity``; the session lists show it."""
    quiet = python_agent(
        "quiet",  # reads what is typed and prints nothing back (raw mode: no echo)
        "import os, tty\ntty.setraw(0)\nos.write(1, b'ready')\nwhile os.read(0, 1): pass\n",
    )
    async with TerminalManager(env=shell_env(tmp_path), agents={"quiet": quiet}) as terminals:
        started = await terminals.start("q", "quiet", cwd=str(tmp_path))
        await wait_for_text(terminals, "q", "ready")
        after_output = terminals.get("q").last_activity
        assert after_output > started.created_at
        await terminals.send_input("q", "typed")
        after_input = terminals.get("q").last_activity
        assert after_input > after_output
        assert "ready" == terminals.screen_text("q").strip()  # the input printed nothing
        [listed] = terminals.list()
        assert after_input == listed.last_activity == as_session_info(listed).last_activity
        final = await terminals.stop("q")
        assert final.last_activity > after_input
        assert final.last_activity == as_session_info(final).last_activity


async def test_overwriting_half_a_wide_character_keeps_the_session(tmp_path: Path) -> None:
    """A program that writes over the left half of a wide character (CJK, emoji) leaves the
    right half behind; reading that screen used to raise in the screen task and take the
    manager's task group, and every session in it, down."""
    wide = python_agent(
        "wide",
        "import sys, time\n"
        "sys.stdout.write('\\u4e2d\\u6587X\\x1b[H000\\r\\n')\n"
        "print('after', flush=True)\n"
        "time.sleep(1000)\n",
    )
    async with TerminalManager(env=shell_env(tmp_path), agents={"wide": wide}) as terminals:
        await terminals.start("w", "wide", cwd=str(tmp_path))
        await wait_for_text(terminals, "w", "after")
        await eventually(lambda: terminals.get("w").state == "idle", what="the screen task")
        assert "000 X" == terminals.screen_lines("w")[0].rstrip()
        assert terminals.get("w").active
