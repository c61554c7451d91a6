"""Scale: many sessions (emitters) streaming at full speed at once into one event loop.

Each of ``sessions`` adapter sessions gets its own emitter writing the same small corpus as
fast as its pipe takes it; all prompts go out together. Each subscriber counts its events up
to the last turn's ``Complete``. Reported: aggregate corpus lines/s over the whole run, each
session's own rate (its lines over the time from the common start to its end), the slowest
session's rate as a share of the mean, and, sampled every 20 ms while streaming, the largest
backlog seen in each channel: batches waiting in the client's message channel (bounded by
``message_buffer``), events waiting at a subscriber (a subscriber beyond
``subscriber_buffer`` is dropped, so that queue is bounded too), and our RSS.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import anyio

from ._common import Countdown, rss_bytes
from .corpus import Corpus

__all__ = ("measure_scale",)


def _client_backlog(session: Any) -> int:
    """Batches waiting in the client session's message channel (benchmark-only peek)."""
    client = getattr(session, "_client", None)
    stream = getattr(client, "_recv_stream", None)
    if stream is None:
        return 0
    return int(stream.statistics().current_buffer_used)


async def _run(cli: str, corpus: Corpus, sessions: int) -> dict[str, Any]:
    from adapter.config import SessionConfig
    from adapter.events import Complete
    from adapter.fanout import SubscriberDropped
    from adapter.policies import PermissionPolicy
    from adapter.session import AgentSession

    config = SessionConfig(
        cli_path=cli,
        env={"BENCH_MODE": "corpus", "BENCH_CORPUS": str(corpus.path)},
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 5, "kill_after": 2, "spawn_timeout": 120},
    )
    turns = corpus.turns + 1
    ready = Countdown(sessions)
    go = anyio.Event()
    ends: list[float] = []
    events: list[int] = []
    dropped: list[str] = []
    live: list[tuple[Any, Any]] = []
    peak = {"client_batches": 0, "subscriber_events": 0, "rss": 0}
    state = {"start": 0.0, "finished": 0}
    message_buffer = 256
    subscriber_buffer = config.subscriber_buffer

    async def one() -> None:
        async with AgentSession(config) as session:
            sub = session.subscribe(after_seq=0)
            live.append((session, sub))
            ready.done()
            await go.wait()
            await session.prompt("go")
            completes = count = 0
            try:
                while completes < turns:
                    batch = await sub.receive_batch()
                    count += len(batch)
                    for event in batch:
                        if type(event) is Complete:
                            completes += 1
            except SubscriberDropped as exc:
                dropped.append(str(exc))
            ends.append(time.monotonic())
            events.append(count)
            state["finished"] += 1

    async def sample() -> None:
        while state["finished"] < sessions:
            for session, sub in live:
                peak["client_batches"] = max(peak["client_batches"], _client_backlog(session))
                peak["subscriber_events"] = max(peak["subscriber_events"], sub.pending)
            peak["rss"] = max(peak["rss"], rss_bytes())
            await anyio.sleep(0.02)

    rss_start = rss_bytes()
    async with anyio.create_task_group() as tg:
        for _ in range(sessions):
            tg.start_soon(one)
        await ready.wait()
        await anyio.sleep(0.5)
        rss_idle = rss_bytes()
        state["start"] = time.monotonic()
        go.set()
        tg.start_soon(sample)
    start = state["start"]
    lines = len(corpus.lines)
    rates = [lines / (end - start) for end in ends]
    mean = statistics.fmean(rates)
    wall = max(ends) - start
    return {
        "sessions": sessions,
        "lines_per_session": lines,
        "wall_seconds": wall,
        "aggregate_lines_per_s": lines * sessions / wall,
        "aggregate_mb_per_s": corpus.nbytes * sessions / 1e6 / wall,
        "session_rate": {"min": min(rates), "mean": mean, "max": max(rates)},
        "slowest_share_of_mean": min(rates) / mean,
        "events_per_session": {"min": min(events), "max": max(events)},
        "subscribers_dropped": len(dropped),
        "peak_client_batches": peak["client_batches"],
        "client_batches_bound": message_buffer,
        "peak_subscriber_events": peak["subscriber_events"],
        "subscriber_events_bound": subscriber_buffer,
        "rss_start": rss_start,
        "rss_idle_sessions": rss_idle,
        "rss_peak_streaming": peak["rss"],
    }


def measure_scale(
    cli: str, corpus: Corpus, *, sessions: int = 100, backend: str = "asyncio", log: Any = print
) -> dict[str, Any]:
    """Run the scale benchmark once; see the module docstring."""
    result: dict[str, Any] = anyio.run(_run, cli, corpus, sessions, backend=backend)
    log(
        f"  scale x{sessions}: {result['aggregate_lines_per_s']:,.0f} lines/s aggregate, "
        f"slowest session {result['slowest_share_of_mean']:.0%} of the mean, "
        f"peak backlog {result['peak_client_batches']} batches / "
        f"{result['peak_subscriber_events']} events, dropped {result['subscribers_dropped']}"
    )
    return result
