"""``--demo`` keeps its sessions as the real CLI does, in a home it owns: history and resume
work without the real CLI (real processes, real WebSocket)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import websockets.sync.client as ws_client

from adapter.history.transcripts import list_sessions
from tests.support.timeouts import HANG_GUARD

pytestmark = [pytest.mark.server, pytest.mark.slow]


def run_demo(*args: str) -> tuple[int, list[dict[str, Any]]]:
    done = subprocess.run(
        [sys.executable, "-m", "adapter", "run", "--demo", "--json", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=HANG_GUARD,
        check=False,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, events


def cwd_of(events: list[dict[str, Any]]) -> str:
    return str(next(e["cwd"] for e in events if isinstance(e.get("cwd"), str)))


def test_the_temporary_demo_home_is_removed_at_exit() -> None:
    code, events = run_demo()
    assert 0 == code
    work = Path(cwd_of(events))
    assert "claudecode-demo-" in str(work)
    assert not work.exists()
    assert not work.parent.exists()  # the home: its transcripts went with it


def test_a_kept_demo_home_has_history_and_resume(tmp_path: Path) -> None:
    home = tmp_path / "demo-home"
    code, events = run_demo("--demo-home", str(home))
    assert 0 == code
    stored = list_sessions(config=home / "config")
    assert 1 == len(stored)
    session = stored[0]
    assert session.title == "Give me a tour of what you can do."
    assert session.cwd == str(home / "work") == cwd_of(events)
    before = Path(session.path).stat().st_size

    # Resumed through `run`: the same stored session grows.
    code, _ = run_demo("--demo-home", str(home), "--resume", session.session_id, "again")
    assert 0 == code
    assert Path(session.path).stat().st_size > before
    assert 1 == len(list_sessions(config=home / "config"))

    # And through the server: listed over /ws, opened again with resume.
    with subprocess.Popen(
        [sys.executable, "-m", "adapter", "serve", "--demo", "--port", "0", "--log-level",
         "warning", "--demo-home", str(home), "--state-dir", str(tmp_path / "state")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    ) as proc:  # fmt: skip
        try:
            assert proc.stdout is not None
            base = proc.stdout.readline().split(" on ")[1].split()[0]
            with ws_client.connect(base.replace("http", "ws", 1) + "/ws") as ws:
                ws.recv(timeout=HANG_GUARD)  # the session list
                ws.send(json.dumps({"type": "list_history", "request_id": "h"}))
                history = json.loads(ws.recv(timeout=HANG_GUARD))
                assert [session.session_id] == [s["session_id"] for s in history["sessions"]]
                resume = {"type": "create_session", "request_id": "r", "resume": session.session_id}
                ws.send(json.dumps(resume))
                while (ack := json.loads(ws.recv(timeout=HANG_GUARD))).get("request_id") != "r":
                    pass
                assert "ack" == ack["type"], ack
                assert str(home / "work") == ack["session"]["cwd"]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=HANG_GUARD)
    assert home.exists(), "a home given with --demo-home is kept"
