"""What the cluster tests share: backends and workers in this process on a real
nats-server, worker and gateway processes, NATS paused, resume claims, WebSocket replies."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection

from adapter.backend import SessionInfo
from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    ClusterWorker,
    LocalNatsServer,
    NatsSettings,
    die_with_parent,
)
from adapter.cluster._claims import ResumeClaims, claim_key
from adapter.config import SessionConfig
from claudecode.testing import fake_cli_command
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import eventually, wait_until


def fast_config() -> ClusterConfig:
    return ClusterConfig(
        prefix=f"t{uuid.uuid4().hex[:10]}", heartbeat_interval=0.5, heartbeat_ttl=1.5
    )


def worker_defaults(tmp_path: Path, body: Any) -> SessionConfig:
    cli = fake_cli_command(body, tmp_path / f"fake-{uuid.uuid4().hex[:6]}")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return SessionConfig(cli_path=cli, cwd=work, permission_timeout=None)


@contextlib.asynccontextmanager
async def running(
    server: LocalNatsServer,
    config: ClusterConfig,
    defaults: SessionConfig,
    *,
    workers: Sequence[dict[str, Any]] = ({},),
) -> AsyncIterator[tuple[ClusterBackend, list[ClusterWorker]]]:
    settings = NatsSettings(servers=[server.url])
    async with contextlib.AsyncExitStack() as stack:
        started = [
            await stack.enter_async_context(
                ClusterWorker(settings, config, defaults, idle_timeout=None, **options)
            )
            for options in workers
        ]
        backend = await stack.enter_async_context(ClusterBackend(settings, config))
        await eventually(lambda: len(backend._require().workers) >= len(started))
        yield backend, started


async def wait_state(backend: ClusterBackend, session_id: str, state: str) -> SessionInfo:
    async def reached() -> SessionInfo | None:
        info = await backend.info(session_id)
        return info if info.state == state else None

    info: SessionInfo = await eventually(reached, poll=0.05, what=f"{session_id} is {state}")
    return info


STORED = "5b0d6f3e-7a21-4c55-9d0e-2f4b8c1a9e70"


async def claim_of(claims: ResumeClaims, cli_session_id: str) -> bytes | None:
    """The claim's value in the bucket (None: no claim)."""
    from nats.js.errors import KeyDeletedError, KeyNotFoundError

    try:
        entry = await claims.kv.get(claim_key(cli_session_id))
    except (KeyNotFoundError, KeyDeletedError):
        return None
    return entry.value or None


async def until_no_claim(claims: ResumeClaims, *cli_session_ids: str) -> None:
    """Wait until none of these CLI sessions is claimed (a hang guard, not a timing). A
    read NATS answers too late (a busy machine, or a NATS that was paused) is read again."""
    from nats.errors import TimeoutError as NatsTimeoutError

    async def none_claimed() -> bool:
        with contextlib.suppress(NatsTimeoutError):
            return not [c for c in cli_session_ids if await claim_of(claims, c) is not None]
        return False

    await eventually(none_claimed, poll=0.05, what=f"no claim on {cli_session_ids}")


def claims_of(backend: ClusterBackend) -> ResumeClaims:
    claims = backend._claims
    assert claims is not None
    return claims


def _stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is stopped (``T`` in its stat)."""
    tasks = Path(f"/proc/{pid}/task")
    states = []
    for task in tasks.iterdir():
        with contextlib.suppress(OSError):
            states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
    return bool(states) and all(state == "T" for state in states)


@contextlib.contextmanager
def paused(server: LocalNatsServer) -> Iterator[None]:
    """nats-server stopped (SIGSTOP): connections stay up, nothing answers. Yields once
    every thread of the server has stopped (a signal's delivery takes its time on a busy
    machine: a request sent before that might still be answered)."""
    assert server.process is not None
    pid = server.process.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_until(lambda: _stopped(pid), poll=0.001, what="nats-server stopped")
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


class Processes:
    """Child processes started in their own process groups, all SIGKILLed at the end."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *args: str, env: dict[str, str] | None = None) -> None:
        log = open(self.directory / f"{name}.log", "wb")  # noqa: SIM115 - owned by the child
        try:
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", "adapter", *args],
                stdin=subprocess.DEVNULL,
                stdout=log if name.startswith("w") else subprocess.PIPE,
                stderr=log,
                env={**os.environ, **(env or {})},
                start_new_session=True,
                # Gone with this process even when it dies without running its cleanup.
                preexec_fn=die_with_parent(signal.SIGTERM),
            )
        finally:
            log.close()

    def kill(self, name: str) -> None:
        proc = self.procs[name]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def log(self, name: str) -> str:
        return (self.directory / f"{name}.log").read_text(errors="replace")

    def kill_all(self) -> None:
        for name, proc in self.procs.items():
            if proc.returncode is None:
                self.kill(name)


@contextlib.contextmanager
def processes(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    try:
        yield procs
    finally:
        procs.kill_all()


def start_worker(
    procs: Processes,
    server: LocalNatsServer,
    config: ClusterConfig,
    name: str,
    cli: Path,
    tmp: Path,
    *extra: str,
) -> None:
    home = tmp / f"{name}-config"
    home.mkdir(mode=0o700)
    work = tmp / f"{name}-work"
    work.mkdir()
    procs.start(
        name,
        "worker",
        "--nats",
        server.url,
        "--nats-prefix",
        config.prefix,
        "--id",
        name,
        "--cli",
        str(cli),
        "--cwd",
        str(work),
        "--idle-timeout",
        "0",
        "-v",
        *extra,
        env={"CLAUDE_CONFIG_DIR": str(home)},
    )


def start_gateway(
    procs: Processes,
    server: LocalNatsServer,
    config: ClusterConfig,
    *extra: str,
    name: str = "gateway",
) -> str:
    """A ``serve --nats`` process (``extra``: more of its options) named ``name`` (its log
    is ``procs.log(name)``); returns its URL once it serves."""
    procs.start(
        name,
        "serve",
        "--port",
        "0",
        "--nats",
        server.url,
        "--nats-prefix",
        config.prefix,
        *extra,
    )
    stdout = procs.procs[name].stdout
    assert stdout is not None
    line = stdout.readline().decode()
    assert "serving on http://127.0.0.1:" in line, procs.log(name)
    return line.split("serving on ", 1)[1].split()[0]


@contextlib.asynccontextmanager
async def second_gateway(
    server: LocalNatsServer, config: ClusterConfig, workers: int
) -> AsyncIterator[ClusterBackend]:
    async with ClusterBackend(NatsSettings(servers=[server.url]), config) as backend:
        await eventually(
            lambda: len(backend._require().workers) >= workers,
            guard=PROCESSES_GUARD,
            poll=0.1,
            what=f"{workers} workers known",
        )
        yield backend


def gateway_url(proc: subprocess.Popen[bytes]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    assert "serving on http://127.0.0.1:" in line, line
    return line.split("serving on ", 1)[1].split()[0].replace("http://", "ws://") + "/ws"


async def recv_reply(ws: ClientConnection, request_id: int) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(await ws.recv())
        if frame.get("request_id") == request_id:
            return frame
