"""``claudecode-bridge acp --warm N``: CLIs started ahead of the editor's sessions, handed
to the sessions whose settings match (the agent's directory, model, policy and mode)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from benchmarks import procfs
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import wait_until


def _request(proc: subprocess.Popen[bytes], rid: int, method: str, params: Any) -> Any:
    assert proc.stdin is not None and proc.stdout is not None
    frame = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    proc.stdin.write(json.dumps(frame).encode() + b"\n")
    proc.stdin.flush()
    while True:
        msg = json.loads(proc.stdout.readline())
        if msg.get("id") == rid:
            assert "result" in msg, msg
            return msg["result"]


def test_a_session_in_the_agents_directory_gets_a_warm_cli(tmp_path: Path) -> None:
    work = tmp_path / "project"
    other = tmp_path / "elsewhere"
    work.mkdir()
    other.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter", "acp", "--demo", "--warm", "1", "-v"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=work,  # as an editor starts its agent in the project
        env={**os.environ, "HOME": str(tmp_path)},
    )
    log: list[str] = []
    assert proc.stderr is not None
    stderr = proc.stderr
    reader = threading.Thread(target=lambda: log.extend(line.decode() for line in stderr))
    reader.start()
    try:
        _request(proc, 1, "initialize", {"protocolVersion": 1})
        # Before any session: one CLI, started, initialized and waiting.
        wait_until(lambda: any("adapter.pool" in x and "warm=1" in x for x in log), what="pool")
        (pooled,) = procfs.children(proc.pid)
        warm = _request(proc, 2, "session/new", {"cwd": str(work), "mcpServers": []})
        cold = _request(proc, 3, "session/new", {"cwd": str(other), "mcpServers": []})
        # The pooled CLI serves the first session, under the session id it was started with
        # (the editor's id is the CLI's: session/load finds the transcript by it); the
        # second started its own, and a replacement joins the pool.
        assert _named(warm["sessionId"]) in (procfs.cmdline(pooled) or [])
        assert any(
            _named(cold["sessionId"]) in (procfs.cmdline(pid) or [])
            for pid in procfs.children(proc.pid)
        )
        wait_until(lambda: len(procfs.children(proc.pid)) == 3, what="the replacement")
        assert proc.stdin is not None
        proc.stdin.close()
        assert 0 == proc.wait(timeout=HANG_GUARD)
        reader.join(HANG_GUARD)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()
    handed = [line for line in log if "adapter.pool_handed_out" in line]
    assert 1 == len(handed), "".join(log)[-3000:]
    # The editor's id for the warm session is the pooled CLI's session id (session/load
    # finds its transcript by it); the cold one has its own.
    started = {_field(x, "session_id"): x for x in log if "session.started" in x}
    assert f"pid={pooled}" in started[_field(handed[0], "session_id")]
    assert warm["sessionId"] != cold["sessionId"]
    assert not any(cold["sessionId"] in x for x in handed)


def _named(session_id: str) -> bytes:
    """The argument that starts a CLI session under ``session_id``."""
    return f"--session-id={session_id}".encode()


def _field(line: str, name: str) -> str:
    return line.split(f" {name}=")[1].split()[0]


def test_warm_with_nats_is_a_usage_error(tmp_path: Path) -> None:
    """The cluster's workers run the sessions: they keep the warm CLIs, not the gateway."""
    done = subprocess.run(
        [sys.executable, "-m", "adapter", "acp", "--nats", "nats://127.0.0.1:9", "--warm", "1"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**os.environ, "HOME": str(tmp_path)},
        timeout=120,
    )
    assert 2 == done.returncode
    assert b"--warm with --nats" in done.stderr
