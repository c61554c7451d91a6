"""``claudecode-bridge acp``: Claude Code as an ACP agent on stdin/stdout.

The editor spawns this command and speaks JSON-RPC on its stdin/stdout. Stdout belongs to
the protocol alone: at start the real stdout is moved to a private descriptor and descriptor
1 is pointed at stderr, so a stray ``print``, a library warning or a child process that
inherits descriptor 1 can never corrupt the stream. Logs go to stderr (or ``--log-file``).
Closing stdin ends the agent: every session is closed and its CLI reaped, then it exits 0.
SIGTERM and SIGINT do the same (an editor stopping its agent).

The sessions run in this process (a :class:`~adapter.local.LocalBackend`), or with
``--nats URL`` on a cluster's ``claudecode-bridge worker`` processes: the agent is then a
gateway (a :class:`~adapter.cluster.ClusterBackend`) and lists and loads the cluster's stored
sessions.
"""

from __future__ import annotations

import argparse
import os
import signal
import stat
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from claudecode import CLINotFoundError, find_cli
from claudecode.internal import INSTALL_HINT

from ..acp.agent import AcpAgent, AgentOptions
from ..backend import SessionBackend
from ..config import SessionConfig
from ..policies import PermissionPolicy
from ._setup import add_demo_home_argument

__all__ = ("acp_command", "add_acp_arguments", "serve_stdio")

_READ_SIZE = 256 * 1024


def add_acp_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``acp`` sub-command's arguments."""
    from .worker import _non_negative, add_nats_arguments

    parser.add_argument(
        "--cwd", help="run every session in DIR (default: the directory the editor sends)"
    )
    parser.add_argument("--model", help="model to start sessions with (default: the CLI's)")
    parser.add_argument(
        "--policy",
        choices=("supervised", "autonomous", "plan"),
        default="supervised",
        help="permission policy (default supervised: the editor is asked before every tool "
        "that is not read-only)",
    )
    parser.add_argument("--permission-mode", help="the CLI's starting permission mode")
    parser.add_argument(
        "--warm",
        type=_non_negative,
        default=0,
        metavar="N",
        help="keep N CLIs started for sessions in --cwd (default: this process's directory) "
        "with this --model, --policy and --permission-mode; a new session with those settings "
        "(and no MCP servers of the editor's) gets one at once, and a replacement starts in "
        "the background (0)",
    )
    parser.add_argument("--demo", action="store_true", help="use the built-in scripted stand-in")
    add_demo_home_argument(parser)
    parser.add_argument("--cli", help="path of the claude executable (default: discovered)")
    parser.add_argument("--log-file", help="write logs here instead of stderr")
    parser.add_argument(
        "--otlp",
        nargs="?",
        const="http://localhost:4318",
        metavar="URL",
        help="export traces over OTLP/HTTP (default URL http://localhost:4318; "
        "OTEL_EXPORTER_OTLP_ENDPOINT also switches it on)",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more")

    cluster = parser.add_argument_group(
        "cluster",
        "run the sessions on a cluster's 'claudecode-bridge worker' processes instead of here "
        "(needs the cluster extra); session/list and session/load show the cluster's sessions",
    )
    add_nats_arguments(cluster, required=False)


def _own_stdout() -> int:
    """Keep the real stdout for the protocol; point descriptor 1 (and sys.stdout) at stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


def _pollable(fd: int) -> bool:
    """Make ``fd`` non-blocking and say so, unless it is a regular file (which the event
    loop cannot poll, and which never blocks for long anyway)."""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return False
    os.set_blocking(fd, False)
    return True


async def _chunks(fd: int) -> AsyncIterator[bytes]:
    # No reader thread: a thread blocked in read() would keep the process alive after a
    # signal asked it to stop.
    pollable = _pollable(fd)
    while True:
        if pollable:
            await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, _READ_SIZE)
            except BlockingIOError:
                continue
        else:
            chunk = os.read(fd, _READ_SIZE)
            await anyio.lowlevel.checkpoint()
        if not chunk:
            return
        yield chunk


class _Writer:
    """Whole lines to a descriptor, one writer at a time (frames never interleave)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        _pollable(fd)
        self._lock = anyio.Lock()
        self.broken = False

    async def send(self, data: bytes) -> None:
        if self.broken:
            return
        async with self._lock:
            view = memoryview(data)
            try:
                while view:
                    try:
                        written = os.write(self._fd, view)
                    except BlockingIOError:
                        await anyio.wait_writable(self._fd)
                        continue
                    view = view[written:]
            except OSError:
                self.broken = True  # the editor went away; reading ends soon too


async def serve_stdio(backend: SessionBackend, options: AgentOptions, protocol_fd: int) -> None:
    """Serve ACP for ``backend`` (already entered) on stdin and ``protocol_fd`` (see
    :func:`_own_stdout`) until stdin ends or SIGTERM / SIGINT arrives; every session is
    closed on the way out."""
    writer = _Writer(protocol_fd)
    agent = AcpAgent(backend, writer.send, options)
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    tg.cancel_scope.cancel()  # serve() closes every session on its way out
                    return

        tg.start_soon(stop_on_signal)
        await agent.serve(_chunks(sys.stdin.fileno()))
        tg.cancel_scope.cancel()


async def _serve(backend: Any, options: AgentOptions, protocol_fd: int) -> None:
    async with backend:
        await serve_stdio(backend, options, protocol_fd)


def _cluster_backend(args: argparse.Namespace) -> Any:
    """A gateway to the cluster ``--nats`` names (not started)."""
    from ..cluster import ClusterBackend
    from .worker import cluster_config_from_args, nats_settings_from_args

    return ClusterBackend(
        nats_settings_from_args(args, "bridge-acp-gateway"), cluster_config_from_args(args)
    )


def acp_command(args: argparse.Namespace) -> int:
    """Carry out ``claudecode-bridge acp``; returns the exit status."""
    protocol_fd = _own_stdout()
    from ._setup import configure_logging, configure_tracing

    if args.log_file:
        log = open(args.log_file, "a", encoding="utf-8")  # noqa: SIM115 (lives as long as we do)
        os.chmod(args.log_file, 0o600)
        os.dup2(log.fileno(), 2)
    configure_logging(args.verbose)
    tracer_provider: Any = configure_tracing(args.otlp)
    policy = PermissionPolicy(args.policy)
    if args.nats and args.warm:
        print(
            "claudecode-bridge acp: --warm with --nats: the workers keep the warm CLIs "
            "(give them --warm)",
            file=sys.stderr,
        )
        return 2
    if args.nats and (args.demo or args.cli):
        print(
            "claudecode-bridge acp: --demo and --cli choose the CLI run here; with --nats the "
            "workers run the sessions (give them --cli)",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="claudecode-acp-") as scratch:
        backend: Any
        if args.nats:
            try:
                backend = _cluster_backend(args)
            except ValueError as exc:
                print(f"claudecode-bridge acp: {exc}", file=sys.stderr)
                return 2
        else:
            from ..local import LocalBackend

            env: dict[str, str] = {}
            if args.demo:
                from .demo import DemoHome

                home = DemoHome(scratch, args.demo_home)
                cli_path, env = str(home.cli), home.env
            else:
                try:
                    cli_path = find_cli(args.cli)
                except CLINotFoundError as exc:
                    print(f"claudecode-bridge acp: {exc}. {INSTALL_HINT}", file=sys.stderr)
                    return 1
            config = SessionConfig(
                cli_path=cli_path,
                policy=policy,
                # The editor names every session's directory: the defaults' is where the
                # pooled CLIs start, the one an editor that launched us in its project uses.
                cwd=str(Path(args.cwd or os.getcwd()).resolve()),
                model=args.model,
                permission_mode=args.permission_mode,
                env=env,
                tracer_provider=tracer_provider,
            )
            # With a pool, sessions take their CLI session id from the backend (a pooled
            # CLI's was chosen when it started): see AgentOptions.backend_names_sessions.
            backend = LocalBackend(
                config, idle_timeout=None, warm=args.warm, name_sessions=bool(args.warm)
            )
        options = AgentOptions(
            model=args.model,
            policy=args.policy,
            permission_mode=args.permission_mode,
            cwd=str(Path(args.cwd).resolve()) if args.cwd else None,
            backend_names_sessions=bool(args.warm) and not args.nats,
        )
        try:
            anyio.run(_serve, backend, options, protocol_fd)
        except KeyboardInterrupt:
            return 130
        finally:
            if tracer_provider is not None:
                tracer_provider.shutdown()
    return 0
