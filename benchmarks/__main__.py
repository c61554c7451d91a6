"""``python -m benchmarks``: run the benchmarks and write JSON + Markdown.

Default run (about 2-3 minutes on 2 cores): the full corpus (~120k lines, ~47 MB) with 7
repeats of (a)-(f), latency with 1/10/50 sessions, memory probes (20 sessions; 25/50/100 MiB
lines), 100 sessions at once. ``--quick`` shrinks everything to a ~30-40 s smoke run.
Results go to ``benchmarks/results/<timestamp>.{json,md}`` (and ``latest.{json,md}``);
``--update-md`` also replaces the results section of ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from ._common import emitter_path, machine
from .corpus import DEFAULT_LINES, DEFAULT_SEED, load_corpus
from .report import markdown

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
BENCHMARKS_MD = ROOT.parent / "BENCHMARKS.md"
START_MARK = "<!-- results:start -->"
END_MARK = "<!-- results:end -->"
SECTIONS = (
    "throughput",
    "latency",
    "memory",
    "scale",
    "acp",
    "terminals",
    "ws",
    "history",
    "agui",
)


def _log(text: str) -> None:
    print(text, flush=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Throughput, latency, memory and scale of the bridge.",
    )
    parser.add_argument("--quick", action="store_true", help="a ~30-40 s smoke run")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections among {', '.join(SECTIONS)}",
    )
    parser.add_argument("--repeats", type=int, help="repeats of (a)-(f) (default 7, quick 2)")
    parser.add_argument("--lines", type=int, help=f"corpus lines (default {DEFAULT_LINES:,})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio"))
    parser.add_argument("--sessions", type=int, help="sessions in the scale run (default 100)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory for the results")
    parser.add_argument(
        "--update-md", action="store_true", help="replace the results section of BENCHMARKS.md"
    )
    return parser


def _update_md(path: Path, table: str) -> None:
    text = path.read_text() if path.exists() else f"# Benchmarks\n\n{START_MARK}\n{END_MARK}\n"
    head, sep, rest = text.partition(START_MARK)
    if not sep:
        head, rest = text + "\n", END_MARK
    _, sep, tail = rest.partition(END_MARK)
    path.write_text(f"{head}{START_MARK}\n{table}{END_MARK}{tail if sep else ''}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the selected sections; return the results (also written to ``args.out``)."""
    quick = args.quick
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections: {', '.join(sorted(unknown))}")
    started = time.time()
    command = "python -m benchmarks " + " ".join(sys.argv[1:])
    results: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)),
        "command": command.strip(),
        "machine": machine(),
        "loadavg_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    cli = emitter_path()
    lines = args.lines or (40_000 if quick else DEFAULT_LINES)
    if "throughput" in sections:
        from .throughput import measure_throughput

        corpus = load_corpus(lines, args.seed)
        _log(f"throughput: corpus {len(corpus.lines):,} lines, {corpus.nbytes / 1e6:.1f} MB")
        repeats = args.repeats or (2 if quick else 7)
        tp = measure_throughput(corpus, cli, repeats=repeats, backend=args.backend, log=_log)
        tp["corpus"] = {
            "lines": len(corpus.lines),
            "bytes": corpus.nbytes,
            "turns": corpus.turns,
            "seed": args.seed,
        }
        results["throughput"] = tp
    if "latency" in sections:
        from .latency import measure_latency

        _log("latency")
        results["latency"] = measure_latency(
            cli,
            lines=60 if quick else 300,
            rate=100.0,
            levels=("adapter",) if quick else ("adapter", "client", "raw"),
            backend=args.backend,
            log=_log,
        )
    if "memory" in sections:
        from .memory import measure_memory

        _log("memory")
        mib = 1 << 20
        results["memory"] = measure_memory(
            cli,
            sessions=10 if quick else 20,
            stream_lines=400 if quick else 2000,
            big_sizes=(8 * mib, 16 * mib) if quick else (25 * mib, 50 * mib, 100 * mib),
            levels=("adapter",) if quick else ("adapter", "client"),
            repeats=1 if quick else 3,
            long_sessions=5 if quick else 10,
            long_lines=3000 if quick else 12_000,
            log=_log,
        )
    if "scale" in sections:
        from .scale import measure_scale

        _log("scale")
        small = load_corpus(300 if quick else 3000, args.seed)
        results["scale"] = measure_scale(
            cli, small, sessions=args.sessions or 100, backend=args.backend, log=_log
        )
    if "acp" in sections:
        from .acp import client_available, measure_acp

        if client_available():
            corpus = load_corpus(lines, args.seed)
            _log(f"acp: (d) and (h) on {len(corpus.lines):,} lines")
            results["acp"] = measure_acp(
                corpus,
                cli,
                repeats=args.repeats or (2 if quick else 5),
                backend=args.backend,
                log=_log,
            )
            results["acp"]["corpus_lines"] = len(corpus.lines)
        else:
            _log("acp: skipped (needs node and the ACP client: scripts/install-test-deps)")
    if "terminals" in sections:
        from .terminals import measure_terminals

        _log("terminals: (i) throughput, (j) echo latency, (k) memory")
        results["terminals"] = measure_terminals(quick=quick, backend=args.backend, log=_log)
    if "ws" in sections:
        from .ws import measure_ws

        results["ws"] = measure_ws(
            cli,
            fanout_clients=20 if quick else 100,
            sessions=10 if quick else 50,
            lines=60 if quick else 300,
            idle=100 if quick else 500,
            log=_log,
        )
    if "history" in sections:
        from .ws import measure_history

        _log("history")
        results["history"] = measure_history(
            files=100 if quick else 1000, big_mb=20 if quick else 200, log=_log
        )
    if "agui" in sections:
        from .agui import measure_agui, measure_agui_memory, measure_agui_throughput

        results["agui"] = {
            "throughput": measure_agui_throughput(
                cli, lines=lines, repeats=args.repeats or (2 if quick else 3), log=_log
            ),
            "latency": measure_agui(
                cli, runs=10 if quick else 50, lines=60 if quick else 300, log=_log
            ),
            "memory": measure_agui_memory(cli, threads=10 if quick else 50, log=_log),
        }
    results["elapsed_s"] = time.time() - started
    results["loadavg_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return results


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m benchmarks``."""
    args = _parser().parse_args(argv)
    results = run(args)
    table = markdown(results)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for name in (stamp, "latest"):
        (out / f"{name}.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
        (out / f"{name}.md").write_text(table)
    if args.update_md:
        _update_md(BENCHMARKS_MD, table)
    _log("")
    _log(table)
    _log(f"written: {out / (stamp + '.json')}, {out / (stamp + '.md')}")


if __name__ == "__main__":
    main()
