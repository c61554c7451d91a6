"""Figure (h): the corpus through ``claudecode-bridge acp`` to the official ACP client.

The agent runs as editors run it: a subprocess spawned by the ACP TypeScript client
(``@agentclientprotocol/sdk``, installed in ``tests/acp_agent/client`` by
``scripts/test-deps.d/40-acp-client.sh``), with the benchmark emitter as its CLI and the
autonomous policy. Timed from the ``session/prompt`` request to the client's receipt of the
last turn's notifications (each turn ends with a ``usage_update`` carrying the cost), in
lines of CLI output per second; reported as a share of (d) measured in the same run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from ._common import spread
from .corpus import Corpus
from .throughput import run_adapter

__all__ = ("CLIENT_DIR", "client_available", "measure_acp", "run_acp")

#: The npm project holding the ACP client (shared with the tests).
CLIENT_DIR = Path(__file__).resolve().parent.parent / "tests" / "acp_agent" / "client"


def client_available() -> bool:
    """Node and the installed ACP client are there."""
    sdk = CLIENT_DIR / "node_modules" / "@agentclientprotocol" / "sdk"
    return shutil.which("node") is not None and sdk.is_dir()


def run_acp(corpus: Corpus, cli: str) -> dict[str, Any]:
    """One run of (h): ``{"seconds", "updates", "chunks"}`` as the client reports them."""
    node = shutil.which("node")
    assert node is not None
    with tempfile.TemporaryDirectory(prefix="bench-acp-") as work:
        env = dict(os.environ, BENCH_MODE="corpus", BENCH_CORPUS=str(corpus.path))
        spec = {
            "agent": [
                sys.executable,
                "-m",
                "adapter",
                "acp",
                "--cli",
                cli,
                "--policy",
                "autonomous",
            ],
            "env": env,
            "cwd": work,
            "turns": corpus.turns + 1,
        }
        proc = subprocess.run(
            [node, str(CLIENT_DIR / "bench.mjs"), json.dumps(spec)],
            capture_output=True,
            timeout=600,
            cwd=CLIENT_DIR,
            check=True,
        )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def measure_acp(
    corpus: Corpus,
    cli: str,
    *,
    repeats: int,
    backend: str = "asyncio",
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """(d) and (h) alternately ``repeats`` times; lines/s of each and (h)/(d)."""
    lines = len(corpus.lines)
    d_rates: list[float] = []
    h_rates: list[float] = []
    updates = 0
    for i in range(repeats):
        d = anyio.run(lambda: run_adapter(corpus, cli, encode=False), backend=backend)
        d_rates.append(lines / d.seconds)
        h = run_acp(corpus, cli)
        h_rates.append(lines / h["seconds"])
        updates = int(h["updates"])
        log(f"  repeat {i + 1}/{repeats}: (d) {d_rates[-1]:,.0f}/s (h) {h_rates[-1]:,.0f}/s")
    d_spread, h_spread = spread(d_rates), spread(h_rates)
    return {
        "repeats": repeats,
        "d": {"name": "(c) + adapter -> events at a subscriber", "lines_per_s": d_spread},
        "h": {
            "name": "claudecode-bridge acp -> the ACP client's notifications",
            "lines_per_s": h_spread,
            "updates": updates,
        },
        "ratio": h_spread["median"] / d_spread["median"],
        "best_ratio": h_spread["max"] / d_spread["max"],
    }
