"""claudecode._proc_environ: finding processes by a variable in their environment, on real
processes (marked, unmarked, detached with setsid and a double fork, one that exited, the
scanning process itself) and on a made-up /proc for what real ones rarely show."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from claudecode._proc_environ import pids_with_env
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")

#: Hang guard only (a busy machine may take long to start Python).
NAME = "CLAUDECODE_BRIDGE_TEST_MARK"

# Prints its pid once it runs, then sleeps until killed.
SLEEPER = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(3600)\n"
# Leaves its session and process group with a double fork (as a daemon does); the grandchild
# prints its pid and sleeps, the others exit.
DETACHER = """
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
print(os.getpid(), flush=True)
sys.stdout.close()
time.sleep(3600)
"""


@pytest.fixture
def spawn() -> Iterator[Callable[..., int]]:
    """Start a Python program with extra environment variables: the pid it prints. Every
    process started is killed at the end (the detached ones by their pid)."""
    procs: list[subprocess.Popen[bytes]] = []
    pids: list[int] = []

    def start(code: str, env: dict[str, str]) -> int:
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        pid = int(proc.stdout.readline())
        pids.append(pid)
        return pid

    yield start
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for proc in procs:
        proc.wait(HANG_GUARD)
        assert proc.stdout is not None
        proc.stdout.close()


def test_finds_the_marked_even_detached_and_nothing_else(spawn: Callable[..., int]) -> None:
    value = uuid.uuid4().hex
    marked = spawn(SLEEPER, {NAME: value})
    detached = spawn(DETACHER, {NAME: value})
    others = [
        spawn(SLEEPER, {}),
        spawn(SLEEPER, {NAME: uuid.uuid4().hex}),  # another session's mark
        spawn(SLEEPER, {NAME: value + "0"}),  # the value is matched whole...
        spawn(SLEEPER, {NAME + "_X": value}),  # ...and so is the name
        spawn(SLEEPER, {"X" + NAME: value}),
    ]
    found = pids_with_env(NAME, value)
    assert sorted(found) == sorted([marked, detached])
    assert not set(found) & set(others)


def test_a_process_that_exited_is_not_found() -> None:
    value = uuid.uuid4().hex
    proc = subprocess.Popen(
        [sys.executable, "-c", SLEEPER], env={**os.environ, NAME: value}, stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        assert int(proc.stdout.readline()) == proc.pid
        assert pids_with_env(NAME, value) == [proc.pid]
    finally:
        proc.kill()
        proc.wait(HANG_GUARD)  # reaped: /proc forgets it
        assert proc.stdout is not None
        proc.stdout.close()
    assert pids_with_env(NAME, value) == []


def test_never_the_scanning_process(spawn: Callable[..., int]) -> None:
    value = uuid.uuid4().hex
    sibling = spawn(SLEEPER, {NAME: value})
    root = str(Path(__file__).resolve().parents[2])
    scan = (
        "import json, os\n"
        "from claudecode._proc_environ import pids_with_env\n"
        f"print(json.dumps([os.getpid(), pids_with_env({NAME!r}, {value!r})]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", scan],
        env={**os.environ, NAME: value, "PYTHONPATH": root},
        capture_output=True,
        check=True,
        timeout=HANG_GUARD,
    ).stdout
    own, listed = json.loads(out)
    assert listed == [sibling]  # itself carries the mark too, and is not listed
    assert own != sibling


def test_a_made_up_proc(tmp_path: Path) -> None:
    """Entries that are not processes, a process gone between the listing and the read
    (no environ), and the exact match among NUL-separated variables."""
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "environ").write_bytes(b"A=1\0")
    (tmp_path / "meminfo").write_text("not a process")
    (tmp_path / "12").mkdir()  # gone: no environ
    (tmp_path / "34").mkdir()
    (tmp_path / "34" / "environ").write_bytes(b"B=2\0A=1\0C=A=1\0")
    (tmp_path / "56").mkdir()
    (tmp_path / "56" / "environ").write_bytes(b"A=10\0AA=1\0")
    (tmp_path / "78").mkdir()
    (tmp_path / "78" / "environ").write_bytes(b"A=1")  # the last one, no trailing NUL
    assert sorted(pids_with_env("A", "1", proc=str(tmp_path))) == [34, 78]


def test_without_proc_nothing_is_found(tmp_path: Path) -> None:
    assert pids_with_env("A", "1", proc=str(tmp_path / "missing")) == []
