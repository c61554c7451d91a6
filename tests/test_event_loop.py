"""The server entry points' event loop: ``--loop auto|asyncio|uvloop`` (and
``$CLAUDECODE_BRIDGE_LOOP``), and ``serve`` really running on the loop it was given."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import uvloop

from adapter.commands._event_loop import LOOP_ENV_VAR, loop_factory, run
from benchmarks import procfs
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import wait_until


@pytest.fixture(autouse=True)
def _no_env_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_ENV_VAR, raising=False)


async def _loop_type() -> type[asyncio.AbstractEventLoop]:
    return type(asyncio.get_running_loop())


def test_auto_takes_uvloop_when_installed() -> None:
    assert loop_factory(None) is uvloop.new_event_loop
    assert loop_factory("auto") is uvloop.new_event_loop
    assert issubclass(run(_loop_type(), loop_factory("auto")), uvloop.Loop)


def test_asyncio_is_the_standard_loop() -> None:
    assert loop_factory("asyncio") is None
    assert not issubclass(run(_loop_type(), loop_factory("asyncio")), uvloop.Loop)


def test_the_environment_chooses_when_the_option_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(LOOP_ENV_VAR, "asyncio")
    assert loop_factory(None) is None
    assert loop_factory("uvloop") is uvloop.new_event_loop  # the option wins
    monkeypatch.setenv(LOOP_ENV_VAR, "libev")
    with pytest.raises(ValueError, match="unknown event loop 'libev'"):
        loop_factory(None)


def test_without_uvloop_auto_falls_back_and_uvloop_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    assert loop_factory("auto") is None
    with pytest.raises(RuntimeError, match="uvloop event loop is not installed"):
        loop_factory("uvloop")


def _loaded(pid: int, name: str) -> bool:
    return name in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.parametrize("choice", ["asyncio", "uvloop"])
def test_serve_runs_a_session_on_the_loop_it_was_given(choice: str, tmp_path: Path) -> None:
    """``serve --loop`` runs a demo turn (a CLI subprocess, its pipes, HTTP) on that loop,
    then stops gracefully on SIGTERM with the CLI reaped."""
    with subprocess.Popen(
        [sys.executable, "-m", "adapter", "serve", "--port", "0", "--demo", "--loop", choice,
         "--state-dir", str(tmp_path / "state")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, LOOP_ENV_VAR: ""},
    ) as proc:  # fmt: skip
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert "(DEMO)" in first, first + (proc.stderr.read() if proc.stderr else "")
            base = first.split(" on ")[1].split()[0]
            with httpx.Client(base_url=base, timeout=30) as http:
                sid = http.post("/api/sessions", json={}).json()["id"]
                http.post(f"/api/sessions/{sid}/prompt", json={"text": "tour"})
                wait_until(
                    lambda: http.get(f"/api/sessions/{sid}").json()["state"] == "waiting",
                    PROCESSES_GUARD,
                    poll=0.05,
                    what="the demo waiting",
                )
            # uvloop is a compiled extension: loaded into the process only on its loop.
            assert _loaded(proc.pid, "uvloop") == (choice == "uvloop")
            clis = procfs.descendants(proc.pid)
            assert clis, "the demo session runs a CLI process"
            proc.send_signal(signal.SIGTERM)
            assert 0 == proc.wait(timeout=60)
            assert [] == [pid for pid in clis if procfs.running(pid)]
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=60)


def test_serve_refuses_a_loop_it_does_not_know() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "adapter", "serve", "--port", "0", "--demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, LOOP_ENV_VAR: "libev"},
    )
    assert 2 == result.returncode
    assert "unknown event loop 'libev'" in result.stderr
