"""The WebSocket benchmark runs end to end (tiny sizes; figures belong in BENCHMARKS.md)."""

from __future__ import annotations

import pytest

from benchmarks._common import emitter_path
from benchmarks.ws import measure_ws

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_ws_benchmark_smoke() -> None:
    """A server child, clients in two child processes: every stamped delta of every client
    is timed once, and the idle connections are counted."""
    results = measure_ws(
        emitter_path(),
        fanout_clients=3,
        sessions=2,
        lines=20,
        rate=200.0,
        idle=4,
        processes=2,
        log=lambda _: None,
    )
    fanout, many = results["fanout"], results["sessions"]
    assert 3 * 20 == fanout["latency_samples"]
    assert 2 * 2 * 20 == many["latency_samples"]
    assert [2, 2] == [fanout["client_processes"], many["client_processes"]]
    for run in (fanout, many):
        assert run["p50_ms"] <= run["p99_ms"] <= run["max_ms"]
        assert run["events_delivered"] > 0 and run["events_per_s"] > 0
        assert 0 <= run["steady_samples"] <= run["latency_samples"]
    assert 4 == results["idle"]["connections"]
