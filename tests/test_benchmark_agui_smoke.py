"""The AG-UI latency benchmark runs (tiny sizes; figures belong in BENCHMARKS.md, not here)."""

from __future__ import annotations

import pytest

from benchmarks._common import emitter_path
from benchmarks.agui import measure_agui

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_agui_benchmark_smoke() -> None:
    """Two threads, two runs each: every stamped delta is measured once."""
    results = measure_agui(emitter_path(), runs=2, lines=20, rate=200.0, log=lambda _: None)
    concurrent = results["concurrent"]
    assert 40 == concurrent["latency_samples"]
    assert concurrent["p50_ms"] <= concurrent["p99_ms"] <= concurrent["max_ms"]
