"""Smoke test of the benchmark code (``python -m benchmarks``), so it cannot rot unnoticed.

Runs the corpus generator and figures (a) and (b) on a tiny corpus, in-process. No timing is
asserted: only that the figures come out, positive, and that every line was decoded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.corpus import END_UUID, final_result_line, generate_lines, load_corpus
from benchmarks.report import markdown
from benchmarks.throughput import _figures, bench_msgspec, bench_protocol
from claudecode import ResultMessage, decode_line
from claudecode.messages import MalformedLine, UnknownMessage


def test_corpus_is_deterministic_and_typed(tmp_path: Path) -> None:
    corpus = load_corpus(400, seed=3, cache_dir=tmp_path)
    again = load_corpus(400, seed=3, cache_dir=tmp_path)  # from the cache this time
    assert corpus.lines == again.lines == generate_lines(400, seed=3)[0]
    assert len(corpus.lines) >= 400 and corpus.turns >= 1
    assert corpus.path.read_bytes() == corpus.data
    kinds = {json.loads(line)["type"] for line in corpus.lines}
    assert {"system", "stream_event", "assistant", "user", "result"} <= kinds
    for number, line in enumerate(corpus.lines, 1):
        message = decode_line(line, number)
        assert not isinstance(message, MalformedLine | UnknownMessage), message
    end = decode_line(final_result_line(123).rstrip(b"\n"))
    assert isinstance(end, ResultMessage) and end.uuid == END_UUID
    assert end.result == "bench-start=123"


def test_corpus_writes_a_blocks_assistant_line_before_its_stop(tmp_path: Path) -> None:
    # The real CLI's order (tests/fixtures/transcripts): content_block_start, deltas, the
    # block's ``assistant`` line, then content_block_stop.
    corpus = load_corpus(400, seed=3, cache_dir=tmp_path)
    kinds = []
    for line in corpus.lines:
        obj = json.loads(line)
        if obj["type"] == "stream_event":
            kinds.append(obj["event"]["type"])
        elif obj["type"] == "assistant":
            kinds.append("assistant")
    stops = [i for i, kind in enumerate(kinds) if kind == "content_block_stop"]
    assert stops
    for i in stops:
        assert kinds[i - 1] == "assistant", kinds[i - 3 : i + 1]
    assert kinds.count("assistant") == len(stops)


def test_figures_a_and_b(tmp_path: Path, bench_results: Callable[..., dict[str, Any]]) -> None:
    corpus = load_corpus(300, seed=1, cache_dir=tmp_path)
    a = bench_msgspec(corpus.lines)
    b, messages = bench_protocol(corpus.data, chunk=4096)
    assert a > 0 and b > 0
    assert messages == len(corpus.lines)
    figures = {key: _figures(corpus, [seconds]) for key, seconds in (("a", a), ("b", b))}
    for figure in figures.values():
        assert figure["lines_per_s"]["median"] > 0 and figure["mb_per_s"]["median"] > 0
    throughput = {
        "repeats": 1,
        "backend": "asyncio",
        "corpus": {"lines": len(corpus.lines), "bytes": corpus.nbytes, "turns": corpus.turns},
        "ratios": {"b/a": a / b},
        **{k: {"name": k, **v} for k, v in figures.items()},
    }
    results = bench_results(throughput=throughput)
    table = markdown(results)
    assert "| (a) |" in table and "| (b) |" in table


def test_history_benchmark_and_ws_report(bench_results: Callable[..., dict[str, Any]]) -> None:
    """The history figures come out (tiny sizes), and the WebSocket section renders."""
    from benchmarks.report import markdown, targets
    from benchmarks.ws import measure_history

    history = measure_history(files=3, big_mb=1, log=lambda _: None)
    assert 3 == history["list_many"]["files"] and history["big"]["bytes"] >= 1_000_000
    for row in (history["list_many"], history["big"]["list"], history["big"]["load"]):
        assert row["seconds"] > 0 and row["peak_rss"] > 0
    run = {"sessions": 2, "clients_per_session": 2, "events_delivered": 10, "events_per_s": 5.0}
    run |= {"seconds": 2.0, "latency_samples": 8, "p50_ms": 1.0, "p99_ms": 2.0, "max_ms": 3.0}
    ws = {
        "lines_per_session": 10,
        "rate": 100.0,
        "fanout": {**run, "sessions": 1, "server_cpu_s": 0.1},
        "sessions": {**run, "server_cpu_s": 0.2},
        "idle": {
            "connections": 4,
            "rss_before": 1,
            "rss_after": 4097,
            "per_connection_bytes": 1024,
        },
    }
    results = bench_results(ws=ws, history=history)
    text = markdown(results)
    assert "### WebSocket" in text and "### Session history" in text
    assert [True, True] == [ok for _, _, ok in targets(results)]


@pytest.mark.nats
@pytest.mark.slow
def test_cluster_figures_smoke() -> None:
    """The NATS-hop benchmark runs end to end on a tiny size and every figure comes out."""
    from benchmarks.cluster import markdown, measure_cluster

    result = measure_cluster(size="smoke", log=lambda *_: None)
    assert ["local", "nats"] == [row["backend"] for row in result["ws"]]
    assert all(row["samples"] == 2 * 5 for row in result["ws"])
    assert set(result["ws_added"]) == {
        "p50_ms",
        "p99_ms",
        "steady_p50_ms",
        "steady_p99_ms",
        "streaming_p50_ms",
        "streaming_p99_ms",
    }
    assert all(row["steady"]["samples"] <= row["samples"] for row in result["ws"])
    assert all(row["streaming"]["samples"] <= row["steady"]["samples"] for row in result["ws"])
    # The worst 100 ms of writes: within the run, no better than the typical window.
    for row in result["ws"]:
        worst = row["worst_window"]
        assert worst["at_s"] >= 0
        assert worst["p50_ms"] >= worst["typical_p50_ms"] > 0
        assert worst["max_ms"] >= worst["p50_ms"]
    assert [2, 2] == [row["sessions"] for row in result["latency"]]
    assert all(row["samples"] == 2 * 5 for row in result["latency"])
    assert [200, 200] == [row["deltas"] for row in result["throughput"]]
    assert 3 * 200 == result["aggregate"]["deltas"]
    assert result["throughput_share"] > 0
    assert "| nats | 2 |" in markdown(result)
    assert "Added by the NATS hop" in markdown(result)


@pytest.mark.parametrize("level", ["client", "adapter"])
def test_streaming_memory_probe_finishes(level: str, tmp_path: Path) -> None:
    """The streaming-session memory probe ends at the paced emitter's final result at both
    levels (it once waited for the corpus's end uuid at the client level and hung)."""
    from benchmarks._common import emitter_path
    from benchmarks.memory import run_probe

    cli = emitter_path(tmp_path)
    args = ["sessions", level, cli, "2", "--streaming", "--lines", "30", "--rate", "1000"]
    row = run_probe(args, timeout=120)
    assert row["level"] == level and row["sessions"] == 2
    assert "per_session_after_stream" in row
