"""Helpers shared by the benchmark modules: the emitter wrapper, statistics, RSS, machine."""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from . import procfs
from .corpus import CACHE_DIR

__all__ = (
    "Countdown",
    "cpu_of",
    "emitter_path",
    "machine",
    "peak_rss_bytes",
    "percentile",
    "process_cpu_seconds",
    "reset_peak_rss",
    "rss_bytes",
    "spread",
)


class Countdown:
    """An event set once :meth:`done` was called ``count`` times (sessions ready, ...)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.event = anyio.Event()
        if count <= 0:
            self.event.set()

    def done(self) -> None:
        """Count one down."""
        self.count -= 1
        if self.count <= 0:
            self.event.set()

    async def wait(self) -> None:
        """Wait until the count reaches zero."""
        await self.event.wait()


EMITTER = Path(__file__).resolve().parent / "emitter.py"


def emitter_path(cache_dir: Path = CACHE_DIR) -> str:
    """An executable that runs the emitter with this interpreter (usable as ``cli_path``)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / "fake-claude"
    script = f'#!/bin/sh\nexec "{sys.executable}" -S "{EMITTER}" "$@"\n'
    if not path.exists() or path.read_text() != script:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(script)
        tmp.chmod(0o755)
        tmp.replace(path)
    return str(path)


def spread(values: Sequence[float]) -> dict[str, float]:
    """``{"min", "median", "max"}`` of ``values``."""
    return {
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of already sorted values, nearest-rank."""
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[index]


def rss_bytes() -> int:
    """This process's resident set size now (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def reset_peak_rss() -> bool:
    """Reset this process's RSS high-water mark (``VmHWM``); False when the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def peak_rss_bytes() -> int:
    """This process's RSS high-water mark (``VmHWM``) since start or :func:`reset_peak_rss`."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process so far (Linux ``/proc``)."""
    return sum(procfs.cpu_times(pid))


def cpu_of(pids: Sequence[int]) -> float:
    """CPU seconds of ``pids`` so far, together (a process that is gone counts 0)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += process_cpu_seconds(pid)
    return total


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _versions() -> Mapping[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for name in ("msgspec", "anyio", "claude-agent-sdk", "claudecode-bridge"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> dict[str, Any]:
    """nproc, CPU model, memory, OS, Python and package versions."""
    try:
        with open("/proc/meminfo") as fh:
            mem_kb = int(fh.readline().split()[1])
    except (OSError, ValueError, IndexError):
        mem_kb = 0
    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gib": round(mem_kb / 1024 / 1024, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "packages": dict(_versions()),
    }


def serve_paced(
    cli: str, lines: int, rate: float, *, max_sessions: int, backlog: int | None = None
) -> None:
    """In a benchmark's server child: ``create_app`` under uvicorn over the paced emitter
    (autonomous sessions), on a free loopback port that is printed first; runs until
    SIGTERM. ``backlog``: listen before printing the port, with that queue length."""
    import socket

    import uvicorn

    from adapter import PermissionPolicy, SessionConfig
    from adapter.commands._process import tune_collector
    from adapter.server import ServerSettings, create_app

    env = {"BENCH_MODE": "paced", "BENCH_LINES": str(lines), "BENCH_RATE": str(rate)}
    defaults = SessionConfig(
        cli_path=cli,
        env=env,
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 2, "kill_after": 2},
    )
    settings = ServerSettings(session_defaults=defaults, max_sessions=max_sessions)
    app = create_app(settings=settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    if backlog is not None:
        sock.listen(backlog)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, lifespan="on", log_config=None, log_level="warning")
    tune_collector()  # as ``claudecode-bridge serve`` does before it serves
    uvicorn.Server(config).run(sockets=[sock])
