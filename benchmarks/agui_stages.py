"""Where a text delta's latency goes: ``python -m benchmarks.agui latency --stages``.

Every delta the paced emitter writes carries ``t<CLOCK_MONOTONIC ns>``. With ``--stages`` the
server process (:func:`install_server_probes`, wrapping three functions) notes when each
stamp was first seen

* ``read``: in the bytes the CLI transport read from the emitter's pipe,
* ``push``: in an SSE frame the AG-UI run appended to its handle,
* ``write``: in bytes handed to a socket's ``send`` (uvicorn's write to the client),

and the client processes note when they read it. :func:`stage_report` splits each delta's
latency into emitter -> read (the pipe, and the server's event loop getting to it),
read -> push (client decode, adapter, fan-out, AG-UI translation), push -> write (the SSE
writer's task, Starlette, h11) and write -> client (the socket and the client), for all
deltas, for the slow ones, and by time window (the runs' start, their end, the rest). The
server also notes every step of its event loop over 1.5 ms (with the task it ran) and every
collector pass over 1 ms.

The probes cost the server CPU (a regular expression over every read, frame and write):
figures taken with ``--stages`` find where the time goes; those reported come without.
"""

from __future__ import annotations

import atexit
import gc
import glob
import json
import re
import time
from collections import Counter
from typing import Any

from ._common import percentile

__all__ = (
    "STAGES",
    "STAGES_ENV",
    "client_stamps_path",
    "install_server_probes",
    "stage_report",
)

#: Environment variable naming the file the server dumps its stamps to (clients write theirs
#: next to it).
STAGES_ENV = "BENCH_STAGES"
#: The stages of a delta's way, in order.
STAGES = ("emitter->read", "read->push", "push->write", "write->client")

_STAMP = re.compile(rb"t(\d{12,})")
_SLOW_STEP_NS = 1_500_000
_SLOW_GC_NS = 1_000_000


def client_stamps_path(base: str, pid: int) -> str:
    """Where client process ``pid`` writes its ``(emitter stamp, read time)`` pairs."""
    return f"{base}.client.{pid}"


def install_server_probes(path: str) -> None:
    """Wrap the CLI transport's read, the AG-UI run's push and the socket write in this
    process; dump every stamp's first sighting to ``path`` at exit (module docs)."""
    import asyncio
    import asyncio.events
    import asyncio.selector_events

    from adapter.server.agui.runs import RunHandle
    from claudecode.transport import SubprocessTransport

    now = time.monotonic_ns
    seen: dict[str, dict[int, int]] = {"read": {}, "push": {}, "write": {}}
    slow_steps: list[tuple[int, int, str]] = []
    gc_passes: list[tuple[int, int, int]] = []

    def note(stage: dict[int, int], data: bytes) -> None:
        t = now()
        for match in _STAMP.finditer(data):
            stage.setdefault(int(match.group(1)), t)

    receive = SubprocessTransport.receive

    async def probed_receive(self: SubprocessTransport) -> bytes:
        data = await receive(self)
        note(seen["read"], data)
        return data

    push = RunHandle.push

    def probed_push(self: RunHandle, frames: list[bytes]) -> None:
        for frame in frames:
            note(seen["push"], frame)
        push(self, frames)

    transport_class: Any = asyncio.selector_events._SelectorSocketTransport  # type: ignore[attr-defined]
    write = transport_class.write

    def probed_write(self: Any, data: Any) -> None:
        note(seen["write"], bytes(data))
        write(self, data)

    run_handle = asyncio.events.Handle._run

    def probed_run(self: asyncio.events.Handle) -> None:
        started = now()
        run_handle(self)
        took = now() - started
        if took > _SLOW_STEP_NS:
            callback = getattr(self, "_callback", None)
            task = getattr(callback, "__self__", None)
            what = repr(callback)
            if isinstance(task, asyncio.Task):
                what = task.get_name()  # anyio names a task after its coroutine
            slow_steps.append((started, took, what[:160]))

    gc_started = [0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_started[0] = now()
        elif now() - gc_started[0] > _SLOW_GC_NS:
            gc_passes.append((gc_started[0], now() - gc_started[0], info["generation"]))

    SubprocessTransport.receive = probed_receive  # type: ignore[method-assign]
    RunHandle.push = probed_push  # type: ignore[method-assign]
    transport_class.write = probed_write
    asyncio.events.Handle._run = probed_run  # type: ignore[method-assign]
    gc.callbacks.append(on_gc)

    def dump() -> None:
        with open(path, "w") as fh:
            json.dump({**seen, "slow_steps": slow_steps, "gc": gc_passes}, fh)

    atexit.register(dump)


def _spread_ms(values: list[int]) -> dict[str, float]:
    ordered = sorted(v / 1e6 for v in values)
    return {
        "p50_ms": percentile(ordered, 0.50),
        "p90_ms": percentile(ordered, 0.90),
        "p99_ms": percentile(ordered, 0.99),
        "max_ms": ordered[-1] if ordered else 0.0,
    }


def _slowest_stage(row: tuple[int, ...]) -> str:
    stages = row[2:6]
    return STAGES[stages.index(max(stages))]


def stage_report(path: str, *, slow_ms: float = 5.0) -> dict[str, Any]:
    """The stages of every delta seen by the server's probes and a client (module docs)."""
    with open(path) as fh:
        server = json.load(fh)
    read, push, write = (
        {int(k): v for k, v in server[stage].items()} for stage in ("read", "push", "write")
    )
    pairs: list[tuple[int, int]] = []
    for name in glob.glob(client_stamps_path(path, 0).rpartition(".")[0] + ".*"):
        with open(name) as fh:
            pairs += [tuple(pair) for pair in json.load(fh)]
    # (emitter stamp, total, stage 1..4), for the deltas seen at every stage.
    rows = [
        (e, c - e, read[e] - e, push[e] - read[e], write[e] - push[e], c - write[e])
        for e, c in pairs
        if e in read and e in push and e in write
    ]
    if not rows:
        return {"samples": 0}
    first, last = min(r[0] for r in rows), max(r[0] for r in rows)
    slow = [r for r in rows if r[1] > slow_ms * 1e6]
    dominant = Counter(_slowest_stage(r) for r in slow)
    windows = {
        "first 50 ms": [r for r in rows if r[0] - first < 50e6],
        "last 100 ms": [r for r in rows if last - r[0] < 100e6],
    }
    windows["between"] = [r for r in rows if r[0] - first >= 50e6 and last - r[0] >= 100e6]
    return {
        "samples": len(rows),
        "stages": {
            "total": _spread_ms([r[1] for r in rows]),
            **{stage: _spread_ms([r[2 + i] for r in rows]) for i, stage in enumerate(STAGES)},
        },
        f"slow_over_{slow_ms:g}_ms": len(slow),
        "slowest_stage_of_slow": dict(dominant.most_common()),
        "windows": {
            name: {"samples": len(part), **_spread_ms([r[1] for r in part])}
            for name, part in windows.items()
            if part
        },
        "slowest": [
            {
                "at_ms": round((r[0] - first) / 1e6, 1),
                "total_ms": round(r[1] / 1e6, 2),
                **{stage: round(r[2 + i] / 1e6, 2) for i, stage in enumerate(STAGES)},
            }
            for r in sorted(rows, key=lambda r: r[1])[-10:]
        ],
        "slow_loop_steps": [
            {"at_ms": round((t - first) / 1e6, 1), "ms": round(d / 1e6, 2), "what": what}
            for t, d, what in server["slow_steps"]
            if first - 100e6 <= t <= last + 100e6
        ],
        "gc_over_1_ms": [
            {"at_ms": round((t - first) / 1e6, 1), "ms": round(d / 1e6, 2), "generation": g}
            for t, d, g in server["gc"]
            if first - 100e6 <= t <= last + 100e6
        ],
    }
