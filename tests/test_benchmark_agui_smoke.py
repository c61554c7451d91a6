"""The AG-UI benchmarks run (tiny sizes; figures belong in BENCHMARKS.md, not here)."""

from __future__ import annotations

import pytest

from benchmarks._common import emitter_path
from benchmarks.agui import measure_agui, measure_agui_memory, measure_agui_throughput

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_agui_latency_benchmark_smoke() -> None:
    """Two threads in two client processes, two runs each: every stamped delta is measured
    once, every measured run finished."""
    results = measure_agui(emitter_path(), runs=2, lines=20, rate=200.0, log=lambda _: None)
    concurrent = results["concurrent"]
    assert 2 == results["clients"]
    assert 2 == concurrent["finished"]
    assert 40 == concurrent["latency_samples"]
    assert concurrent["p50_ms"] <= concurrent["p99_ms"] <= concurrent["max_ms"]
    assert concurrent["server_cpu_s"] >= 0


def test_agui_latency_stages_smoke() -> None:
    """With the stage probes every measured delta is seen at each stage, in order, fixed
    pacing included."""
    results = measure_agui(
        emitter_path(),
        runs=2,
        lines=20,
        rate=200.0,
        pacing="fixed",
        stages=True,
        log=lambda _: None,
    )
    stages = results["stages"]
    assert 40 == stages["samples"] == results["concurrent"]["latency_samples"]
    for name in ("emitter->read", "read->push", "push->write", "write->client"):
        assert 0 <= stages["stages"][name]["p50_ms"] <= stages["stages"]["total"]["max_ms"]
    assert sum(w["samples"] for w in stages["windows"].values()) >= 40


def test_agui_throughput_benchmark_smoke() -> None:
    """The one-turn corpus streams through /agui to its end (and through ag-ui-claude-sdk
    when the bench extra is installed): the same text and tool calls on both."""
    results = measure_agui_throughput(emitter_path(), lines=2000, repeats=1, log=lambda _: None)
    bridge = results["bridge"]["runs"][0]
    assert "RUN_FINISHED" == bridge["end"]
    assert bridge["text_chars"] > 0 and bridge["tools"] > 0
    assert results["lines"] < 2000 + 200  # whole turns, their result lines left out
    if "sdk" in results:
        sdk = results["sdk"]["runs"][0]
        assert "RUN_FINISHED" == sdk["end"]
        assert sdk["tools"] == bridge["tools"]


def test_agui_memory_benchmark_smoke() -> None:
    results = measure_agui_memory(emitter_path(), threads=3, log=lambda _: None)
    assert 3 == results["threads"]["threads"] == results["sessions"]["threads"]
    assert "per_thread_rss_bytes" in results and "per_thread_traced_bytes" in results
