"""Smoke test of benchmark (h) (``python -m benchmarks --only acp``): the code still runs and
reports; no timing is asserted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks._common import emitter_path
from benchmarks.acp import client_available, measure_acp
from benchmarks.corpus import load_corpus
from benchmarks.report import markdown
from tests.support.acp_client import node_client

pytestmark = [pytest.mark.node, pytest.mark.slow]


def test_figure_h_runs_and_reports(
    tmp_path: Path, bench_results: Callable[..., dict[str, Any]]
) -> None:
    node_client()  # skips (fails under CI) without node and the ACP client
    assert client_available()
    corpus = load_corpus(400, seed=2, cache_dir=tmp_path)
    result = measure_acp(corpus, emitter_path(), repeats=1, log=lambda _: None)
    assert result["h"]["updates"] > 0
    assert result["h"]["lines_per_s"]["median"] > 0 and result["ratio"] > 0
    result["corpus_lines"] = len(corpus.lines)
    report = markdown(bench_results("python -m benchmarks --only acp", acp=result))
    assert "(h) >= 50% of (d)" in report and "### (h) The ACP agent" in report
