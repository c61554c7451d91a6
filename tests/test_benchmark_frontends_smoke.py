"""The front ends' CPU-per-line benchmark runs (tiny corpus; figures belong in BENCHMARKS.md)."""

from __future__ import annotations

import pytest

from benchmarks.frontends import KINDS, measure_frontends

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_frontends_benchmark_smoke() -> None:
    """Every path streams the one-turn corpus to its end: the front ends deliver frames, and
    every figure comes out."""
    results = measure_frontends(lines=2000, repeats=1, kinds=KINDS)
    assert 0 < results["lines"] < 2000 + 200
    for kind in KINDS:
        (run,) = results[kind]["runs"]
        assert run["seconds"] > 0 and run["cpu_s"] >= 0
        if kind != "adapter":
            assert run["frames"] > 0, kind
