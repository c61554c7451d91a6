"""The servers the AG-UI benchmarks measure, each in a child process of its own.

``python -m benchmarks.agui serve bridge|sdk CLI ENV`` serves on a free loopback port (printed
first) until SIGTERM: ``bridge`` is a real :func:`adapter.server.create_app` application over
``CLI`` (the emitter) with the session environment ``ENV`` (JSON; ``$BENCH_SERVER_PROFILE``:
under cProfile, its stats written there at exit); ``sdk`` is
``ag-ui-claude-sdk``'s ``ClaudeAgentAdapter`` behind its own ``add_claude_fastapi_endpoint``.
Both run under uvicorn with the same settings (:func:`uvicorn_stack`) and the collector set
up as ``claudecode-bridge serve`` does. :class:`ServerProcess` starts one from the
benchmark's process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import procfs

__all__ = (
    "ServerProcess",
    "cpu_seconds",
    "serve_bridge",
    "serve_sdk",
    "uvicorn_stack",
)

_ROOT = Path(__file__).resolve().parents[1]
#: Listen backlog: 50 clients connecting at once must not wait for a SYN retry.
_BACKLOG = 2048


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of process ``pid`` so far."""
    return procfs.cpu_times(pid)


def uvicorn_stack(choice: str = "asyncio") -> dict[str, str]:
    """The event loop and HTTP implementation uvicorn runs with: ``asyncio`` (the standard
    library's loop and h11: what ``claudecode-bridge serve`` runs with, whatever is
    installed; the default here), ``httptools`` (the standard loop and httptools) or
    ``auto`` (uvicorn's own choice: uvloop and httptools if installed, as the ``bench``
    extra does along with ``ag-ui-claude-sdk``)."""
    import importlib.util

    if choice == "asyncio":
        return {"loop": "asyncio", "http": "h11"}
    if choice == "httptools":
        return {"loop": "asyncio", "http": "httptools"}
    have = importlib.util.find_spec
    return {
        "loop": "uvloop" if have("uvloop") else "asyncio",
        "http": "httptools" if have("httptools") else "h11",
    }


def _serve_app(app: Any) -> None:
    """Serve ``app`` on a free loopback port (printed first, after ``listen``) until SIGTERM,
    with :func:`uvicorn_stack` (``BENCH_UVICORN=asyncio|httptools|auto``; both servers alike)."""
    import socket

    import uvicorn

    from adapter.commands._process import tune_collector
    from adapter.commands._ws_protocol import WebSocketProtocol

    stack = uvicorn_stack(os.environ.get("BENCH_UVICORN", "asyncio"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(_BACKLOG)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_config=None,
        log_level="warning",
        loop=stack["loop"],
        http=stack["http"],
        ws=WebSocketProtocol,  # as ``serve`` (its permessage-deflate)
    )
    # uvicorn raises the signal it caught again once it has shut down: with a handler of
    # our own that is a clean exit, so ``atexit`` hooks (the stage probes' dump) run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    tune_collector()  # as ``claudecode-bridge serve`` does before it serves (both servers alike)
    uvicorn.Server(config).run(sockets=[sock])


def serve_bridge(cli: str, env: dict[str, str]) -> None:
    """The bridge's application over the emitter ``cli`` (stage probes with ``--stages``)."""
    from adapter import PermissionPolicy, SessionConfig
    from adapter.server import ServerSettings, create_app

    from .agui_stages import STAGES_ENV, install_server_probes

    if os.environ.get(STAGES_ENV):
        install_server_probes(os.environ[STAGES_ENV])
    if os.environ.get("BENCH_SERVER_PROFILE"):
        # The whole server under cProfile, written at exit (SIGTERM exits cleanly).
        import atexit
        import cProfile

        profiler = cProfile.Profile()
        atexit.register(profiler.dump_stats, os.environ["BENCH_SERVER_PROFILE"])
        atexit.register(profiler.disable)
        profiler.enable()
    defaults = SessionConfig(
        cli_path=cli,
        env=env,
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 2, "kill_after": 2},
    )
    _serve_app(create_app(settings=ServerSettings(session_defaults=defaults, max_sessions=500)))


def serve_sdk(cli: str, env: dict[str, str]) -> None:
    """``ag-ui-claude-sdk`` over the emitter ``cli``."""
    import contextlib
    import logging

    from ag_ui_claude_sdk import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
        ClaudeAgentAdapter,
        add_claude_fastapi_endpoint,
    )
    from fastapi import FastAPI  # type: ignore[import-not-found, unused-ignore]

    logging.getLogger("ag_ui_claude_sdk").setLevel(logging.WARNING)
    adapter = ClaudeAgentAdapter(name="bench", options={"cli_path": cli, "env": env})

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        yield
        await adapter.shutdown()

    app = FastAPI(lifespan=lifespan)
    add_claude_fastapi_endpoint(app=app, adapter=adapter, path="/agui")
    _serve_app(app)


class ServerProcess:
    """``python -m benchmarks.agui serve KIND CLI ENV`` as a child process (``extra_env``
    added to its own environment)."""

    def __init__(
        self,
        kind: str,
        cli: str,
        env: dict[str, str],
        extra_env: Mapping[str, str] = {},
        *,
        root: Path = _ROOT,
    ) -> None:
        # ``root``: the checkout whose code the server runs (another one: a baseline).
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.agui", "serve", kind, cli, json.dumps(env)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
            env={**os.environ, **extra_env, "PYTHONPATH": str(root)},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip():
            self.stop()
            raise RuntimeError(f"the {kind} server did not start")
        self.url = f"http://127.0.0.1:{int(line)}"

    def cpu(self) -> float:
        """CPU seconds (user + system) so far, to the nanosecond (:func:`procfs.cpu_seconds`)."""
        return procfs.cpu_seconds(self.proc.pid)

    def cpu_split(self) -> tuple[float, float]:
        """(user, system) CPU seconds so far."""
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        """SIGTERM, then wait (SIGKILL after a minute)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
