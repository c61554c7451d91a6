"""`claudecode-bridge serve` as a user runs it: a real process, real HTTP, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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


def _token_of(printed: str) -> str:
    return printed.split("\n")[0].split(": ", 1)[1].strip()


def test_users_add_then_serve_reads_the_file_again_on_sighup(tmp_path: Path) -> None:
    """`users add --file` writes only the hash (0600); `serve --users` takes the users and
    picks up an edit on SIGHUP, even one its change check cannot see (same size and time)."""
    users = tmp_path / "users.toml"

    def add(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "adapter", "users", "add", *args, "--file", str(users)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return _token_of(done.stdout)

    alice = add("alice")
    root = add("root", "--admin", "--terminals")
    text = users.read_text()
    assert alice not in text and root not in text and 0o600 == users.stat().st_mode & 0o777
    with start("--demo", "--users", str(users), "--audit-log", str(tmp_path / "a.log")) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        base = first.split(" on ")[1].split()[0]
        with httpx.Client(base_url=base, timeout=30) as http:
            me = http.get("/api/me", headers={"Authorization": f"Bearer {alice}"}).json()
            assert {"name": "alice", "admin": False, "terminals": False} == me
            # alice's hash swapped for a new token's, the file's size and times kept.
            from adapter.server.identity import hash_token, new_token

            fresh = new_token()
            before = users.stat()
            users.write_text(text.replace(hash_token(alice), hash_token(fresh)))
            os.utime(users, ns=(before.st_atime_ns, before.st_mtime_ns))
            proc.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 60
            while http.get("/api/me", headers={"Authorization": f"Bearer {fresh}"}).is_error:
                assert time.monotonic() < deadline, "SIGHUP did not reload the users"
                time.sleep(0.05)
            assert (
                401 == http.get("/api/me", headers={"Authorization": f"Bearer {alice}"}).status_code
            )
        proc.send_signal(signal.SIGTERM)
        assert 0 == proc.wait(timeout=60)
    assert 0o600 == (tmp_path / "a.log").stat().st_mode & 0o777


def test_an_exposed_bind_with_a_users_file_needs_no_single_token(tmp_path: Path) -> None:
    users = tmp_path / "users.toml"
    users.write_text("")
    with start("--host", "0.0.0.0", "--demo", "--users", str(users)) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        port = first.split(" on ")[1].split()[0].rsplit(":", 1)[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert 401 == http.get("/api/sessions").status_code  # an empty file: nobody
        proc.send_signal(signal.SIGTERM)
        assert 0 == proc.wait(timeout=60)
    bad = tmp_path / "bad.toml"
    bad.write_text("[[users]]\nname = 'x'\n")
    with start("--demo", "--users", str(bad)) as proc:
        _, err = proc.communicate(timeout=60)
    assert 2 == proc.returncode
    assert "token_sha256" in err


def test_warm_pool_in_readyz_and_the_log_and_stopped_with_the_server(tmp_path: Path) -> None:
    """--warm 2 --demo: /readyz says how many CLIs are warm, starting and in use; a create
    takes a warm one (in use 1, the pool refilled), the log says so, and SIGTERM stops the
    pooled CLIs with the rest, none left behind."""
    with start("--demo", "--warm", "2", "-v", "--state-dir", str(tmp_path / "state")) as proc:
        assert proc.stdout is not None
        base = proc.stdout.readline().split(" on ")[1].split()[0]

        def pool(http: httpx.Client) -> dict[str, int]:
            body = http.get("/readyz").json()
            assert body["ready"]
            return dict(body["pool"])

        with httpx.Client(base_url=base, timeout=30) as http:
            deadline = time.monotonic() + 60
            while pool(http) != {"size": 2, "warm": 2, "starting": 0, "in_use": 0}:
                assert time.monotonic() < deadline, pool(http)
                time.sleep(0.05)
            warm = set(procfs.descendants(proc.pid))
            sid = http.post("/api/sessions", json={}).json()["id"]
            assert pool(http)["in_use"] == 1
            while pool(http) != {"size": 2, "warm": 2, "starting": 0, "in_use": 1}:
                assert time.monotonic() < deadline, pool(http)
                time.sleep(0.05)
            assert [sid] == [s["id"] for s in http.get("/api/sessions").json()]
        clis = procfs.descendants(proc.pid)
        assert len(set(clis) - warm) >= 1  # the replacement
        proc.send_signal(signal.SIGTERM)
        assert 0 == proc.wait(timeout=60)
        assert [] == [pid for pid in clis if procfs.running(pid)]
        assert proc.stderr is not None
        log = proc.stderr.read()
        assert "adapter.pool_handed_out" in log
        assert "in_use=1" in log and "warm=2" in log


def test_warm_on_a_gateway_without_a_worker_is_refused() -> None:
    """A gateway runs no CLI: --warm with --nats needs --worker (a clear exit 2, nothing
    started)."""
    with start("--nats", "nats://127.0.0.1:9", "--warm", "2") as proc:
        _, err = proc.communicate(timeout=60)
        assert 2 == proc.returncode
        assert "--warm with --nats needs --worker" in err and "Traceback" not in err


def test_an_agents_file_is_checked_at_start_and_its_agents_served(tmp_path: Path) -> None:
    """--agents (or $CLAUDECODE_BRIDGE_AGENTS): a faulty file stops the start with one worded
    line and exit 2, never a traceback; a good one is announced and listed by info."""
    path = tmp_path / "agents.toml"
    faults = {
        '[agents.a]\ncwd = "gone"\n': "agent 'a': 'cwd'",
        "[agents.a]\ncolour = 1\n": "agent 'a': unknown key 'colour'",
        "[agents.a]\nallowed_tools = 'Bash'\n": "'allowed_tools' must be a list",
        '[agents."a/b"]\n': "not a valid agent name",
        "[agents.a\n": "not valid TOML",
    }
    for text, words in faults.items():
        path.write_text(text)
        with start("--demo", "--agents", str(path)) as proc:
            _, err = proc.communicate(timeout=60)
        assert 2 == proc.returncode
        assert words in err and "Traceback" not in err, err
    with start("--demo", env={"CLAUDECODE_BRIDGE_AGENTS": str(tmp_path / "none.toml")}) as proc:
        _, err = proc.communicate(timeout=60)
    assert 2 == proc.returncode and "none.toml: cannot read it" in err, err
    (tmp_path / "repo").mkdir()
    path.write_text('[agents.coder]\ncwd = "repo"\n[agents.reviewer]\npolicy = "plan"\n')
    with start("--demo", env={"CLAUDECODE_BRIDGE_AGENTS": str(path)}) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        base = first.split(" on ")[1].split()[0]
        with httpx.Client(base_url=base, timeout=30) as http:
            assert ["coder", "reviewer"] == list(http.get("/copilotkit/info").json()["agents"])
        proc.send_signal(signal.SIGTERM)
        rest = proc.stdout.read()
        assert 0 == proc.wait(timeout=60)
    assert "agents:        coder, reviewer" in rest, rest


def test_sighup_reopens_the_audit_log_for_logrotate(tmp_path: Path) -> None:
    """logrotate's way: the audit log is moved away, then SIGHUP; the records before stay
    in the moved file, those after go to a new file at the path (0600), and the server
    (with no users file to read again) goes on serving."""
    log = tmp_path / "audit.jsonl"
    rotated = tmp_path / "audit.jsonl.1"
    with start("--demo", "--audit-log", str(log)) as proc:
        assert proc.stdout is not None
        base = proc.stdout.readline().split(" on ")[1].split()[0]
        with httpx.Client(base_url=base, timeout=30) as http:
            first = http.post("/api/sessions", json={}).json()["id"]
            wait_until(lambda: first in log.read_text(), what="the first record")
            log.rename(rotated)
            proc.send_signal(signal.SIGHUP)
            wait_until(log.exists, what="the audit log opened again at its path")
            second = http.post("/api/sessions", json={}).json()["id"]
            assert second in log.read_text()
        assert 0o600 == log.stat().st_mode & 0o777
        assert first in rotated.read_text() and first not in log.read_text()
        assert second not in rotated.read_text()
        proc.send_signal(signal.SIGTERM)
        assert 0 == proc.wait(timeout=60)
