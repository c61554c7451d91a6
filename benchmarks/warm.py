"""Time to the first streamed text of a new session: cold, from the warm pool, and resumed.

``python -m benchmarks.warm [--sessions 20]``

The real pinned Claude Code CLI (``scripts/install-claude-cli``, or ``$CLAUDE_CODE_CLI``)
against the project's fake Messages API (``tests/realcli``: run it from a checkout), inside a
private network namespace when the machine allows one. Two :class:`~adapter.LocalBackend`
in this process with the same defaults, one with ``warm=1``; each round, once the pool is
warm again and nothing is starting, times one session of each, alternating which goes first:

* ``cold``: ``create_session`` starts the CLI and waits for its ``initialize``;
* ``warm``: ``create_session`` hands out the pooled CLI;
* ``resumed`` (cold, ``--resume`` of the conversation the cold session of the round just had):
  the CLI reads its transcript before it answers ``initialize``.

Each time: ``create`` (the call returns: the CLI is connected) and ``first text`` (from
before ``create`` to the first ``message_chunk`` event of a prompt sent as soon as ``create``
returned: the model's first streamed text). The fake API answers at once, so what is left
is the bridge and the CLI. Median and p95 over ``sessions`` rounds, and warm / cold.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from adapter import (
    Complete,
    LocalBackend,
    MessageChunk,
    PermissionPolicy,
    SessionConfig,
    SessionSpec,
)

from . import procfs
from ._common import percentile

__all__ = ("main", "measure_warm")

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def _real_cli_setup(scratch: Path) -> Any:
    """(cli command, env, cwd, fake API) for the real CLI against the fake Messages API."""
    sys.path.insert(0, str(ROOT))
    from tests.realcli.cli import CLIEnv, find_real_cli
    from tests.realcli.fake_api import FakeAnthropicAPI
    from tests.realcli.netns import NetNamespace

    cli, reason = find_real_cli()
    if cli is None:
        raise SystemExit(f"benchmarks.warm needs the real CLI: {reason}")
    netns = NetNamespace.create()
    try:
        with FakeAnthropicAPI(listen=netns.listen) as api:
            env = CLIEnv.create(scratch / "cli", base_url=api.base_url, proxy_url=api.proxy_url)
            command = netns.wrap(cli, scratch / "wrapper")
            yield str(command), env, api
    finally:
        netns.close()


def _defaults(command: str, env: Any) -> SessionConfig:
    """The session settings both warm benchmarks start sessions (cold or pooled) with."""
    return SessionConfig(
        cli_path=command,
        cwd=env.cwd,
        env=env(),
        policy=PermissionPolicy("autonomous"),
        client_options={"inherit_env": False, "spawn_timeout": 60.0},
    )


async def _first_text(backend: LocalBackend, spec: SessionSpec) -> tuple[float, float, str]:
    """(create seconds, first text seconds, CLI session id) of one new session."""
    start = time.perf_counter()
    info = await backend.create(spec)
    created = time.perf_counter()
    first = 0.0
    async with backend.subscribe(info.id, after_seq=0) as events:
        await backend.prompt(info.id, "go")
        async for event in events:
            if type(event) is MessageChunk and not first:
                first = time.perf_counter()
            if type(event) is Complete:
                break
    cli_session_id = (await backend.info(info.id)).cli_session_id or ""
    await backend.close(info.id)
    return created - start, first - start, cli_session_id


async def _until_warm(backend: LocalBackend) -> None:
    """Until the pool is full, and every CLI we started has stopped using the CPU (a pooled
    CLI goes on loading for a while after its ``initialize``; a closed one is being torn
    down): each measurement starts from the same quiet state, up to 10 s."""
    with anyio.fail_after(120):
        while True:
            status = backend.pool_status()
            if status.warm == status.size and not status.starting:
                break
            await anyio.sleep(0.05)
    with anyio.move_on_after(10):
        last, still = -1, 0
        while still < 3:
            await anyio.sleep(0.1)
            stats = (procfs.read_stat(pid) for pid in procfs.descendants(os.getpid()))
            ticks = sum(s.utime + s.stime for s in stats if s is not None)
            still = still + 1 if ticks == last else 0
            last = ticks


@contextlib.asynccontextmanager
async def _backends(defaults: SessionConfig) -> AsyncIterator[tuple[LocalBackend, LocalBackend]]:
    async with (
        LocalBackend(defaults, idle_timeout=None) as cold,
        LocalBackend(defaults, idle_timeout=None, warm=1) as warm,
    ):
        yield cold, warm


def _summary(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    return {"median_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95), "n": len(ms)}


async def measure_warm(sessions: int = 20) -> dict[str, Any]:
    """The figures (see the module docs)."""
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        scratch = Path(tmp)
        with _real_cli_setup(scratch) as (command, env, api):
            from tests.realcli.script import text_turn

            defaults = _defaults(command, env)
            times: dict[str, dict[str, list[float]]] = {
                mode: {"create": [], "first_text": []} for mode in ("cold", "warm", "resumed")
            }
            load = os.getloadavg()
            async with _backends(defaults) as (cold, warm):
                for round_ in range(sessions):
                    api.add_main(*(text_turn(f"hello {round_} {n}") for n in range(3)))
                    await _until_warm(warm)
                    order = [("cold", cold), ("warm", warm)]
                    if round_ % 2:
                        order.reverse()
                    ids: dict[str, str] = {}
                    for mode, backend in order:
                        created, first, ids[mode] = await _first_text(backend, SessionSpec())
                        times[mode]["create"].append(created)
                        times[mode]["first_text"].append(first)
                        await _until_warm(warm)
                    created, first, _ = await _first_text(cold, SessionSpec(resume=ids["cold"]))
                    times["resumed"]["create"].append(created)
                    times["resumed"]["first_text"].append(first)
            result: dict[str, Any] = {
                "sessions": sessions,
                "load_before": load,
                "load_after": os.getloadavg(),
            }
            for mode, series in times.items():
                result[mode] = {name: _summary(values) for name, values in series.items()}
            cold_first = result["cold"]["first_text"]
            warm_first = result["warm"]["first_text"]
            result["warm_over_cold"] = {
                "median": warm_first["median_ms"] / cold_first["median_ms"],
                "p95": warm_first["p95_ms"] / cold_first["p95_ms"],
            }
            return result


def _table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['sessions']} rounds; load average {result['load_before'][0]:.2f} before, "
        f"{result['load_after'][0]:.2f} after",
        "| session | create median | create p95 | first text median | first text p95 |",
        "|---|---|---|---|---|",
    ]
    for mode in ("cold", "warm", "resumed"):
        c, f = result[mode]["create"], result[mode]["first_text"]
        lines.append(
            f"| {mode} | {c['median_ms']:.0f} ms | {c['p95_ms']:.0f} ms "
            f"| {f['median_ms']:.0f} ms | {f['p95_ms']:.0f} ms |"
        )
    ratio = result["warm_over_cold"]
    lines.append(f"warm / cold, first text: median {ratio['median']:.3f}, p95 {ratio['p95']:.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.warm", description=__doc__)
    parser.add_argument("--sessions", type=int, default=20, help="rounds (20)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    result = anyio.run(measure_warm, args.sessions)
    print(_table(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
