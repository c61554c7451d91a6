"""``claudecode-bridge serve``: the HTTP server (every front end) under uvicorn.

Secure by default: it binds 127.0.0.1; binding any other address needs a token (``--token``,
better ``CLAUDECODE_BRIDGE_TOKEN`` or ``--token-file``, since a command line is visible to
every user of the machine) unless ``--insecure-no-auth`` says otherwise. With ``--demo``,
or with a clear notice when no Claude Code CLI is found, sessions run the built-in scripted
stand-in (:mod:`adapter.commands.demo`).

Shutdown on SIGINT / SIGTERM is graceful: streams are told first (runs end with an error
event coded ``shutdown``), uvicorn stops accepting and drains connections, then every
session is closed and its CLI reaped. A second SIGINT skips the draining, never the reaping.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import ipaddress
import os
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from claudecode import CLINotFoundError, find_cli

from ..config import SessionConfig
from ..policies import PermissionPolicy
from ..server.agents import AGENTS_ENV_VAR, Agent, AgentsFileError, load_agents
from ._event_loop import add_loop_argument, loop_factory
from ._event_loop import run as run_loop
from ._identity_args import add_identity_arguments, has_identity, identity_settings
from ._process import tune_collector
from ._setup import add_demo_home_argument

__all__ = (
    "TOKEN_ENV_VAR",
    "add_serve_arguments",
    "is_loopback",
    "serve_command",
    "uvicorn_config",
)

#: The environment variable ``serve`` reads its bearer token from.
TOKEN_ENV_VAR = "CLAUDECODE_BRIDGE_TOKEN"


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` sub-command's arguments."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (8000; 0 picks a free one)")
    parser.add_argument("--cwd", help="working directory of the sessions (default: here)")
    parser.add_argument("--model", help="model the sessions use")
    parser.add_argument(
        "--policy",
        choices=("supervised", "autonomous", "plan"),
        default="supervised",
        help="permission policy: ask before tools that change things (supervised, the "
        "default), allow everything (autonomous), or plan mode",
    )
    parser.add_argument(
        "--agents",
        metavar="FILE",
        help="a TOML file of named agents (cwd, model, policy, system prompt, tools, MCP "
        "servers each), offered as CopilotKit agent ids (default: "
        f"${AGENTS_ENV_VAR}; none: one agent, 'default', with the options here)",
    )
    parser.add_argument(
        "--token",
        help=f"require 'Authorization: Bearer TOKEN' (prefer ${TOKEN_ENV_VAR} or --token-file: "
        "a command line is visible to other users)",
    )
    parser.add_argument("--token-file", help="read the bearer token from this file")
    parser.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call the server (repeatable), e.g. http://localhost:5173",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a name clients reach the server by, besides localhost, 127.0.0.1, [::1] and the "
        "bound address (repeatable): HOST for any port or HOST:PORT; other Host headers are "
        "refused (421), which stops DNS rebinding",
    )
    parser.add_argument("--max-sessions", type=int, default=32, help="live sessions at most (32)")
    parser.add_argument(
        "--max-body", type=int, default=8 * 1024 * 1024, help="largest request body in bytes"
    )
    parser.add_argument(
        "--state-dir",
        help="where threads and other state survive restarts (default: "
        "$XDG_STATE_HOME/claudecode-bridge)",
    )
    parser.add_argument(
        "--on-disconnect",
        choices=("interrupt", "keep"),
        default="interrupt",
        help="what a client that disconnects mid-run does to the Claude turn (interrupt)",
    )
    parser.add_argument(
        "--no-terminals",
        action="store_true",
        help="serve no terminal sessions (a terminal is a shell as the user running the server)",
    )
    parser.add_argument(
        "--terminal-input",
        choices=("all", "first"),
        default="all",
        help="who may type into a terminal session: all its viewers, or only the first (all)",
    )
    parser.add_argument("--demo", action="store_true", help="use the built-in scripted stand-in")
    add_demo_home_argument(parser)
    parser.add_argument("--cli", help="path of the claude executable (default: discovered)")
    parser.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="allow binding a non-loopback address without a token",
    )
    parser.add_argument(
        "--otlp",
        nargs="?",
        const="http://localhost:4318",
        metavar="URL",
        help="export traces over OTLP/HTTP (default URL http://localhost:4318)",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="-v: HTTP access log; -vv: debug"
    )
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        help="what is logged to stderr (info: sessions, connections, permission decisions, "
        "errors; never prompts, tool input or tokens)",
    )
    parser.add_argument(
        "--log-format",
        choices=("console", "json"),
        default="console",
        help="readable lines (console, the default) or one JSON object per line",
    )
    add_loop_argument(parser)
    add_identity_arguments(parser)
    from .worker import (
        add_nats_arguments,
        add_session_arguments,
        add_worker_role_arguments,
    )

    add_session_arguments(parser)
    cluster = parser.add_argument_group(
        "cluster",
        "serve sessions that run on 'claudecode-bridge worker' processes (needs the cluster "
        "extra); this server then keeps no session state and runs no CLI, unless --worker "
        "makes it one of the workers too",
    )
    add_nats_arguments(cluster, required=False)
    cluster.add_argument(
        "--worker",
        action="store_true",
        help="with --nats: also run sessions here, as one of the cluster's workers (the "
        "session options above apply to them)",
    )
    add_worker_role_arguments(cluster)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _token(args: argparse.Namespace) -> str | None:
    if args.token_file:
        token = Path(args.token_file).read_text(encoding="utf-8").strip()
        if not token:
            raise SystemExit(f"claudecode-bridge serve: {args.token_file} is empty")
        return token
    if args.token:
        print(
            f"note: a token on the command line is visible to other users; prefer "
            f"${TOKEN_ENV_VAR} or --token-file",
            file=sys.stderr,
        )
        return str(args.token)
    return os.environ.get(TOKEN_ENV_VAR) or None


def _state_dir(args: argparse.Namespace) -> Path:
    if args.state_dir:
        return Path(args.state_dir)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(base) / "claudecode-bridge"


def _agents(args: argparse.Namespace) -> tuple[Agent, ...]:
    """The agents of ``--agents`` (or ``$CLAUDECODE_BRIDGE_AGENTS``); none without a file.
    A gateway that runs no session leaves the directories to its workers to check."""
    path = args.agents or os.environ.get(AGENTS_ENV_VAR)
    if not path:
        return ()
    return load_agents(path, check_dirs=not (args.nats and not args.worker))


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    # Listening now: connections made as soon as the URL is printed wait in the backlog
    # until uvicorn accepts them.
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _bound_name(host: str, sock: socket.socket) -> tuple[str, ...]:
    """``--host`` as an allowed host when it is a name (``--host box.lan``: clients use that
    name); an address needs nothing, the server knows the one a connection arrived on."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return (f"{host}:{sock.getsockname()[1]}",)
    return ()


def _log_level(args: argparse.Namespace) -> str:
    """``--log-level``, else info (debug with -vv): a server says what it does."""
    return str(args.log_level or ("debug" if args.verbose > 1 else "info"))


def _bind_failure(host: str, port: int, exc: OSError) -> str:
    """One line saying why the address could not be bound and what to do."""
    where = _url(host.strip("[]"), port).removeprefix("http://")
    if exc.errno == errno.EADDRINUSE:
        return (
            f"claudecode-bridge serve: {where} is already in use; pick another port with "
            "--port N (or --port 0 for any free one)"
        )
    return f"claudecode-bridge serve: cannot listen on {where}: {exc.strerror or exc}"


def serve_command(args: argparse.Namespace) -> int:
    """Carry out ``claudecode-bridge serve``; returns the exit status."""
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        print(
            "claudecode-bridge serve needs the server extra: "
            "pip install 'claudecode-bridge[server]'",
            file=sys.stderr,
        )
        return 2
    from ._setup import configure_logging, configure_tracing

    level = args.log_level or ("debug" if args.verbose > 1 else "info")
    # uvicorn's own lines (startup errors, protocol trouble) go through the same handler.
    configure_logging(
        json_logs=args.log_format == "json",
        level_name=level,
        also=("uvicorn.error", "uvicorn.access"),
    )
    token = _token(args)
    if (
        token is None
        and not has_identity(args)
        and not is_loopback(args.host)
        and not args.insecure_no_auth
    ):
        print(
            f"claudecode-bridge serve: refusing to bind {args.host} without a token: anyone "
            f"who can reach it could run commands on this machine. Set ${TOKEN_ENV_VAR} (or "
            "--token-file), or pass --insecure-no-auth if something in front of the server "
            "authenticates.",
            file=sys.stderr,
        )
        return 2
    if args.worker and not args.nats:
        print("claudecode-bridge serve: --worker needs --nats URL", file=sys.stderr)
        return 2
    if args.nats and not args.worker and args.warm:
        # A gateway runs no CLI: the workers keep the warm ones.
        print("claudecode-bridge serve: --warm with --nats needs --worker", file=sys.stderr)
        return 2
    if not args.worker and (args.id or args.label or args.no_resume_lost):
        print(
            "claudecode-bridge serve: --id, --label and --no-resume-lost need --nats URL --worker",
            file=sys.stderr,
        )
        return 2
    try:
        agents = _agents(args)
    except AgentsFileError as exc:
        print(f"claudecode-bridge serve: {exc}", file=sys.stderr)
        return 2
    try:
        factory = loop_factory(args.loop)
    except (RuntimeError, ValueError) as exc:
        print(f"claudecode-bridge serve: {exc}", file=sys.stderr)
        return 2
    tracer_provider = configure_tracing(args.otlp)
    try:
        with tempfile.TemporaryDirectory(prefix="claudecode-demo-") as scratch:
            demo = bool(args.demo)
            cli_path: str | None = None
            if args.nats and not args.worker:
                demo = False  # the workers run the sessions (and say whether they are demos)
            elif not demo:
                try:
                    cli_path = find_cli(args.cli)
                except CLINotFoundError as exc:
                    print(
                        f"notice: {exc}\nnotice: serving the built-in DEMO instead (a scripted "
                        "stand-in, not Claude); install the Claude Code CLI for the real "
                        "thing.",
                        file=sys.stderr,
                    )
                    demo = True
            cwd = args.cwd
            env: dict[str, str] = {}
            if demo:
                from .demo import DemoHome

                home = DemoHome(scratch, args.demo_home)
                cli_path, env = str(home.cli), home.env
                if cwd is None:
                    cwd = str(home.work)
            defaults = SessionConfig(
                cli_path=cli_path,
                cwd=cwd,
                env=env,
                model=args.model,
                permission_mode=args.permission_mode,
                policy=PermissionPolicy(args.policy),
                tracer_provider=tracer_provider,
            )
            try:
                sock = _bind(args.host, args.port)
            except OSError as exc:
                print(_bind_failure(args.host, args.port, exc), file=sys.stderr)
                return 2
            try:
                serving = _serve(args, sock, defaults, token=token, demo=demo, agents=agents)
                return run_loop(serving, factory)
            except KeyboardInterrupt:
                return 130
            except ConnectionError as exc:
                if not args.nats:
                    raise
                # NATS refused us (NatsConnectError): credentials, TLS. Say so, no traceback.
                print(f"claudecode-bridge serve: {exc}", file=sys.stderr)
                return 1
            finally:
                sock.close()
    finally:
        if tracer_provider is not None:
            tracer_provider.shutdown()


async def _serve(
    args: argparse.Namespace,
    sock: socket.socket,
    defaults: SessionConfig,
    *,
    token: str | None,
    demo: bool,
    agents: tuple[Agent, ...],
) -> int:
    from ..local import LocalBackend
    from ..server import ServerSettings, create_app

    try:
        identities = identity_settings(args)
    except ValueError as exc:
        print(f"claudecode-bridge serve: {exc}", file=sys.stderr)
        return 2
    settings = ServerSettings(
        **identities,
        token=token,
        cors_origins=tuple(args.cors_origin),
        allowed_hosts=(*args.allowed_host, *_bound_name(args.host, sock)),
        max_body_bytes=args.max_body,
        demo=demo,
        state_dir=_state_dir(args),
        session_defaults=defaults,
        agents=agents,
        max_sessions=args.max_sessions,
        warm=args.warm,
        agui_disconnect=args.on_disconnect,
        terminals=not args.no_terminals,
        terminal_input=args.terminal_input,
    )
    backend: Any
    # A gateway that is also a worker: the worker runs next to the front ends, with its own
    # NATS connection, and is reached like any other worker (through NATS), so placement,
    # failover and the other gateways treat it as one of the cluster's workers.
    worker: Any = contextlib.nullcontext()
    if args.nats:
        from ..cluster import ClusterBackend
        from .worker import (
            cluster_config_from_args,
            nats_settings_from_args,
            worker_from_args,
        )

        try:
            if args.worker:
                worker = worker_from_args(args, defaults)
            backend = ClusterBackend(
                nats_settings_from_args(args, "bridge-gateway"), cluster_config_from_args(args)
            )
        except ValueError as exc:
            print(f"claudecode-bridge serve: {exc}", file=sys.stderr)
            return 2
    else:
        backend = LocalBackend(
            defaults,
            max_sessions=args.max_sessions,
            idle_timeout=args.idle_timeout or None,
            warm=args.warm,
        )
    async with worker, backend:
        try:
            app = create_app(backend, settings)
        except (ValueError, OSError) as exc:  # a malformed --allowed-host, a bad users file,
            print(f"claudecode-bridge serve: {exc}", file=sys.stderr)  # an unwritable audit log
            return 2
        context = app.state.bridge
        if hasattr(signal, "SIGHUP"):
            _on_sighup(context)
        config = uvicorn_config(app, verbose=args.verbose, level=_log_level(args))
        loop = asyncio.get_running_loop()
        server = _make_server_class()(
            config, lambda: loop.call_soon_threadsafe(context.begin_shutdown)
        )
        host, port = sock.getsockname()[:2]
        base = _url(args.host if args.host != "0.0.0.0" else host, port)
        lines = [f"claudecode-bridge serving on {base}" + (" (DEMO)" if demo else "")]
        # Paths under /ws are WebSocket routes: print the URL a client connects to.
        ws_base = "ws" + base.removeprefix("http")
        lines += [
            f"  {label + ':':<14} {ws_base if path.split('/')[1] == 'ws' else base}{path}"
            for label, path in context.endpoints
        ]
        if agents:
            lines.append(f"  {'agents:':<14} {', '.join(agent.name for agent in agents)}")
        if args.worker:
            lines.append(f"  {'worker:':<14} {worker.id} (runs sessions for the cluster here)")
        if context.authenticator is not None:
            lines.append("  every request needs 'Authorization: Bearer <token>' of a user")
        if settings.terminals and any(p == "/api/terminals" for _, p in context.endpoints):
            who = (
                "whoever can reach the server can use it"
                if context.authenticator is None
                else "for the users allowed terminals"
            )
            lines.append(
                f"  terminals run a shell as this user ({who}); --no-terminals turns them off"
            )
        print("\n".join(lines), flush=True)
        tune_collector()
        await server.serve(sockets=[sock])
    return 0


def _on_sighup(context: Any) -> None:
    """SIGHUP reads the users file again (it is also re-read when it changes) and opens the
    audit log's path again (after ``logrotate`` moved the file away). Without either, SIGHUP
    keeps its default (a hang-up ends the server)."""
    authenticator = context.authenticator
    audit = context.audit if context.audit.path is not None else None
    if authenticator is None and audit is None:
        return

    def hang_up() -> None:
        if authenticator is not None:
            authenticator.reload()
        if audit is not None:
            audit.reopen()

    asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, hang_up)


def uvicorn_config(
    app: Any,
    *,
    verbose: int = 0,
    level: str | None = None,
    ws_ping_interval: float = 20.0,
    ws_ping_timeout: float = 20.0,
) -> Any:
    """The ``uvicorn.Config`` ``serve`` runs ``app`` with.

    The HTTP implementation is h11 whatever else is installed: uvicorn's default picks
    httptools when some other package brought it along, so the server's HTTP layer (its
    parser, its answers to bad requests) would change with the environment. h11 comes with
    uvicorn; httptools saved ~2% of the server's CPU per streamed AG-UI event
    (BENCHMARKS.md), not worth a second HTTP layer to test. The event loop is ``serve``'s
    own (``--loop``, :mod:`adapter.commands._event_loop`: uvloop when installed), not uvicorn's
    choice; WebSockets use the ``websockets`` package of the ``server`` extra, through
    :class:`~adapter.commands._ws_protocol.WebSocketProtocol` (uvicorn's, with the typed close
    for a client that stops reading). The keepalive (a ping every ``ws_ping_interval``
    seconds, ``ws_ping_timeout`` to answer) is uvicorn's default.
    """
    import uvicorn

    from ._ws_protocol import WebSocketProtocol

    return uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,
        # uvicorn's "info" lines mostly repeat ours (a connection accepted): with -v only.
        log_level="debug" if level == "debug" else "info" if verbose else "warning",
        access_log=verbose > 0,
        timeout_graceful_shutdown=10,
        server_header=False,
        http="h11",
        ws=WebSocketProtocol,
        ws_ping_interval=ws_ping_interval,
        ws_ping_timeout=ws_ping_timeout,
    )


def _make_server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server with our signal handling: tell the streams first, and no
        re-raising of the signal afterwards (a graceful stop exits 0)."""

        def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None]) -> None:
            super().__init__(config)
            self._on_exit = on_exit

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            else:
                self.should_exit = True
            self._on_exit()

    return Server
