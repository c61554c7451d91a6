"""Where a warm session's time to first text goes: ``python -m benchmarks.warm_breakdown
[--sessions 10]``.

As :mod:`benchmarks.warm` (the real pinned CLI against the fake Messages API, a
:class:`~adapter.LocalBackend` with ``warm=1``, each round from a quiet machine), but each
pooled session gets two prompts, and each turn is cut at what this process can see:

* ``prompt``: ``backend.prompt()`` (our path: the user message written to the CLI's stdin);
* ``to request``: from the prompt to the fake API receiving the turn's model request
  (``/v1/messages`` of kind ``main``): the CLI's own work before it asks the model;
* ``to first text``: from that request to the first ``message_chunk`` (the fake API
  answers at once: the CLI reading the stream and writing its line, then our read and
  translation, a few µs per line);
* the other requests the CLI made during the turn, by kind.

The first turn of a pooled session against its second shows what the CLI does once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from adapter import LocalBackend, MessageChunk, SessionSpec
from adapter.events import Complete

from .warm import _defaults, _real_cli_setup, _until_warm

__all__ = ("main", "measure_breakdown")

_PARTS = ("prompt", "to_request", "to_first_text", "total")


async def _turn(backend: LocalBackend, session_id: str, api: Any) -> dict[str, Any]:
    seen = len(api.requests())
    async with backend.subscribe(session_id) as events:
        start = time.monotonic()
        await backend.prompt(session_id, "go")
        prompted = time.monotonic()
        first_text = 0.0
        async for event in events:
            if type(event) is MessageChunk and not first_text:
                first_text = time.monotonic()
            if type(event) is Complete:
                break
    requests = api.requests()[seen:]
    main = [r for r in requests if r.kind == "main"]
    asked = main[0].received_at if main else first_text
    return {
        "prompt": prompted - start,
        "to_request": asked - prompted,
        "to_first_text": first_text - asked,
        "total": first_text - start,
        "requests": sorted(f"{r.kind} {r.path}" for r in requests),
    }


async def measure_breakdown(sessions: int = 10) -> dict[str, Any]:
    """The figures (see the module docs)."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp,
        _real_cli_setup(Path(tmp)) as (command, env, api),
    ):
        from tests.realcli.script import text_turn

        defaults = _defaults(command, env)
        turns: dict[str, list[dict[str, Any]]] = {"first": [], "second": []}
        load = os.getloadavg()
        async with LocalBackend(defaults, idle_timeout=None, warm=1) as backend:
            for round_ in range(sessions):
                api.add_main(*(text_turn(f"hello {round_} {n}") for n in range(3)))
                await _until_warm(backend)
                info = await backend.create(SessionSpec())
                turns["first"].append(await _turn(backend, info.id, api))
                turns["second"].append(await _turn(backend, info.id, api))
                await backend.close(info.id)
        result: dict[str, Any] = {"sessions": sessions, "load": [load, os.getloadavg()]}
        for name, series in turns.items():
            result[name] = {
                part: statistics.median(t[part] for t in series) * 1000 for part in _PARTS
            }
            result[name]["requests"] = series[-1]["requests"]
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.warm_breakdown", description=__doc__
    )
    parser.add_argument("--sessions", type=int, default=10, help="rounds (10)")
    args = parser.parse_args(argv)
    result = anyio.run(measure_breakdown, args.sessions)
    load = result["load"]
    print(f"{args.sessions} rounds; load average {load[0][0]:.2f} -> {load[1][0]:.2f}")
    print("| turn of a pooled session | " + " | ".join(_PARTS) + " | requests |")
    print("|---|" + "---:|" * len(_PARTS) + "---|")
    for name in ("first", "second"):
        row = result[name]
        cells = " | ".join(f"{row[p]:.0f} ms" for p in _PARTS)
        print(f"| {name} | {cells} | {', '.join(row['requests'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
