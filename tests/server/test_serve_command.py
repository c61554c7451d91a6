"""`claudecode-bridge serve` as a user runs it: a real process, real HTTP, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from adapter.commands.serve import is_loopback
from benchmarks import procfs
from tests.support.waits import wait_until

pytestmark = [pytest.mark.server, pytest.mark.slow]


@contextmanager
def start(*args: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """The serve command in a child process; killed (if still running) and its pipes closed
    when the block ends."""
    with subprocess.Popen(
        [sys.executable, "-m", "adapter", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    ) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate(timeout=60)


def test_demo_serves_then_stops_gracefully_on_sigterm(tmp_path: Path) -> None:
    """--demo prints its URLs, runs a demo session, and on SIGTERM exits 0 with every CLI
    process reaped."""
    with start("--demo", "--state-dir", str(tmp_path / "state")) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "(DEMO)" in first, first + (proc.stderr.read() if proc.stderr else "")
        base = first.split(" on ")[1].split()[0]
        assert base.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=base, timeout=30) as http:
            ready = http.get("/readyz").json()
            assert ready["ready"] and ready["demo"]
            sid = http.post("/api/sessions", json={}).json()["id"]
            http.post(f"/api/sessions/{sid}/prompt", json={"text": "tour"})
            wait_until(
                lambda: http.get(f"/api/sessions/{sid}").json()["state"] == "waiting",
                poll=0.05,
                what="the demo waiting",
            )
        clis = procfs.descendants(proc.pid)
        assert clis, "the demo session runs a CLI process"
        proc.send_signal(signal.SIGTERM)
        assert 0 == proc.wait(timeout=60)
        assert [] == [pid for pid in clis if procfs.running(pid)]


def test_a_token_from_the_environment_is_required(tmp_path: Path) -> None:
    """CLAUDECODE_BRIDGE_TOKEN protects every route but /healthz; SIGINT stops the server."""
    with start("--demo", env={"CLAUDECODE_BRIDGE_TOKEN": "tok"}) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        base = first.split(" on ")[1].split()[0]
        with httpx.Client(base_url=base, timeout=30) as http:
            assert 200 == http.get("/healthz").status_code
            assert 401 == http.get("/readyz").status_code
            assert 200 == http.get("/readyz", headers={"Authorization": "Bearer tok"}).status_code
        proc.send_signal(signal.SIGINT)
        assert 0 == proc.wait(timeout=60)


def test_refuses_an_exposed_bind_without_a_token() -> None:
    """A non-loopback address without a token is refused before anything is bound."""
    with start("--host", "0.0.0.0", "--demo") as proc:
        _, err = proc.communicate(timeout=60)
    assert 2 == proc.returncode
    assert "refusing to bind 0.0.0.0 without a token" in err


def test_loopback_detection() -> None:
    """Only loopback addresses count as private."""
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert not is_loopback("example.com")


def test_terminals_are_announced_and_can_be_turned_off(tmp_path: Path) -> None:
    """The start message says a terminal is a shell as this user; --no-terminals serves
    none; --allowed-host admits that Host, others get 421."""
    for extra, terminals in (((), True), (("--no-terminals",), False)):
        with start("--demo", "--allowed-host", "bridge.example", *extra) as proc:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            base = first.split(" on ")[1].split()[0]
            port = base.rsplit(":", 1)[1]
            with httpx.Client(base_url=base, timeout=30) as http:
                listed = http.get("/api/terminals")
                assert (200 if terminals else 404) == listed.status_code
                allowed = http.get("/readyz", headers={"Host": f"bridge.example:{port}"})
                assert 200 == allowed.status_code
                refused = http.get("/readyz", headers={"Host": f"other.example:{port}"})
                assert 421 == refused.status_code
            proc.send_signal(signal.SIGTERM)
            rest = proc.stdout.read()  # communicate() would skip what readline() buffered
            assert 0 == proc.wait(timeout=60)
            assert terminals == ("terminals run a shell as this user" in rest), rest


def test_a_malformed_allowed_host_is_refused_at_start() -> None:
    with start("--demo", "--allowed-host", "a:b:c") as proc:
        _, err = proc.communicate(timeout=60)
        assert 2 == proc.returncode
        assert "not a host" in err and "Traceback" not in err
