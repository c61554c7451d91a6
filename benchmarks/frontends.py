"""What the network front ends cost per CLI line, against the adapter in process.

``python -m benchmarks.frontends [--lines 40000] [--repeats 3] [--paths ...] [--profile DIR]
[--baseline CHECKOUT]``

The corpus as one CLI turn (:func:`benchmarks.agui.one_turn_corpus`) from the emitter at
full speed, through, alternating in one run:

* ``adapter``: an :class:`~adapter.AgentSession` in this process and one subscriber (the
  floor: what any front end pays before its own work); our process's CPU;
* ``agui``: ``POST /agui`` of a real :func:`adapter.server.create_app` server under uvicorn
  in a child process (:mod:`benchmarks.agui_server`), read by an httpx stream here;
* ``ws``: the same server's ``/ws``, one ``websockets`` client here subscribed to the
  session (``ws_deflate``: with permessage-deflate);
* ``acp``: ``claudecode-bridge acp`` as a child process, JSON-RPC over its pipes from here.

Each measured turn is a session's second (the first, a one-delta reply, starts it).
Figures: lines per second, and CPU per CLI line of the process doing the front end's work
(ours for ``adapter``, the server's or the agent's for the others; the emitter and the
client are other processes or not counted; to the nanosecond, see
:func:`benchmarks.procfs.cpu_seconds`), and each path's CPU per line as a share of the
adapter's (the issue's "share": adapter CPU / path CPU, 1.0 = free). ``--profile DIR`` runs
the server under cProfile (``DIR/server.prof``, the ``agui`` and ``ws`` turns of every
repeat; the profiler slows everything, so the figures of that run are not comparable).
``--baseline CHECKOUT`` serves the same paths from another checkout's code too
(``agui@base``...), alternating with the others in the same run: a change measured against
what it changes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from ._common import emitter_path, spread
from .agui import one_turn_corpus
from .agui_client import http_client, http_run
from .agui_server import ServerProcess

__all__ = ("main", "measure_frontends")

PROFILE_ENV = "BENCH_SERVER_PROFILE"


async def _adapter_turn(cli: str, env: dict[str, str]) -> dict[str, float]:
    from adapter import AgentSession, Complete, PermissionPolicy, SessionConfig

    config = SessionConfig(cli_path=cli, env=env, policy=PermissionPolicy("autonomous"))
    async with AgentSession(config) as session:
        with session.subscribe() as events:
            await session.prompt("warm up")
            async for event in events:
                if type(event) is Complete:
                    break
            cpu, started = time.process_time(), time.monotonic()
            await session.prompt("go")
            async for event in events:
                if type(event) is Complete:
                    break
            return {"seconds": time.monotonic() - started, "cpu_s": time.process_time() - cpu}


async def _agui_turn(server: ServerProcess) -> dict[str, float]:
    thread = uuid.uuid4().hex
    async with http_client(2) as client:
        await http_run(client, server.url, thread)
        cpu, started = server.cpu(), time.monotonic()
        frames, end = await http_run(client, server.url, thread)
        seconds = time.monotonic() - started
        assert end == "RUN_FINISHED", end
    return {"seconds": seconds, "cpu_s": server.cpu() - cpu, "frames": frames}


async def _ws_turn(server: ServerProcess, compression: str | None) -> dict[str, float]:
    from websockets.asyncio.client import connect

    url = "ws" + server.url.removeprefix("http") + "/ws"
    loads = json.loads
    async with connect(url, max_size=None, compression=compression) as ws:
        counter = iter(range(1, 1 << 30))

        async def request(frame: dict[str, Any]) -> dict[str, Any]:
            rid = f"r{next(counter)}"
            await ws.send(json.dumps({**frame, "request_id": rid}))
            while True:
                reply = loads(await ws.recv())
                if reply.get("request_id") == rid:
                    return dict(reply)

        async def turn(sid: str) -> int:
            await request({"type": "prompt", "session_id": sid, "text": "go"})
            frames = 0
            while True:
                frame = loads(await ws.recv())
                if frame["type"] != "event":
                    continue
                frames += 1
                if frame["event"]["type"] == "complete":
                    return frames

        ack = await request({"type": "create_session"})
        sid = ack["session_id"]
        await request({"type": "subscribe", "session_id": sid, "since_seq": 0})
        await turn(sid)
        cpu, started = server.cpu(), time.monotonic()
        frames = await turn(sid)
        seconds = time.monotonic() - started
        used = server.cpu() - cpu
        await request({"type": "close_session", "session_id": sid})
    return {"seconds": seconds, "cpu_s": used, "frames": frames}


KINDS = ("adapter", "agui", "ws", "ws_deflate", "acp")
#: With ``--baseline``: the same front ends served by another checkout's code.
BASE_KINDS = ("agui@base", "ws@base", "ws_deflate@base", "acp@base")


async def _acp_turn(cli: str, env: dict[str, str], root: Path) -> dict[str, float]:
    """``claudecode-bridge acp`` (``root``'s code) as a child process spoken to over its
    pipes with JSON-RPC; the child's CPU during the second turn."""
    import sys
    import tempfile

    from . import procfs

    with tempfile.TemporaryDirectory(prefix="bench-acp-") as work:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "adapter",
            "acp",
            "--cli",
            cli,
            "--policy",
            "autonomous",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=root,
            env={**os.environ, **env, "PYTHONPATH": str(root)},
            limit=1 << 26,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout
        ids = iter(range(1, 1 << 30))

        async def request(method: str, params: dict[str, Any]) -> Any:
            rid = next(ids)
            line = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
            stdin.write(json.dumps(line).encode() + b"\n")
            updates = 0
            while True:
                message = json.loads(await stdout.readline())
                if message.get("id") == rid and "method" not in message:
                    return message.get("result"), updates
                if message.get("method") == "session/update":
                    updates += 1

        def cpu() -> float:
            return procfs.cpu_seconds(proc.pid)

        try:
            await request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            new, _ = await request("session/new", {"cwd": work, "mcpServers": []})
            prompt = {"sessionId": new["sessionId"], "prompt": [{"type": "text", "text": "go"}]}
            await request("session/prompt", prompt)
            used, started = cpu(), time.monotonic()
            result, updates = await request("session/prompt", prompt)
            seconds = time.monotonic() - started
            used = cpu() - used
            assert result["stopReason"] == "end_turn", result
        finally:
            stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
    return {"seconds": seconds, "cpu_s": used, "frames": updates}


def measure_frontends(
    *,
    lines: int = 40_000,
    repeats: int = 3,
    profile: Path | None = None,
    kinds: tuple[str, ...] = KINDS,
    baseline: Path | None = None,
) -> dict[str, Any]:
    """The figures (see the module docs)."""
    path, count = one_turn_corpus(lines)
    cli = str(emitter_path())
    env = {"BENCH_MODE": "corpus", "BENCH_CORPUS": str(path), "BENCH_WARMUP": "1"}
    extra = {} if profile is None else {PROFILE_ENV: str(profile / "server.prof")}
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
    server = ServerProcess("bridge", cli, env, extra)
    base = None if baseline is None else ServerProcess("bridge", cli, env, root=baseline)
    if base is not None:
        kinds = (*kinds, *(k + "@base" for k in kinds if k + "@base" in BASE_KINDS))
    runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    load = os.getloadavg()
    try:
        for i in range(repeats):
            order = list(kinds) if i % 2 == 0 else list(reversed(kinds))
            for kind in order:
                name, _, where = kind.partition("@")
                target = base if where else server
                assert target is not None
                if name == "adapter":
                    run = asyncio.run(_adapter_turn(cli, env))
                elif name == "acp":
                    root = Path(__file__).resolve().parents[1] if not where else baseline
                    assert root is not None
                    run = asyncio.run(_acp_turn(cli, env, root))
                elif name == "agui":
                    run = asyncio.run(_agui_turn(target))
                else:
                    compression = "deflate" if name == "ws_deflate" else None
                    run = asyncio.run(_ws_turn(target, compression))
                run["lines_per_s"] = count / run["seconds"]
                run["cpu_us_per_line"] = run["cpu_s"] / count * 1e6
                runs[kind].append(run)
            print(
                f"  repeat {i + 1}/{repeats}: "
                + ", ".join(
                    f"{k} {runs[k][-1]['cpu_us_per_line']:.2f} µs/line "
                    f"{runs[k][-1]['lines_per_s']:,.0f} lines/s"
                    for k in kinds
                ),
                flush=True,
            )
    finally:
        server.stop()
        if base is not None:
            base.stop()
    result: dict[str, Any] = {
        "lines": count,
        "repeats": repeats,
        "load_before": load,
        "load_after": os.getloadavg(),
        "profiled": profile is not None,
    }
    floor = runs.get("adapter") or [{"cpu_us_per_line": float("nan"), "lines_per_s": float("nan")}]
    base_cpu = spread([r["cpu_us_per_line"] for r in floor])["median"]
    base_rate = spread([r["lines_per_s"] for r in floor])["median"]
    for kind in kinds:
        cpu = spread([r["cpu_us_per_line"] for r in runs[kind]])
        rate = spread([r["lines_per_s"] for r in runs[kind]])
        result[kind] = {
            "runs": runs[kind],
            "cpu_us_per_line": cpu,
            "lines_per_s": rate,
            # A kernel without per-process CPU clocks counts 10 ms ticks: maybe none.
            "cpu_share": base_cpu / cpu["median"] if cpu["median"] else float("nan"),
            "rate_share": rate["median"] / base_rate,
        }
    return result


def _table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['lines']:,} lines x {result['repeats']}; load average "
        f"{result['load_before'][0]:.2f} before, {result['load_after'][0]:.2f} after"
        + (" (PROFILED)" if result["profiled"] else ""),
        "| path | CPU µs/line (median) | lines/s (median) | CPU share | lines/s share |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind in (*KINDS, *BASE_KINDS):
        if kind not in result:
            continue
        r = result[kind]
        lines.append(
            f"| {kind} | {r['cpu_us_per_line']['median']:.2f} | "
            f"{r['lines_per_s']['median']:,.0f} | {r['cpu_share']:.2f} | {r['rate_share']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.frontends", description=__doc__)
    parser.add_argument("--lines", type=int, default=40_000, help="corpus lines (40,000)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats (3)")
    parser.add_argument("--profile", type=Path, help="write the server's cProfile here")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout (e.g. a git worktree of main) whose server runs the same paths too",
    )
    parser.add_argument(
        "--paths", default=",".join(KINDS), help=f"comma-separated among {', '.join(KINDS)}"
    )
    args = parser.parse_args(argv)
    kinds = tuple(k for k in args.paths.split(",") if k)
    if not set(kinds) <= set(KINDS):
        parser.error(f"--paths: among {', '.join(KINDS)}")
    result = measure_frontends(
        lines=args.lines,
        repeats=args.repeats,
        profile=args.profile,
        kinds=kinds,
        baseline=args.baseline,
    )
    print(_table(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
