"""Smoke test of the terminal benchmarks (figures (i)-(k)) so they cannot rot unnoticed.

Tiny sizes, and no timing asserted: only that every figure comes out, positive, that every
byte reached the viewer, and that the report renders them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks.report import markdown
from benchmarks.terminals import (
    _echo_latency,
    _idle_memory,
    _make_file,
    _raw_pty_rate,
    _websocket_rate,
)

pytestmark = [pytest.mark.pty, pytest.mark.server, pytest.mark.slow]


def test_terminal_figures_come_out(
    tmp_path: Path, bench_results: Callable[..., dict[str, Any]]
) -> None:
    path = _make_file(tmp_path, 300_000)
    size = path.stat().st_size
    raw, raw_bytes = anyio.run(_raw_pty_rate, path)
    # The line discipline writes \r\n for each \n.
    assert raw > 0 and raw_bytes == size + path.read_bytes().count(b"\n")
    rates = {screen: _websocket_rate(path, screen=screen) for screen in (False, True)}
    for rate, total in rates.values():
        assert rate > 0 and total >= raw_bytes
    echo = anyio.run(_echo_latency, 5, 2, lambda _: None, True)
    assert 5 == echo["keys"] and 0 < echo["p50_ms"] <= echo["p99_ms"] <= echo["max_ms"]
    assert echo["busy_bytes"] > 0
    memory = anyio.run(_idle_memory, 3)
    assert memory["per_terminal"] > 0
    terminals = {
        "file_bytes": size,
        "throughput": {
            "raw": {"bytes_per_s": raw, "bytes": raw_bytes},
            "raw_after": {"bytes_per_s": raw},
            "screen_off": {"bytes_per_s": rates[False][0], "share_of_raw": 0.5},
            "screen_on": {"bytes_per_s": rates[True][0], "share_of_raw": 0.4},
        },
        "echo": {"screen_off": echo, "screen_on": echo},
        "memory": memory,
    }
    results = bench_results("python -m benchmarks --only terminals", terminals=terminals)
    table = markdown(results)
    assert "Terminal sessions" in table and "keystroke echo" in table
