"""Worker processes of the real-CLI cluster tests: each with a HOME of its own."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from adapter.cluster import (
    ClusterConfig,
    die_with_parent,
)

from .cli import CLIEnv


def worker_env(cli_env: CLIEnv, home: Path) -> dict[str, str]:
    """The environment of a worker whose CLI keeps its files in ``home`` (created here):
    nothing shared on disk between workers."""
    home.mkdir()
    return {**cli_env(HOME=str(home)), "PYTHONUNBUFFERED": "1"}


@contextlib.contextmanager
def worker(
    name: str,
    url: str,
    config: ClusterConfig,
    cli: str,
    env: dict[str, str],
    log: Path,
    *extra: str,
) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "adapter",
                "worker",
                "--nats",
                url,
                "--nats-prefix",
                config.prefix,
                "--id",
                name,
                "--cli",
                cli,
                "--policy",
                "autonomous",
                "-v",
                *extra,
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
            cwd=env["HOME"],
            start_new_session=True,
            # Gone with this process even when it dies without running its cleanup.
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
