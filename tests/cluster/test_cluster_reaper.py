"""The watchdog of a worker's CLIs on its own: it stops every process that carries its
token (with their process groups) once its standard input ends, and nothing else."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from adapter.cluster._reaper import MARK, OrphanReaper, marked, reap
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")


def sleeper(env: dict[str, str], *, ignore_term: bool = False) -> subprocess.Popen[bytes]:
    code = "import signal, time\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('up', flush=True)\ntime.sleep(3600)\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"up\n"  # its handlers are in place
    return proc


def finish(*procs: subprocess.Popen[bytes]) -> None:
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def test_reap_stops_the_marked_and_spares_the_rest() -> None:
    token = uuid.uuid4().hex
    ours = sleeper({MARK: token})
    stubborn = sleeper({MARK: token}, ignore_term=True)  # needs the SIGKILL
    other = sleeper({MARK: uuid.uuid4().hex})  # another worker's
    unmarked = sleeper({})
    try:
        assert sorted(marked(token)) == sorted([ours.pid, stubborn.pid])
        assert sorted(reap(token, grace=1.0)) == sorted([ours.pid, stubborn.pid])
        assert ours.wait(HANG_GUARD) == -signal.SIGTERM
        assert stubborn.wait(HANG_GUARD) == -signal.SIGKILL
        assert other.poll() is None and unmarked.poll() is None
        assert marked(token) == []
    finally:
        finish(ours, stubborn, other, unmarked)


def test_the_watchdog_reaps_when_its_pipe_ends() -> None:
    reaper = OrphanReaper()
    assert reaper.env == {}  # not started: nothing to mark
    reaper.start()
    cli = sleeper(reaper.env)
    try:
        time.sleep(0.2)
        assert cli.poll() is None  # the pipe is open: the watchdog waits
        reaper.stop()  # as when the worker exits, however it exits
        assert cli.wait(HANG_GUARD) == -signal.SIGTERM
    finally:
        reaper.stop()
        finish(cli)
