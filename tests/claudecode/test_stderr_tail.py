"""The stderr tail errors carry is complete: real child processes that write to stderr and
then go silent or die, with a last line left unfinished and a grandchild holding stderr open.

Before an error is made, what the stderr pipe still holds is read, and a line the CLI did not
finish counts: the drain task may not have reached the CLI's last words when the watchdog
fires, and a grandchild that keeps stderr open means the pipe never ends.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from claudecode import CLIExitedError, CLIStartError
from claudecode.options import ClaudeCodeOptions
from claudecode.session import Session
from claudecode.transport import SubprocessTransport
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.anyio

#: Hang guard only (a loaded machine may be slow); nothing here is timed.

#: 120 stderr lines in one write and the last words without a newline (more than the tail
#: keeps, in one pipe buffer), then the marker file that tells the test they are written.
_LAST_WORDS = (
    "import os, sys\n"
    "os.write(2, b''.join(b'line %d\\n' % i for i in range(120)) + b'fatal: gave up')\n"
    "open(sys.argv[1], 'w').close()\n"
)


def _cli(tmp_path: Path, body: str) -> Path:
    """An executable Python script standing in for the CLI; argv[1] is the marker file."""
    exe = tmp_path / "claude"
    marker = tmp_path / "written"
    exe.write_text(
        f"#!{sys.executable}\nimport sys\nsys.argv[1:1] = [{str(marker)!r}]\n{body}",
    )
    exe.chmod(0o755)
    return exe


async def _written(tmp_path: Path) -> None:
    with anyio.fail_after(HANG_GUARD):
        while not (tmp_path / "written").exists():  # noqa: ASYNC110 (a file, not a task)
            await anyio.sleep(0.02)


def _expected_tail(lines: int) -> str:
    return "\n".join([*(f"line {i}" for i in range(120 - lines + 1, 120)), "fatal: gave up"])


async def test_the_watchdog_error_carries_the_last_words_of_a_silent_cli(tmp_path: Path) -> None:
    # Silent after its stderr: nothing on stdout, stdin never read.
    exe = _cli(tmp_path, _LAST_WORDS + "import time\ntime.sleep(600)\n")
    opts = ClaudeCodeOptions(cli_path=exe, cwd=tmp_path, spawn_timeout=0.2, initialize=False)
    session = Session(opts)
    with anyio.fail_after(HANG_GUARD):
        async with session:
            # The watchdog's clock starts at the first write: make it once all is written.
            await _written(tmp_path)
            with pytest.raises(CLIStartError) as info:
                await session.initialize()
    assert _expected_tail(50) == info.value.stderr_tail


async def test_the_exit_error_carries_the_last_words_of_a_crashed_cli(tmp_path: Path) -> None:
    # Dies with code 3, leaving a grandchild that holds its stderr (only) open: the pipe does
    # not end while the grandchild lives (until the test removes its file).
    keep = tmp_path / "keep"
    keep.touch()
    grandchild = f"import os, time\nwhile os.path.exists({str(keep)!r}): time.sleep(0.05)\n"
    exe = _cli(
        tmp_path,
        _LAST_WORDS
        + "import subprocess\n"
        + f"subprocess.Popen([sys.executable, '-c', {grandchild!r}],"
        + " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)\n"
        + "sys.exit(3)\n",
    )
    opts = ClaudeCodeOptions(cli_path=exe, cwd=tmp_path, stderr_tail_lines=5)
    try:
        with anyio.fail_after(HANG_GUARD), pytest.raises(CLIExitedError) as info:
            async with Session(opts):
                pass
    finally:
        keep.unlink()
    assert 3 == info.value.exit_code
    assert _expected_tail(5) == info.value.stderr_tail
    assert str(info.value).endswith("stderr tail:\n" + _expected_tail(5))


async def test_the_tail_is_read_when_asked_and_callbacks_get_complete_lines(
    tmp_path: Path,
) -> None:
    lines: list[str] = []
    exe = _cli(tmp_path, _LAST_WORDS + "sys.stdin.readline()\nos.write(2, b' for good\\n')\n")
    transport = SubprocessTransport([str(exe)], stderr_tail_lines=3, on_stderr=lines.append)
    async with anyio.create_task_group() as tg:
        await transport.start(tg)
        with anyio.fail_after(HANG_GUARD):
            await _written(tmp_path)
            # Asked at once: the pipe is read now, the unfinished line included.
            assert "line 118\nline 119\nfatal: gave up" == transport.stderr_tail
            assert "line 119" == lines[-1]  # only complete lines reach the callback
            await transport.send(b"go on\n")
            assert 0 == await transport.wait()
        await transport.aclose()
    assert "line 118\nline 119\nfatal: gave up for good" == transport.stderr_tail
    assert [f"line {i}" for i in range(120)] + ["fatal: gave up for good"] == lines
