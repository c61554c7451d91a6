"""Latency: from the emitter writing a line to a subscriber receiving the matching event.

Each session's emitter (``BENCH_MODE=paced``) writes text deltas one per write at a steady
rate, the delta's text being ``t<CLOCK_MONOTONIC ns>`` read just before the write. The
subscriber stamps each :class:`~adapter.events.MessageChunk` on receipt (``time.monotonic_ns``
is the same clock in every process on Linux) and the difference is the latency: pipe, read,
framing, decode, translation, fan-out and the task switch to the subscriber. The deltas of
one read arrive merged into one chunk (``"t1 t2 "``): each of its write times is a sample.
All sessions stream at once, on the same event loop, as a server would run them; their
emitters compete for the same two cores.

The ``client`` level measures the same thing one layer down (typed ``StreamEvent`` from
:meth:`claudecode.Session.receive_batch`), to tell the adapter's share from the client's;
the ``raw`` level is the floor: the same pipes read with plain anyio, stamps found by a
regex, nothing decoded. CPU use of our process and of the emitters is reported with each run:
on two cores, 50 emitters and the readers compete for the same CPUs.
"""

from __future__ import annotations

import os
import re
import resource
import time
from typing import Any, Literal

import anyio

from . import procfs
from ._common import Countdown, cpu_of, percentile

__all__ = ("measure_latency",)

Level = Literal["adapter", "client", "raw"]

_STAMP = re.compile(rb'"text":"t(\d+) "')


def _env(lines: int, rate: float) -> dict[str, str]:
    return {"BENCH_MODE": "paced", "BENCH_LINES": str(lines), "BENCH_RATE": str(rate)}


_TEXT_STAMP = re.compile(r"t(\d+) ")


def _stamps(text: str) -> list[int]:
    """Every write time in a chunk: the adapter merges the deltas of one read into one
    chunk (``"t1 t2 "``), and a merged delta is a sample like any other (often a late one)."""
    return [int(found) for found in _TEXT_STAMP.findall(text)]


def _stamp(text: str) -> int | None:
    text = text.strip()
    if text.startswith("t") and text[1:].isdigit():
        return int(text[1:])
    return None


async def _adapter_session(
    cli: str,
    env: dict[str, str],
    ready: Countdown,
    go: anyio.Event,
    out: list[int],
    finished: _Finished,
) -> None:
    from adapter.config import SessionConfig
    from adapter.events import Complete, MessageChunk
    from adapter.policies import PermissionPolicy
    from adapter.session import AgentSession

    config = SessionConfig(
        cli_path=cli,
        env=env,
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 2, "kill_after": 2},
    )
    async with AgentSession(config) as session:
        sub = session.subscribe(after_seq=0)
        ready.done()
        await go.wait()
        await session.prompt("go")
        done = False
        while not done:
            batch = await sub.receive_batch()
            now = time.monotonic_ns()
            for event in batch:
                kind = type(event)
                if kind is MessageChunk:
                    assert isinstance(event, MessageChunk)
                    out.extend(now - sent for sent in _stamps(event.text))
                elif kind is Complete:
                    done = True
        finished.done(getattr(getattr(session, "_client", None), "pid", None))


async def _client_session(
    cli: str,
    env: dict[str, str],
    ready: Countdown,
    go: anyio.Event,
    out: list[int],
    finished: _Finished,
) -> None:
    from claudecode import ClaudeCodeOptions, ResultMessage, Session, StreamEvent
    from claudecode.stream_events import ContentBlockDelta, TextDelta

    options = ClaudeCodeOptions(cli_path=cli, env=env, close_grace=2, kill_after=2)
    async with Session(options) as session:
        ready.done()
        await go.wait()
        await session.send("go")
        done = False
        while not done:
            batch = await session.receive_batch()
            now = time.monotonic_ns()
            for message in batch:
                if type(message) is StreamEvent:
                    assert isinstance(message, StreamEvent)
                    event = message.event
                    if type(event) is ContentBlockDelta and type(event.delta) is TextDelta:
                        sent = _stamp(event.delta.text)
                        if sent is not None:
                            out.append(now - sent)
                elif type(message) is ResultMessage:
                    done = True
        finished.done(session.pid)


def _cpu_ours() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_children() -> float:
    """CPU seconds used so far by our live child processes (the emitters), from /proc."""
    return cpu_of(procfs.children(os.getpid()))


class _Finished(Countdown):
    """Counts finished streams and notes each emitter's CPU time while it is still alive."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.emitter_cpu = 0.0

    def done(self, pid: int | None = None) -> None:
        if pid is not None:
            self.emitter_cpu += cpu_of([pid])
        super().done()


async def _raw_session(
    cli: str,
    env: dict[str, str],
    ready: Countdown,
    go: anyio.Event,
    out: list[int],
    finished: _Finished,
) -> None:
    """The floor: the same pipe read with anyio, stamps found by a regex, no decoding."""
    import subprocess

    async with await anyio.open_process(
        [cli], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, **env}
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        ready.done()
        await go.wait()
        await process.stdin.send(b'{"type":"user","message":{"role":"user","content":"go"}}\n')
        tail = b""
        while True:
            chunk = await process.stdout.receive()
            now = time.monotonic_ns()
            data = tail + chunk
            out.extend(now - int(m.group(1)) for m in _STAMP.finditer(data))
            if b'"type":"result"' in data:
                break
            tail = data[data.rfind(b"\n") + 1 :]
        finished.done(process.pid)
        await process.stdin.aclose()


async def _run(
    cli: str, sessions: int, lines: int, rate: float, level: Level
) -> tuple[list[int], dict[str, float]]:
    """Stream ``sessions`` paced turns at once; latency samples (ns) and CPU use while streaming.

    CPU: seconds of ours and of the emitters from the go signal until every stream ended
    (before the sessions close), and the wall time of that window.
    """
    samples: list[int] = []
    ready = Countdown(sessions)
    finished = _Finished(sessions)
    go = anyio.Event()
    env = _env(lines, rate)
    body = {"adapter": _adapter_session, "client": _client_session, "raw": _raw_session}[level]
    async with anyio.create_task_group() as tg:
        for _ in range(sessions):
            tg.start_soon(body, cli, env, ready, go, samples, finished)
        await ready.wait()
        await anyio.sleep(0.2)  # let the spawn storm settle
        ours, theirs = _cpu_ours(), _cpu_children()
        start = time.monotonic()
        go.set()
        await finished.wait()
        cpu = {
            "wall_s": time.monotonic() - start,
            "cpu_ours_s": _cpu_ours() - ours,
            "cpu_emitters_s": finished.emitter_cpu - theirs,
        }
    return samples, cpu


def measure_latency(
    cli: str,
    *,
    session_counts: tuple[int, ...] = (1, 10, 50),
    lines: int = 300,
    rate: float = 100.0,
    levels: tuple[Level, ...] = ("adapter", "client"),
    backend: str = "asyncio",
    log: Any = print,
) -> dict[str, Any]:
    """p50 / p99 / max latency (ms) per level and concurrency."""
    out: dict[str, Any] = {"lines_per_session": lines, "rate_per_session": rate, "runs": []}
    for level in levels:
        for count in session_counts:
            samples, cpu = anyio.run(_run, cli, count, lines, rate, level, backend=backend)
            samples.sort()
            row = {
                "level": level,
                "sessions": count,
                "samples": len(samples),
                "p50_ms": percentile(samples, 0.50) / 1e6,
                "p99_ms": percentile(samples, 0.99) / 1e6,
                "max_ms": (samples[-1] if samples else float("nan")) / 1e6,
                "cpu_ours": cpu["cpu_ours_s"] / cpu["wall_s"],
                "cpu_emitters": cpu["cpu_emitters_s"] / cpu["wall_s"],
                "cpu_us_per_line": cpu["cpu_ours_s"] / max(1, len(samples)) * 1e6,
            }
            out["runs"].append(row)
            log(
                f"  latency {level:7} x{count:<3}: p50 {row['p50_ms']:.3f} ms  "
                f"p99 {row['p99_ms']:.3f} ms  max {row['max_ms']:.3f} ms  (n={len(samples)}; "
                f"CPU ours {row['cpu_ours']:.0%} = {row['cpu_us_per_line']:.0f} us/line, "
                f"emitters {row['cpu_emitters']:.0%})"
            )
    return out
