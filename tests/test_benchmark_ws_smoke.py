"""The WebSocket benchmark runs end to end (tiny sizes; figures belong in BENCHMARKS.md)."""

from __future__ import annotations

import pytest

from benchmarks._common import emitter_path
from benchmarks.ws import measure_ws, measure_ws_sessions

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
    fanout, many, listing = results["fanout"], results["sessions"], results["sessions_list"]
    assert 3 * 20 == fanout["latency_samples"]
    assert 2 * 2 * 20 == many["latency_samples"] == listing["latency_samples"]
    assert [2, 2] == [fanout["client_processes"], many["client_processes"]]
    assert listing["clients_watch_list"] and not many["clients_watch_list"]
    for run in (fanout, many, listing):
        assert run["p50_ms"] <= run["p99_ms"] <= run["max_ms"]
        assert run["events_delivered"] > 0 and run["events_per_s"] > 0
        assert 0 <= run["steady_samples"] <= run["latency_samples"]
    assert 4 == results["idle"]["connections"]


def test_ws_sessions_rounds_smoke() -> None:
    """The many-sessions run alone, in rounds on one server: each round times every delta,
    and its timeline (by 250 ms of write time) holds each sample once."""
    results = measure_ws_sessions(
        emitter_path(), sessions=2, rounds=2, lines=20, rate=200.0, processes=2, log=str
    )
    assert 2 == len(results["rounds"]) == len(results["rounds_list"])
    for run in results["rounds"] + results["rounds_list"]:
        assert 2 * 2 * 20 == run["latency_samples"]
        assert run["latency_samples"] == sum(row[1] for row in run["timeline"])
        assert all(row[2] <= row[3] <= run["max_ms"] for row in run["timeline"])
