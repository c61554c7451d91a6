"""The AG-UI endpoint, measured: delta latency with many runs at once, and (g) throughput.

``python -m benchmarks.agui latency [--runs 50] [--lines 300] [--rate 100] [--clients 2]
[--pacing poisson|fixed] [--stages]``

A real ``create_app`` server under uvicorn in a child process (:mod:`benchmarks.agui_server`)
over the paced emitter (``BENCH_MODE=paced``: text deltas stamped with ``CLOCK_MONOTONIC``
just before each write); ``runs`` threads each get a first run (which starts its session: not
measured), then ``runs`` runs at once, one per thread. Each emitter writes its deltas as a
Poisson stream of mean rate ``rate`` (``--pacing fixed``: on a fixed period, which makes 50
emitters started together write in step, in bursts of 25-35 deltas, see BENCHMARKS.md).
The streaming clients (:mod:`benchmarks.agui_client`) are ``clients`` child processes of
their own (the threads split between them), so the client side neither shares the server's
event loop nor queues 50 streams behind one loop of its own. Latency is from the emitter's
write to the client's read of the SSE frame that carries the delta (pipe, client decode,
adapter translation, fan-out, AG-UI translation, SSE encoding, the loopback socket, the
client's SSE split and JSON decode). Also reported: frames, the CPU seconds of the server and
of the clients during the measured runs (not the first ones). ``--stages`` adds where each
delta's time went (:mod:`benchmarks.agui_stages`; the probes cost server CPU).

``python -m benchmarks.agui throughput [--lines 120000] [--repeats 3]``

(g): the corpus (:mod:`benchmarks.corpus`, its turns joined into one long CLI turn: the
intermediate ``result`` lines are left out, since an AG-UI run is one turn) streamed
through ``/agui`` to an httpx streaming client, in lines of CLI output per second, against
``ag-ui-claude-sdk`` (the official AG-UI integration over ``claude-agent-sdk``: its
``ClaudeAgentAdapter`` behind its own ``add_claude_fastapi_endpoint``) on the same
emitter as its ``cli_path``, both under uvicorn with the same settings, alternating in one
run. Each measured run is a thread's second run (``BENCH_WARMUP``: the first starts the
session with a one-delta reply), timed from the request to the read of ``RUN_FINISHED``.

``python -m benchmarks.agui memory [--threads 50]``: what an idle AG-UI thread costs beyond
its session, in a fresh interpreter each: ``threads`` sessions that ran one paced reply
through the backend alone, against as many AG-UI threads after one run each (RSS and
``tracemalloc``, after a collection; the difference per thread).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._common import emitter_path, percentile, rss_bytes, spread
from .agui_client import client_main, http_client, http_run, run_body
from .agui_server import ServerProcess, serve_bridge, serve_sdk, uvicorn_stack
from .agui_stages import STAGES_ENV, stage_report

__all__ = (
    "measure_agui",
    "measure_agui_memory",
    "measure_agui_throughput",
    "one_turn_corpus",
    "uvicorn_stack",
)

_ROOT = Path(__file__).resolve().parents[1]


# -- latency --------------------------------------------------------------------------------


def measure_agui(
    cli: str,
    *,
    runs: int = 50,
    lines: int = 300,
    rate: float = 100.0,
    clients: int = 2,
    pacing: str = "poisson",
    stages: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Concurrent AG-UI runs through a real server process (see the module docs)."""
    env = {
        "BENCH_MODE": "paced",
        "BENCH_LINES": str(lines),
        "BENCH_RATE": str(rate),
        "BENCH_PACING": pacing,
    }
    with tempfile.TemporaryDirectory(prefix="agui-stages-") as tmp:
        probes = {STAGES_ENV: os.path.join(tmp, "server.json")} if stages else {}
        results = _measure_latency(cli, env, runs, clients, probes, log)
        if stages:
            results["stages"] = stage_report(probes[STAGES_ENV])
    results.update(lines_per_run=lines, rate=rate, pacing=pacing)
    return results


def _measure_latency(
    cli: str,
    env: dict[str, str],
    runs: int,
    clients: int,
    probes: dict[str, str],
    log: Callable[[str], None],
) -> dict[str, Any]:
    server = ServerProcess("bridge", cli, env, extra_env=probes)
    children: list[subprocess.Popen[str]] = []
    try:
        threads = [uuid.uuid4().hex for _ in range(runs)]
        shares = [threads[i::clients] for i in range(clients) if threads[i::clients]]
        log(
            f"agui latency: {runs} threads in {len(shares)} client processes, a run each to "
            f"start their sessions, then {runs} runs at once"
        )
        for share in shares:
            children.append(
                subprocess.Popen(
                    [sys.executable, "-m", "benchmarks.agui", "client", server.url, *share],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    cwd=_ROOT,
                    env={**os.environ, **probes},
                )
            )
        for child in children:
            assert child.stdout is not None
            if child.stdout.readline().strip() != "ready":
                raise RuntimeError("a latency client failed in its first runs")
        user, system = server.cpu_split()
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        parts = []
        for child in children:
            assert child.stdout is not None
            parts.append(json.loads(child.stdout.readline()))
        user_after, system_after = server.cpu_split()
        server_user, server_system = user_after - user, system_after - system
        server_cpu = server_user + server_system
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout):
                if stream is not None:
                    stream.close()
        server.stop()
    values = sorted(x / 1e6 for part in parts for x in part["latencies"])
    frames = sum(part["frames"] for part in parts)
    seconds = max(part["seconds"] for part in parts)
    ends = [end for part in parts for end in part["ends"]]
    return {
        "clients": len(parts),
        "uvicorn": uvicorn_stack(os.environ.get("BENCH_UVICORN", "asyncio")),
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "concurrent": {
            "runs": runs,
            "finished": ends.count("RUN_FINISHED"),
            "frames": frames,
            "frames_per_s": frames / seconds,
            "seconds": seconds,
            "latency_samples": len(values),
            "p50_ms": percentile(values, 0.50),
            "p99_ms": percentile(values, 0.99),
            "p90_ms": percentile(values, 0.90),
            "p95_ms": percentile(values, 0.95),
            "p999_ms": percentile(values, 0.999),
            "max_ms": values[-1] if values else 0.0,
            "server_cpu_s": server_cpu,
            "server_system_cpu_s": server_system,
            "server_cpu_us_per_delta": server_cpu / max(1, len(values)) * 1e6,
            "clients_cpu_s": sum(part["cpu_s"] for part in parts),
        },
    }


# -- (g) throughput -------------------------------------------------------------------------


def one_turn_corpus(lines: int | None = None, seed: int | None = None) -> tuple[Path, int]:
    """The benchmark corpus as one CLI turn (no intermediate ``result`` lines), cached next
    to it: (path, lines)."""
    import msgspec

    from .corpus import DEFAULT_LINES, DEFAULT_SEED, load_corpus

    corpus = load_corpus(lines or DEFAULT_LINES, DEFAULT_SEED if seed is None else seed)
    path = corpus.path.with_name(corpus.path.stem + "-one-turn.ndjson")
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return path, int(json.loads(meta.read_text())["lines"])

    class _Kind(msgspec.Struct):
        type: str

    decode = msgspec.json.Decoder(_Kind).decode
    kept = [line for line in corpus.lines if decode(line).type != "result"]
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(b"\n".join(kept) + b"\n")
    tmp.replace(path)
    meta.write_text(json.dumps({"lines": len(kept)}))
    return path, len(kept)


async def _timed_run(url: str, thread_id: str) -> dict[str, Any]:
    text = 0
    tools = 0

    def on_event(event: dict[str, Any], stamp: int) -> None:
        nonlocal text, tools
        if event["type"] == "TEXT_MESSAGE_CONTENT":
            text += len(event["delta"])
        elif event["type"] == "TOOL_CALL_START":
            tools += 1

    async with http_client(4) as client:
        await http_run(client, url, thread_id)  # starts the session: a one-delta reply
        started = time.monotonic()
        frames, end = await http_run(client, url, thread_id, on_event)
        elapsed = time.monotonic() - started
    return {"seconds": elapsed, "frames": frames, "end": end, "text_chars": text, "tools": tools}


def _sdk_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ag_ui_claude_sdk") is not None


def measure_agui_throughput(
    cli: str,
    *,
    lines: int | None = None,
    repeats: int = 3,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """(g) and ``ag-ui-claude-sdk`` on the same one-turn corpus, alternating (module docs)."""
    path, count = one_turn_corpus(lines)
    env = {"BENCH_MODE": "corpus", "BENCH_CORPUS": str(path), "BENCH_WARMUP": "1"}
    kinds = ["bridge", *(["sdk"] if _sdk_available() else [])]
    if len(kinds) == 1:
        log("agui throughput: ag-ui-claude-sdk is not installed (pip install '.[bench]')")
    servers: dict[str, ServerProcess] = {}
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    try:
        for kind in kinds:
            servers[kind] = ServerProcess(kind, cli, env)
        for i in range(repeats):
            for kind in kinds:
                server = servers[kind]
                cpu = server.cpu()
                run = asyncio.run(_timed_run(server.url, uuid.uuid4().hex))
                run["server_cpu_s"] = server.cpu() - cpu  # the warm-up run included
                run["lines_per_s"] = count / run["seconds"]
                runs[kind].append(run)
            log(
                f"  repeat {i + 1}/{repeats}: "
                + " ".join(f"{k} {runs[k][-1]['lines_per_s']:,.0f} lines/s" for k in kinds)
            )
    finally:
        for server in servers.values():
            server.stop()
    results: dict[str, Any] = {"lines": count, "repeats": repeats}
    for kind in kinds:
        results[kind] = {
            "runs": runs[kind],
            "lines_per_s": spread([r["lines_per_s"] for r in runs[kind]]),
        }
    if "sdk" in results:
        bridge, sdk = results["bridge"]["lines_per_s"], results["sdk"]["lines_per_s"]
        results["g/sdk"] = bridge["median"] / sdk["median"]
        results["g/sdk_best"] = bridge["max"] / sdk["max"]
    return results


# -- memory of idle threads -----------------------------------------------------------------


async def _memory_child(kind: str, cli: str, threads: int) -> dict[str, Any]:
    """In a fresh interpreter: ``threads`` sessions after one paced reply each, through the
    backend alone (``sessions``) or as AG-UI threads (``threads``); memory after that."""
    import tracemalloc

    import anyio

    from adapter import LocalBackend, PermissionPolicy, SessionConfig, SessionSpec
    from adapter.events import Complete
    from adapter.server.agui.events import decode_run_input
    from adapter.server.agui.runs import AguiService
    from adapter.server.agui.threads import ThreadStore

    config = SessionConfig(
        cli_path=cli,
        env={"BENCH_MODE": "paced", "BENCH_LINES": "300", "BENCH_RATE": "3000"},
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 2, "kill_after": 2},
    )
    shutdown = anyio.Event()

    def measure() -> dict[str, Any]:
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
        return {"rss": rss_bytes(), "traced": current}

    tracemalloc.start()
    async with LocalBackend(config, max_sessions=threads + 10) as backend:
        service = AguiService(backend, ThreadStore(None), shutting_down=lambda: shutdown)
        async with service.running():
            before = measure()
            for _ in range(threads):
                if kind == "sessions":
                    info = await backend.create(SessionSpec())
                    async with backend.subscribe(info.id, after_seq=0) as stream:
                        await backend.prompt(info.id, "go")
                        while not any(type(e) is Complete for e in await stream.receive_batch()):
                            pass
                else:
                    handle = await service.start_run(decode_run_input(run_body(uuid.uuid4().hex)))
                    async for _frame in handle.listen():
                        pass
            await anyio.sleep(1.5)  # the saver's last round and the monitors' batches
            after = measure()
            shutdown.set()
    return {
        "threads": threads,
        "rss_bytes": after["rss"] - before["rss"],
        "traced_bytes": after["traced"] - before["traced"],
    }


def measure_agui_memory(
    cli: str, *, threads: int = 50, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """An idle AG-UI thread's memory beyond its session (module docs)."""
    results: dict[str, Any] = {"threads": threads}
    for kind in ("sessions", "threads"):
        log(f"agui memory: {threads} {kind} in a fresh interpreter")
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.agui", "memory-child", kind, cli, str(threads)],
            capture_output=True,
            text=True,
            cwd=_ROOT,
            check=True,
            timeout=600,
        )
        results[kind] = json.loads(out.stdout.strip().splitlines()[-1])
    for key in ("rss_bytes", "traced_bytes"):
        extra = results["threads"][key] - results["sessions"][key]
        results[f"per_thread_{key}"] = extra / threads
    return results


# -- command line ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.agui``: print the figures as JSON."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["serve"]:
        serve = serve_bridge if args[1] == "bridge" else serve_sdk
        serve(args[2], json.loads(args[3]))
        return 0
    if args[:1] == ["client"]:
        asyncio.run(client_main(args[1], args[2:]))
        return 0
    if args[:1] == ["memory-child"]:
        import anyio

        result = anyio.run(_memory_child, args[1], args[2], int(args[3]))
        print(json.dumps(result), flush=True)
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agui")
    parser.add_argument(
        "what", nargs="?", default="latency", choices=("latency", "throughput", "memory")
    )
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--lines", type=int)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--pacing", choices=("poisson", "fixed"), default="poisson")
    parser.add_argument("--stages", action="store_true", help="where each delta's time went")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=50)
    parsed = parser.parse_args(args)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    cli = emitter_path()
    results: dict[str, Any]
    if parsed.what == "latency":
        results = measure_agui(
            cli,
            runs=parsed.runs,
            lines=parsed.lines or 300,
            rate=parsed.rate,
            clients=parsed.clients,
            pacing=parsed.pacing,
            stages=parsed.stages,
            log=log,
        )
    elif parsed.what == "throughput":
        results = measure_agui_throughput(cli, lines=parsed.lines, repeats=parsed.repeats, log=log)
    else:
        results = measure_agui_memory(cli, threads=parsed.threads, log=log)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
