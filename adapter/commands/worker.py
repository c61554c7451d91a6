"""``claudecode-bridge worker --nats URL``: run sessions for the cluster until stopped.

SIGTERM / SIGINT stop the worker cleanly: it stops taking sessions, closes the ones it runs
(their subscribers see the end of their events) and removes its heartbeat key. ``--demo``
runs the built-in scripted stand-in instead of the Claude Code CLI, keeping its sessions as
``serve --demo`` does (in a home of its own, ``--demo-home`` to keep it): mirrored like the
CLI's, so history and resume work through a gateway.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..cluster.config import ClusterConfig, NatsSettings
from ..config import SessionConfig
from ..policies import PermissionPolicy
from ._event_loop import add_loop_argument, loop_factory
from ._process import tune_collector
from ._setup import add_demo_home_argument

if TYPE_CHECKING:  # pragma: no cover
    from ..cluster.worker import ClusterWorker

__all__ = (
    "add_nats_arguments",
    "add_session_arguments",
    "add_worker_arguments",
    "add_worker_role_arguments",
    "byte_size",
    "cluster_config_from_args",
    "nats_settings_from_args",
    "seconds",
    "worker_command",
    "worker_from_args",
)


def add_nats_arguments(parser: argparse._ActionsContainer, *, required: bool) -> None:
    """The NATS connection options (shared by ``worker`` and ``serve``)."""
    parser.add_argument(
        "--nats",
        metavar="URL",
        required=required,
        action="append",
        help="NATS server URL (repeat or comma-separate for a cluster); credentials belong in "
        "--nats-creds, not in the URL",
    )
    parser.add_argument("--nats-creds", metavar="FILE", help="NATS credentials file (JWT+NKey)")
    parser.add_argument("--nats-tls-ca", metavar="FILE", help="CA bundle to verify NATS servers")
    parser.add_argument("--nats-tls-cert", metavar="FILE", help="client certificate for NATS")
    parser.add_argument("--nats-tls-key", metavar="FILE", help="client key for NATS")
    parser.add_argument(
        "--nats-prefix",
        default="bridge",
        help="namespace of the bridge's subjects, streams and buckets (default: bridge)",
    )
    defaults = ClusterConfig()
    parser.add_argument(
        "--nats-event-max-bytes",
        type=byte_size,
        default=defaults.event_max_bytes,
        metavar="SIZE",
        help="JetStream store the event stream may use, reserved up front (default: "
        f"{defaults.event_max_bytes >> 20}M); the oldest events go first. Give every worker "
        "and gateway of a deployment the same value",
    )
    parser.add_argument(
        "--nats-transcript-max-bytes",
        type=byte_size,
        default=defaults.transcript_max_bytes,
        metavar="SIZE",
        help="JetStream store the mirrored transcripts may use, reserved up front (default: "
        f"{defaults.transcript_max_bytes >> 20}M); a session whose transcript was dropped "
        "cannot move to another worker",
    )
    parser.add_argument(
        "--nats-replicas",
        type=int,
        choices=(1, 3, 5),
        default=defaults.replicas,
        help="copies JetStream keeps of the bridge's streams and buckets in a NATS cluster "
        "(default: %(default)s; 3 on a 3-node cluster, so that a node failing loses nothing)",
    )
    parser.add_argument(
        "--nats-request-timeout",
        type=seconds,
        default=defaults.request_timeout,
        metavar="S",
        help="seconds a command to a session's worker, or any other NATS request, may take "
        "before the caller gets 'unavailable' (default: %(default)s)",
    )
    parser.add_argument(
        "--nats-create-timeout",
        type=seconds,
        default=defaults.create_timeout,
        metavar="S",
        help="seconds a worker may take to start a session (default: %(default)s)",
    )
    parser.add_argument(
        "--nats-heartbeat",
        type=seconds,
        default=defaults.heartbeat_interval,
        metavar="S",
        help="seconds between a worker's heartbeats (default: %(default)s)",
    )
    parser.add_argument(
        "--nats-heartbeat-ttl",
        type=seconds,
        default=defaults.heartbeat_ttl,
        metavar="S",
        help="seconds without a heartbeat after which a worker that does not answer either is "
        "dead and its sessions move (default: %(default)s; longer than --nats-heartbeat). "
        "Give every worker and gateway of a deployment the same heartbeat values",
    )


def nats_settings_from_args(args: argparse.Namespace, name: str) -> NatsSettings:
    """:class:`NatsSettings` from the parsed NATS options."""
    servers = [url.strip() for value in args.nats or () for url in value.split(",") if url.strip()]
    return NatsSettings(
        servers=servers,
        creds=args.nats_creds,
        tls_ca=args.nats_tls_ca,
        tls_cert=args.nats_tls_cert,
        tls_key=args.nats_tls_key,
        name=name,
    )


def cluster_config_from_args(args: argparse.Namespace) -> ClusterConfig:
    """:class:`ClusterConfig` from the parsed options."""
    limits: dict[str, Any] = {
        "event_max_bytes": args.nats_event_max_bytes,
        "transcript_max_bytes": args.nats_transcript_max_bytes,
        "replicas": args.nats_replicas,
        "request_timeout": args.nats_request_timeout,
        "create_timeout": args.nats_create_timeout,
        "heartbeat_interval": args.nats_heartbeat,
        "heartbeat_ttl": args.nats_heartbeat_ttl,
    }
    linger = getattr(args, "publish_linger", None)  # worker options (serve: with --worker)
    if linger is not None:
        limits["publish_linger"] = linger / 1000
    return ClusterConfig(prefix=args.nats_prefix, **limits)


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def seconds(text: str) -> float:
    """A positive, finite number of seconds (an ``argparse`` type)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of seconds above 0, like 2.5")
    return value


def byte_size(text: str) -> int:
    """``512M``, ``2G``, ``1048576`` (K / M / G / T: binary multiples) as bytes.

    Raises:
        argparse.ArgumentTypeError: not a positive size.
    """
    raw = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = raw[-1:] if raw[-1:] in _UNITS else ""
    number = raw[: len(raw) - len(unit)]
    try:
        value = int(float(number) * _UNITS[unit])
    except (ValueError, OverflowError):
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a size like 512M or 2G")
    return value


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``worker`` sub-command's arguments."""
    add_nats_arguments(parser, required=True)
    add_worker_role_arguments(parser)
    add_session_arguments(parser)
    parser.add_argument("--cwd", help="default working directory of sessions (default: here)")
    parser.add_argument("--model", help="default model")
    parser.add_argument(
        "--policy",
        choices=("supervised", "autonomous", "plan"),
        default="supervised",
        help="default permission policy (supervised: a person approves tools)",
    )
    parser.add_argument("--max-sessions", type=int, default=32, help="sessions at once (32)")
    parser.add_argument("--cli", help="path of the claude executable (default: discovered)")
    parser.add_argument("--demo", action="store_true", help="run the built-in scripted stand-in")
    add_demo_home_argument(parser)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (to stderr)")
    add_loop_argument(parser)


def add_session_arguments(parser: argparse._ActionsContainer) -> None:
    """Session options ``worker`` and ``serve`` share beyond --cwd / --model / --policy /
    --cli / --demo / --max-sessions (which both define themselves)."""
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=900.0,
        help="seconds before an idle session is closed (900; 0: never)",
    )
    parser.add_argument("--permission-mode", help="default CLI permission mode")
    parser.add_argument(
        "--warm",
        type=_non_negative,
        default=0,
        metavar="N",
        help="keep N CLIs started for the default settings, handed out on create and "
        "replaced in the background (0; they count against --max-sessions)",
    )


def add_worker_role_arguments(parser: argparse._ActionsContainer) -> None:
    """What only a process that runs sessions for a cluster takes (``worker``, and ``serve
    --nats URL --worker``)."""
    parser.add_argument("--id", help="this worker's name (default: host name, pid, random)")
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a placement label (repeatable), e.g. repo=api",
    )
    parser.add_argument(
        "--no-resume-lost",
        action="store_true",
        help="do not resume sessions of dead workers here",
    )
    parser.add_argument(
        "--publish-linger",
        type=float,
        default=ClusterConfig().publish_linger * 1000,
        metavar="MS",
        help="while busy, hold a ready batch of events up to this long so that the batches "
        "of other sessions leave in the same write (whole ms, rounded up; default: "
        "%(default)s ms; 0: never)",
    )


def worker_from_args(args: argparse.Namespace, defaults: SessionConfig) -> ClusterWorker:
    """The :class:`~adapter.cluster.ClusterWorker` the parsed options describe (``worker``,
    or ``serve --nats URL --worker``).

    Raises:
        SystemExit: a malformed ``--label``.
        ValueError: a bad prefix or worker id.
    """
    from ..cluster.worker import ClusterWorker

    labels = _labels(args.label)
    settings = nats_settings_from_args(args, name=f"bridge-worker {args.id or ''}".strip())
    return ClusterWorker(
        settings,
        cluster_config_from_args(args),
        defaults,
        worker_id=args.id,
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout or None,
        labels=labels,
        resume_lost=not args.no_resume_lost,
        reap_orphans=True,
        warm=args.warm,
    )


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 or more")
    return value


def _labels(values: list[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise SystemExit(f"--label {value!r}: use KEY=VALUE")
        labels[key] = val
    return labels


def worker_command(args: argparse.Namespace) -> int:
    """Run ``claudecode-bridge worker``; returns the exit status."""
    from ._setup import configure_logging

    configure_logging(args.verbose)
    try:
        factory = loop_factory(args.loop)
    except (RuntimeError, ValueError) as exc:
        print(f"claudecode-bridge worker: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bridge-worker-") as scratch:
        try:
            worker = worker_from_args(args, _defaults(args, Path(scratch)))
        except ValueError as exc:
            print(f"claudecode-bridge worker: {exc}", file=sys.stderr)
            return 2
        try:
            anyio.run(_serve, worker, backend="asyncio", backend_options={"loop_factory": factory})
        except KeyboardInterrupt:
            return 130
        except (OSError, ValueError) as exc:
            print(f"claudecode-bridge worker: {exc}", file=sys.stderr)
            return 1
    return 0


def _defaults(args: argparse.Namespace, scratch: Path) -> SessionConfig:
    cli_path: Any = args.cli
    cwd = args.cwd
    env: dict[str, str] = {}
    if args.demo:
        from .demo import DemoHome

        # As serve --demo: the stand-in writes its transcripts where the CLI would (the
        # home's config directory), so the worker mirrors them for the gateways' history
        # and for --resume on any worker.
        home = DemoHome(scratch, args.demo_home)
        cli_path, env = str(home.cli), home.env
        if cwd is None:
            cwd = str(home.work)
    return SessionConfig(
        cli_path=cli_path,
        cwd=cwd,
        env=env,
        model=args.model,
        permission_mode=args.permission_mode,
        policy=PermissionPolicy(args.policy),
    )


async def _serve(worker: ClusterWorker) -> None:
    async with worker, anyio.create_task_group() as tg:

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    worker.stop()
                    return

        tg.start_soon(on_signal)
        print(f"worker {worker.id} ready", file=sys.stderr, flush=True)
        # As serve does: a full collector pass walks every object of every session the
        # worker runs and holds all their streams at once (20-30 ms at 50 sessions).
        tune_collector()
        await worker.serve_forever()
        tg.cancel_scope.cancel()
