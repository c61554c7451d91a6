"""Throughput figures (a)-(f), each in lines/s and MB/s of the corpus.

(a) ``msgspec.json.decode`` of every corpus line, untyped: the limit.
(b) our sans-IO layer: ``ClaudeCodeProtocol.receive_data`` over 64 KiB chunks (framing +
    one typed decode per line).
(c) our client end to end: emitter subprocess -> :class:`claudecode.Session` -> typed
    messages, consumed with ``receive_batch``.
(d) (c) + the adapter (translation, normalization, fan-out) -> events delivered to one
    subscriber of an :class:`adapter.session.AgentSession`.
(e) (d) + ``encode_event`` of every event, as a UI front end would send it.
(f) the official ``claude-agent-sdk`` ``query()`` on the same emitter.

End-to-end timings start when the prompt is sent ((c)-(e)) and stop when the final result
(or its ``Complete`` event) is received; spawn and ``initialize`` are outside. For (f), whose
``query()`` spawns and initializes inside the generator, the start is the moment the emitter
began writing (it reports it in the final result; ``CLOCK_MONOTONIC`` is shared between
processes), which is later than the prompt write and so flatters the SDK slightly.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import anyio
import msgspec

from ._common import spread
from .corpus import END_UUID, Corpus

__all__ = (
    "CHUNK",
    "bench_msgspec",
    "bench_protocol",
    "measure_throughput",
    "Run",
    "run_adapter",
    "run_client",
    "run_sdk",
)

#: Chunk size for (b): what one pipe read typically returns.
CHUNK = 64 * 1024


def bench_msgspec(lines: list[bytes]) -> float:
    """(a): seconds to ``msgspec.json.decode`` every line."""
    decode = msgspec.json.decode
    start = time.perf_counter()
    for line in lines:
        decode(line)
    return time.perf_counter() - start


def bench_protocol(data: bytes, chunk: int = CHUNK) -> tuple[float, int]:
    """(b): seconds to frame and decode ``data`` in ``chunk``-sized pieces; message count."""
    from claudecode import ClaudeCodeProtocol

    protocol = ClaudeCodeProtocol()
    view = memoryview(data)
    count = 0
    start = time.perf_counter()
    receive = protocol.receive_data
    for offset in range(0, len(data), chunk):
        count += len(receive(bytes(view[offset : offset + chunk])))
    count += len(receive(b""))
    return time.perf_counter() - start, count


def _env(corpus: Corpus) -> dict[str, str]:
    return {"BENCH_MODE": "corpus", "BENCH_CORPUS": str(corpus.path)}


class Run(NamedTuple):
    """One end-to-end run: wall seconds, our CPU seconds in that window, items received."""

    seconds: float
    cpu: float
    items: int
    encoded: int = 0


async def run_client(corpus: Corpus, cli: str) -> Run:
    """(c): seconds from prompt to the final result through :class:`claudecode.Session`."""
    from claudecode import ClaudeCodeOptions, ResultMessage, Session

    options = ClaudeCodeOptions(cli_path=cli, env=_env(corpus), close_grace=2, kill_after=2)
    count = 0
    async with Session(options) as session:
        start, cpu = time.monotonic(), time.process_time()
        await session.send("go")
        while True:
            batch = await session.receive_batch()
            count += len(batch)
            last = batch[-1]
            if type(last) is ResultMessage and last.uuid == END_UUID:
                break
        elapsed, cpu = time.monotonic() - start, time.process_time() - cpu
    return Run(elapsed, cpu, count)


async def run_adapter(corpus: Corpus, cli: str, *, encode: bool) -> Run:
    """(d)/(e): seconds from prompt to the last turn's ``Complete`` at a subscriber.

    ``items`` is the number of events received, ``encoded`` the JSON bytes when ``encode``.
    """
    from adapter.config import SessionConfig
    from adapter.events import Complete, encode_event
    from adapter.policies import PermissionPolicy
    from adapter.session import AgentSession

    config = SessionConfig(
        cli_path=cli,
        env=_env(corpus),
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 2, "kill_after": 2},
    )
    turns = corpus.turns + 1
    completes = events = encoded = 0
    async with AgentSession(config) as session:
        sub = session.subscribe(after_seq=0)
        start, cpu = time.monotonic(), time.process_time()
        await session.prompt("go")
        while completes < turns:
            batch = await sub.receive_batch()
            events += len(batch)
            if encode:
                for event in batch:
                    encoded += len(encode_event(event))
            for event in batch:
                if type(event) is Complete:
                    completes += 1
        elapsed, cpu = time.monotonic() - start, time.process_time() - cpu
    return Run(elapsed, cpu, events, encoded)


async def run_sdk(corpus: Corpus, cli: str) -> Run:
    """(f): seconds from the emitter's first write to the final result through ``query()``.

    Its CPU time runs from the call of ``query()`` (spawn and initialize included).
    """
    from claude_agent_sdk import (  # type: ignore[import-not-found, unused-ignore]
        ClaudeAgentOptions,
        ResultMessage,
        query,
    )

    options = ClaudeAgentOptions(cli_path=cli, env=_env(corpus), include_partial_messages=True)
    count = 0
    last: Any = None
    end = 0.0
    cpu = time.process_time()
    async for message in query(prompt="go", options=options):
        count += 1
        last = message
        if isinstance(message, ResultMessage) and message.uuid == END_UUID:
            end = time.monotonic()
            cpu = time.process_time() - cpu
    assert isinstance(last, ResultMessage) and last.result is not None and end
    started = int(last.result.removeprefix("bench-start=")) / 1e9
    return Run(end - started, cpu, count)


def _figures(
    corpus: Corpus, seconds: list[float], cpu: list[float] | None = None
) -> dict[str, Any]:
    lines = len(corpus.lines)
    mb = corpus.nbytes / 1e6
    cpu = cpu or seconds
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "lines_per_s": spread([lines / s for s in seconds]),
        "mb_per_s": spread([mb / s for s in seconds]),
        "cpu_us_per_line": spread([c / lines * 1e6 for c in cpu]),
    }


def _sdk_available() -> bool:
    try:
        import claude_agent_sdk  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def measure_throughput(
    corpus: Corpus,
    cli: str,
    *,
    repeats: int,
    backend: str = "asyncio",
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run (a)-(f) ``repeats`` times each; return figures and the ratios of medians."""
    results: dict[str, Any] = {"repeats": repeats, "backend": backend}
    data = corpus.data

    def run(coro: Callable[[], Awaitable[Any]]) -> Any:
        return anyio.run(coro, backend=backend)

    seconds: dict[str, list[float]] = {k: [] for k in "abcdef"}
    cpu: dict[str, list[float]] = {k: [] for k in "abcdef"}
    counts: dict[str, int] = {}
    sdk = _sdk_available()
    bench_msgspec(corpus.lines)  # warm-up: page in the corpus, grow the allocator's arenas
    bench_protocol(data)

    def record(key: str, result: Run) -> None:
        seconds[key].append(result.seconds)
        cpu[key].append(result.cpu)
        counts[key] = result.items

    for i in range(repeats):
        t = bench_msgspec(corpus.lines)
        seconds["a"].append(t)
        cpu["a"].append(t)
        t, counts["b"] = bench_protocol(data)
        seconds["b"].append(t)
        cpu["b"].append(t)
        record("c", run(lambda: run_client(corpus, cli)))
        record("d", run(lambda: run_adapter(corpus, cli, encode=False)))
        e = run(lambda: run_adapter(corpus, cli, encode=True))
        record("e", e)
        counts["e_bytes"] = e.encoded
        if sdk:
            record("f", anyio.run(run_sdk, corpus, cli))
        log(
            f"  repeat {i + 1}/{repeats}: "
            + " ".join(f"({k}) {len(corpus.lines) / v[-1]:,.0f}/s" for k, v in seconds.items() if v)
        )
    names = {
        "a": "msgspec.json.decode alone (the limit)",
        "b": "sans-IO framing + typed decode",
        "c": "client end to end (subprocess -> Session -> typed messages)",
        "d": "(c) + adapter -> events at a subscriber",
        "e": "(d) + encode_event per event",
        "f": "official claude-agent-sdk query()",
    }
    for key, values in seconds.items():
        if values:
            results[key] = {"name": names[key], **_figures(corpus, values, cpu[key])}
    results["counts"] = counts
    present = [k for k in seconds if k in results]

    def ratios(
        values: dict[str, float], pairs: tuple[str, ...], *, inverse: bool = False
    ) -> dict[str, float | None]:
        """``x/y`` for each pair (``y/x`` with ``inverse``: for costs rather than rates)."""
        out: dict[str, float | None] = {}
        for pair in pairs:
            x, y = pair.split("/")
            if x in values and y in values:
                out[pair] = values[y] / values[x] if inverse else values[x] / values[y]
            else:
                out[pair] = None
        return out

    pairs = ("c/f", "c/a", "d/c", "e/d")
    med = {k: results[k]["lines_per_s"]["median"] for k in present}
    results["ratios"] = ratios(med, (*pairs, "b/a"))
    # Ratios of the best runs: noise on a shared machine only ever slows a run down.
    best = {k: results[k]["lines_per_s"]["max"] for k in present}
    results["best_ratios"] = ratios(best, pairs)
    # The same ratios from our process's CPU time per line (less sensitive to other load).
    cpu_med = {k: results[k]["cpu_us_per_line"]["median"] for k in present}
    results["cpu_ratios"] = ratios(cpu_med, pairs, inverse=True)
    return results
