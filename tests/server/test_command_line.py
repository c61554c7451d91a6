"""The command line as a new user meets it: a closed pipe, a port in use, and what ``serve``
logs (real processes, real HTTP and WebSocket)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.sync.client as ws_client

from benchmarks import procfs
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import wait_until

pytestmark = [pytest.mark.server, pytest.mark.slow]

EXIT_BROKEN_PIPE = 141


def bridge(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "adapter", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def test_schema_into_a_closed_pipe_ends_quietly() -> None:
    proc = bridge("schema")
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().strip() == b"{"
    proc.stdout.close()  # `| head -1`
    err = proc.stderr.read()
    proc.stderr.close()
    assert EXIT_BROKEN_PIPE == proc.wait(HANG_GUARD)
    assert b"" == err


def test_run_into_a_closed_pipe_ends_quietly_and_reaps_its_cli(tmp_path: Path) -> None:
    proc = bridge("run", "--demo", "--json")
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline())["type"]
    clis = procfs.descendants(proc.pid)
    assert clis, "the demo CLI runs"
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert EXIT_BROKEN_PIPE == proc.wait(HANG_GUARD), err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert [] == [pid for pid in clis if procfs.running(pid)]


def test_serve_on_a_port_in_use_says_so_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = bridge("serve", "--demo", "--port", str(port))
        _, err = proc.communicate(timeout=HANG_GUARD)
    assert 2 == proc.returncode
    lines = err.decode().strip().splitlines()
    assert 1 == len(lines), lines
    assert f"127.0.0.1:{port} is already in use" in lines[0] and "--port 0" in lines[0]


def log_lines(err: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]


def test_serve_logs_sessions_connections_and_decisions_not_prompts(tmp_path: Path) -> None:
    """--log-format json: a session's start (with its CLI's pid) and end (and why), a
    permission decision, a WebSocket connection and its close, an AG-UI stream, one JSON
    object per line; the prompts, the tool's input and the token appear nowhere."""
    token = "tok-never-logged-7731"
    proc = bridge(
        "serve", "--demo", "--port", "0", "--log-format", "json",
        "--state-dir", str(tmp_path / "state"),
        env={"CLAUDECODE_BRIDGE_TOKEN": token},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().decode().split(" on ")[1].split()[0]
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, timeout=HANG_GUARD, headers=auth) as http:
            sid = http.post("/api/sessions", json={}).json()["id"]
            http.post(f"/api/sessions/{sid}/prompt", json={"text": "tour, secret-prompt-words"})

            def pending_info() -> dict[str, Any] | None:
                info: dict[str, Any] = http.get(f"/api/sessions/{sid}").json()
                return info if info.get("pending_permissions") else None

            info = wait_until(pending_info, poll=0.05, what="a pending permission")
            pending = info["pending_permissions"][0]
            answer = {"behavior": "deny", "message": "no"}
            answered = http.post(f"/api/sessions/{sid}/permissions/{pending}", json=answer)
            assert answered.status_code < 300, answered.text
            ws_url = base.replace("http://", "ws://") + f"/ws?token={token}"
            with ws_client.connect(ws_url, open_timeout=HANG_GUARD) as ws:
                ws.recv(timeout=HANG_GUARD)
            assert 200 == http.delete(f"/api/sessions/{sid}").status_code
            prompt = {"id": "m1", "role": "user", "content": "secret-prompt-words"}
            run = {"threadId": "t1", "runId": "r1", "messages": [prompt]}
            assert "RUN_STARTED" in http.post("/agui", json=run).text
        time.sleep(0.5)  # the ws.closed line is written as the connection ends
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert 0 == proc.returncode, err.decode()
    lines = log_lines(err)
    by_event: dict[str, dict[str, Any]] = {}
    for line in lines:
        by_event.setdefault(line["event"], line)  # the first of each
    started = by_event["session.started"]
    assert sid == started["session_id"] and isinstance(started["pid"], int)
    assert "info" == started["level"]
    decided = by_event["permission.decided"]
    assert ("deny", sid) == (decided["behavior"], decided["session_id"])
    assert "ws.connected" in by_event
    assert by_event["ws.closed"]["reason"] in ("client left", "client gone")
    assert "t1" == by_event["agui.stream_opened"]["thread_id"]
    assert "run ended" == by_event["agui.stream_closed"]["reason"]
    closed = by_event["session.closed"]
    assert (sid, "closed") == (closed["session_id"], closed["reason"])
    text = err.decode()
    assert "secret-prompt-words" not in text
    assert token not in text
    assert "tool_input" not in text and "input" not in decided


def test_serve_log_level_warning_is_quiet(tmp_path: Path) -> None:
    proc = bridge("serve", "--demo", "--port", "0", "--log-level", "warning")
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().decode().split(" on ")[1].split()[0]
        with httpx.Client(base_url=base, timeout=HANG_GUARD) as http:
            sid = http.post("/api/sessions", json={}).json()["id"]
            http.delete(f"/api/sessions/{sid}")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert b"session.started" not in err, err.decode()
