"""Memory: RSS per idle and per streaming session, and one huge line end to end.

Every figure is taken in a fresh interpreter (``python -m benchmarks.memory <probe> ...``)
so earlier benchmarks do not pollute the heap; the probe prints one JSON object. Only our
own process is measured (``/proc/self/statm``), never the emitters.

* ``idle``: open one session and close it (imports, caches), then open ``N`` sessions that
  sit idle after ``initialize``: (RSS with them open - RSS before) / N.
* ``streaming``: the same ``N`` sessions each streaming paced text deltas to a subscriber;
  RSS is sampled while they stream: (median sample - RSS before) / N.
* ``after a long turn``: sessions that streamed a 12k-line corpus turn at full speed, idle
  again: what a session keeps (the adapter's event history is bounded by ``history_size``
  events, 10,000 by default).
* ``bigline``: one ``user`` tool_result line of ``size`` bytes through the client (or the
  adapter, up to its ``Complete``): seconds from the prompt to the last message, and the
  peak memory above the level before the prompt, as RSS high-water mark (``VmHWM``, reset
  just before the prompt) and,
  in a second fresh run, as ``tracemalloc`` peak of Python allocations.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from typing import Any, Literal

import anyio

from ._common import Countdown, peak_rss_bytes, reset_peak_rss, rss_bytes
from .corpus import END_UUID, load_corpus

__all__ = ("measure_memory", "probe_bigline", "probe_sessions", "run_probe")

Level = Literal["adapter", "client"]


def _adapter_config(cli: str, env: dict[str, str], **client: Any) -> Any:
    from adapter.config import SessionConfig
    from adapter.policies import PermissionPolicy

    return SessionConfig(
        cli_path=cli,
        env=env,
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 2, "kill_after": 2, **client},
    )


def _final(result: str | None) -> bool:
    """Whether a ``Complete`` event's result text is the emitter's final one."""
    return bool(result) and str(result).startswith(("paced", "bench-start="))


async def _hold(
    level: Level,
    cli: str,
    env: dict[str, str],
    ready: Countdown,
    go: anyio.Event | None,
    release: anyio.Event,
    streamed: Countdown | None = None,
) -> None:
    """Open a session, optionally stream one prompt's output once ``go`` is set, then tell
    ``streamed`` and wait for ``release``."""
    if level == "adapter":
        from adapter.events import Complete
        from adapter.session import AgentSession

        async with AgentSession(_adapter_config(cli, env)) as session:
            sub = session.subscribe(after_seq=0)
            ready.done()
            if go is not None:
                await go.wait()
                await session.prompt("go")
                done = False
                while not done:
                    batch = await sub.receive_batch()
                    done = any(type(e) is Complete and _final(e.result) for e in batch)
            if streamed is not None:
                streamed.done()
            await release.wait()
    else:
        from claudecode import ClaudeCodeOptions, ResultMessage, Session

        options = ClaudeCodeOptions(cli_path=cli, env=env, close_grace=2, kill_after=2)
        async with Session(options) as client:
            ready.done()
            if go is not None:
                await go.wait()
                await client.send("go")
                done = False
                while not done:
                    messages = await client.receive_batch()
                    # The corpus's final result carries END_UUID; the paced one has a fresh
                    # uuid per prompt, so it is recognised by its text like the adapter's.
                    done = any(
                        type(m) is ResultMessage and (m.uuid == END_UUID or _final(m.result))
                        for m in messages
                    )
            if streamed is not None:
                streamed.done()
            await release.wait()


async def probe_sessions(
    level: Level,
    cli: str,
    sessions: int,
    *,
    streaming: bool,
    lines: int,
    rate: float,
    corpus: str | None = None,
) -> dict[str, Any]:
    """RSS per idle (or streaming) session; see the module docstring.

    With ``corpus`` every session streams that corpus at full speed instead of paced deltas
    (no RSS samples then, only the level after the streams ended).
    """
    env = {"BENCH_MODE": "paced", "BENCH_LINES": str(lines), "BENCH_RATE": str(rate)}
    if corpus is not None:
        env = {"BENCH_MODE": "corpus", "BENCH_CORPUS": corpus}
    # Warm up: one full session (imports, lazily built decoders, logging setup).
    warm_env = {"BENCH_MODE": "paced", "BENCH_LINES": "20", "BENCH_RATE": "1000"}
    release = anyio.Event()
    go = anyio.Event()
    go.set()
    release.set()
    await _hold(level, cli, warm_env, Countdown(1), go, release)
    gc.collect()
    await anyio.sleep(0.1)
    before = rss_bytes()
    ready = Countdown(sessions)
    release = anyio.Event()
    start = anyio.Event()
    streamed = Countdown(sessions)
    samples: list[int] = []
    after = 0
    async with anyio.create_task_group() as tg:
        for _ in range(sessions):
            tg.start_soon(
                _hold, level, cli, env, ready, start if streaming else None, release, streamed
            )
        await ready.wait()
        await anyio.sleep(0.2)
        gc.collect()
        idle = rss_bytes()
        if streaming:
            start.set()
            if corpus is None:
                duration = lines / rate
                await anyio.sleep(duration * 0.2)
                deadline = time.monotonic() + duration * 0.6
                while time.monotonic() < deadline:
                    samples.append(rss_bytes())
                    await anyio.sleep(0.05)
            await streamed.wait()
            gc.collect()
            await anyio.sleep(0.1)
            after = rss_bytes()
        release.set()
    result: dict[str, Any] = {
        "level": level,
        "sessions": sessions,
        "rss_before": before,
        "rss_idle": idle,
        "per_idle_session": (idle - before) / sessions,
    }
    if streaming:
        result["rss_after_stream"] = after
        result["per_session_after_stream"] = (after - before) / sessions
    if samples:
        median = statistics.median(samples)
        result.update(
            {
                "rss_streaming_median": median,
                "rss_streaming_max": max(samples),
                "per_streaming_session": (median - before) / sessions,
                "lines_per_session": lines,
                "rate_per_session": rate,
            }
        )
    return result


async def probe_bigline(
    level: Level,
    cli: str,
    size: int,
    *,
    trace: bool,
    text: str = "ascii",
    default_limit: bool = False,
) -> dict[str, Any]:
    """Time and peak memory of one ``size``-byte line end to end; see the module docstring.

    ``text="unicode"`` makes the line's text non-Latin-1; ``default_limit`` keeps the
    client's default ``max_line_bytes`` (else twice the size).
    """
    import tracemalloc

    from claudecode import ClaudeCodeOptions

    env = {"BENCH_MODE": "bigline", "BENCH_SIZE": str(size), "BENCH_TEXT": text}
    limit = ClaudeCodeOptions.max_line_bytes if default_limit else 2 * size + (1 << 20)
    kinds: list[str] = []
    gc.collect()
    if level == "adapter":
        from adapter.events import Complete
        from adapter.session import AgentSession

        async with AgentSession(_adapter_config(cli, env, max_line_bytes=limit)) as session:
            sub = session.subscribe(after_seq=0)
            await anyio.sleep(0.2)  # the emitter builds its line before reading stdin
            gc.collect()
            before = rss_bytes()
            reset_peak_rss()
            if trace:
                tracemalloc.start()
            start = time.monotonic()
            await session.prompt("go")
            done = False
            while not done:
                batch = await sub.receive_batch()
                kinds += [type(e).__name__ for e in batch]
                done = any(type(e) is Complete for e in batch)
            elapsed = time.monotonic() - start
            peak_traced = tracemalloc.get_traced_memory()[1] if trace else None
            tracemalloc.stop()
    else:
        from claudecode import ClaudeCodeOptions, ResultMessage, Session

        options = ClaudeCodeOptions(
            cli_path=cli, env=env, close_grace=2, kill_after=2, max_line_bytes=limit
        )
        async with Session(options) as client:
            await anyio.sleep(0.2)
            gc.collect()
            before = rss_bytes()
            reset_peak_rss()
            if trace:
                tracemalloc.start()
            start = time.monotonic()
            await client.send("go")
            done = False
            while not done:
                messages = await client.receive_batch()
                kinds += [type(m).__name__ for m in messages]
                done = any(type(m) is ResultMessage for m in messages)
            elapsed = time.monotonic() - start
            peak_traced = tracemalloc.get_traced_memory()[1] if trace else None
            tracemalloc.stop()
    peak_rss = peak_rss_bytes()
    return {
        "level": level,
        "size": size,
        "seconds": elapsed,
        "rss_before": before,
        "peak_rss_above_before": peak_rss - before,
        "peak_traced": peak_traced,
        "received": kinds,
    }


def run_probe(args: list[str], timeout: float = 300) -> dict[str, Any]:
    """Run ``python -m benchmarks.memory <args>`` in a fresh interpreter; its JSON result."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"memory probe {args} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure_memory(
    cli: str,
    *,
    sessions: int = 20,
    stream_lines: int = 2000,
    stream_rate: float = 500.0,
    big_sizes: tuple[int, ...] = (25 << 20, 50 << 20, 100 << 20),
    levels: tuple[Level, ...] = ("adapter", "client"),
    repeats: int = 3,
    long_sessions: int = 10,
    long_lines: int = 12_000,
    log: Any = print,
) -> dict[str, Any]:
    """All memory figures, each from a fresh interpreter (big-line times: best of ``repeats``)."""
    out: dict[str, Any] = {"sessions": [], "bigline": []}
    mib = 1 << 20
    long_corpus = load_corpus(long_lines)
    long_path, long_lines = str(long_corpus.path), len(long_corpus.lines)
    for level in levels:
        row = run_probe(
            [
                "sessions",
                level,
                cli,
                str(sessions),
                "--streaming",
                "--lines",
                str(stream_lines),
                "--rate",
                str(stream_rate),
            ]
        )
        long_turn = run_probe(
            ["sessions", level, cli, str(long_sessions), "--streaming", "--corpus", long_path]
        )
        row["per_session_after_long_turn"] = long_turn["per_session_after_stream"]
        row["long_turn_sessions"] = long_sessions
        row["long_turn_lines"] = long_lines
        out["sessions"].append(row)
        log(
            f"  memory {level:7}: {row['per_idle_session'] / 1024:,.0f} KiB per idle session, "
            f"{row['per_streaming_session'] / 1024:,.0f} KiB per streaming session (x{sessions}), "
            f"{row['per_session_after_long_turn'] / 1024:,.0f} KiB per session idle after a "
            f"{long_lines:,}-line turn (x{long_sessions})"
        )
    for level in levels:
        for size in big_sizes:
            runs = [run_probe(["bigline", level, cli, str(size)]) for _ in range(repeats)]
            timed = min(runs, key=lambda r: float(r["seconds"]))
            traced = run_probe(["bigline", level, cli, str(size), "--trace"])
            row = {
                "level": level,
                "size": size,
                "seconds": timed["seconds"],
                "seconds_per_mib": timed["seconds"] / (size / mib),
                "seconds_all": [r["seconds"] for r in runs],
                "peak_rss_above_before": max(r["peak_rss_above_before"] for r in runs),
                "peak_traced": traced["peak_traced"],
                "peak_rss_x_line": max(r["peak_rss_above_before"] for r in runs) / size,
                "peak_traced_x_line": traced["peak_traced"] / size,
                "received": timed["received"],
            }
            out["bigline"].append(row)
            log(
                f"  big line {level:7} {size / mib:5.0f} MiB: {row['seconds']:.3f} s "
                f"({row['seconds_per_mib'] * 1000:.2f} ms/MiB), peak RSS "
                f"{row['peak_rss_x_line']:.2f}x, peak traced {row['peak_traced_x_line']:.2f}x"
            )
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line of the fresh-interpreter probes (used by :func:`run_probe`)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    sub = parser.add_subparsers(dest="probe", required=True)
    p_sessions = sub.add_parser("sessions")
    p_sessions.add_argument("level", choices=("adapter", "client"))
    p_sessions.add_argument("cli")
    p_sessions.add_argument("count", type=int)
    p_sessions.add_argument("--streaming", action="store_true")
    p_sessions.add_argument("--lines", type=int, default=2000)
    p_sessions.add_argument("--rate", type=float, default=500.0)
    p_sessions.add_argument("--corpus", help="stream this NDJSON corpus at full speed instead")
    p_big = sub.add_parser("bigline")
    p_big.add_argument("level", choices=("adapter", "client"))
    p_big.add_argument("cli")
    p_big.add_argument("size", type=int)
    p_big.add_argument("--trace", action="store_true")
    p_big.add_argument("--text", choices=("ascii", "unicode"), default="ascii")
    p_big.add_argument("--default-limit", action="store_true")
    args = parser.parse_args(argv)
    result: dict[str, Any]
    if args.probe == "sessions":
        result = anyio.run(
            lambda: probe_sessions(
                args.level,
                args.cli,
                args.count,
                streaming=args.streaming,
                lines=args.lines,
                rate=args.rate,
                corpus=args.corpus,
            )
        )
    else:
        result = anyio.run(
            lambda: probe_bigline(
                args.level,
                args.cli,
                args.size,
                trace=args.trace,
                text=args.text,
                default_limit=args.default_limit,
            )
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
