"""The Markdown form of a benchmark run, with the targets checked."""

from __future__ import annotations

from typing import Any

__all__ = ("markdown", "targets")

_MIB = 1 << 20


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _ok(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "**missed**")


def targets(results: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) for every target the run covers."""
    rows: list[tuple[str, str, bool | None]] = []
    tp = results.get("throughput")
    if tp:
        ratios = tp["ratios"]
        best = tp.get("best_ratios", {})
        for key, label, goal, fmt in (
            ("c/f", "(c) >= 8x the official SDK: (c)/(f)", 8.0, "{:.1f}x"),
            ("c/a", "(c) >= 50% of the msgspec limit: (c)/(a)", 0.5, "{:.0%}"),
            ("d/c", "(d) >= 60% of (c): (d)/(c)", 0.6, "{:.0%}"),
        ):
            value = ratios.get(key)
            if value is None:
                continue
            text = fmt.format(value)
            if best.get(key) is not None:
                text += " (best runs: " + fmt.format(best[key]) + ")"
            rows.append((label, text, value >= goal))
    acp = results.get("acp")
    if acp:
        rows.append(
            (
                "(h) >= 50% of (d): (h)/(d)",
                f"{acp['ratio']:.0%} (best runs: {acp['best_ratio']:.0%})",
                acp["ratio"] >= 0.5,
            )
        )
    lat = results.get("latency")
    if lat:
        for run in lat["runs"]:
            if run["level"] == "adapter" and run["sessions"] == max(
                r["sessions"] for r in lat["runs"]
            ):
                rows.append(
                    (
                        f"p99 latency < 2 ms with {run['sessions']} sessions",
                        f"{run['p99_ms']:.2f} ms",
                        run["p99_ms"] < 2.0,
                    )
                )
    mem = results.get("memory")
    if mem:
        for row in mem["sessions"]:
            if row["level"] == "adapter":
                kib = row["per_idle_session"] / 1024
                rows.append(
                    (
                        "< 1 MB own RSS per idle session (adapter, fresh)",
                        f"{kib:,.0f} KiB",
                        row["per_idle_session"] < 1_000_000,
                    )
                )
                if "per_session_after_long_turn" in row:
                    after = row["per_session_after_long_turn"]
                    rows.append(
                        (
                            "< 1 MB own RSS per idle session (adapter, after a "
                            f"{row['long_turn_lines']:,}-line turn)",
                            f"{after / 1024:,.0f} KiB",
                            after < 1_000_000,
                        )
                    )
        big = [b for b in mem["bigline"] if b["level"] == "adapter"] or mem["bigline"]
        if big:
            largest = max(big, key=lambda b: b["size"])
            worst = max(b["peak_rss_x_line"] for b in big)
            traced = max(b["peak_traced_x_line"] for b in big)
            smallest = min(big, key=lambda b: b["size"])
            growth = largest["seconds_per_mib"] / smallest["seconds_per_mib"]
            rows.append(
                (
                    f"big line: peak RSS < 3x the line ({largest['level']})",
                    f"{worst:.2f}x (tracemalloc peak: {traced:.2f}x)",
                    worst < 3,
                )
            )
            rows.append(
                (
                    "big line: time linear in size (s/MiB at the largest / at the smallest "
                    f"size; quadratic would be {largest['size'] / smallest['size']:.0f})",
                    f"{growth:.2f}",
                    growth < 1.5,
                )
            )
    sc = results.get("scale")
    if sc:
        rows.append(
            (
                f"{sc['sessions']} sessions: no session below half the mean rate",
                f"slowest {sc['slowest_share_of_mean']:.0%}",
                sc["slowest_share_of_mean"] >= 0.5,
            )
        )
        bounded = (
            sc["peak_client_batches"] <= sc["client_batches_bound"]
            and sc["peak_subscriber_events"] <= sc["subscriber_events_bound"]
        )
        rows.append(
            (
                f"{sc['sessions']} sessions: every channel bounded",
                f"{sc['peak_client_batches']} batches, {sc['peak_subscriber_events']} "
                f"events, {sc['subscribers_dropped']} dropped",
                bounded,
            )
        )
    term = results.get("terminals")
    if term:
        tp = term["throughput"]
        for key, label in (("screen_off", "screen off"), ("screen_on", "screen on")):
            share = tp[key]["share_of_raw"]
            rows.append(
                (
                    f"(i) terminal -> WebSocket >= 50% of the raw pty rate, {label}",
                    f"{share:.0%}",
                    share >= 0.5,
                )
            )
        for key, label in (("screen_off", "screen off"), ("screen_on", "screen on")):
            p99 = term["echo"][key]["p99_ms"]
            rows.append(
                (
                    f"(j) keystroke echo p99 < 10 ms with 20 busy terminals, {label}",
                    f"{p99:.1f} ms",
                    p99 < 10,
                )
            )
    ws = results.get("ws")
    if ws:
        many = ws["sessions"]
        rows.append(
            (
                f"WebSocket, {many['sessions']} sessions x 2 clients: p99 latency < 5 ms",
                f"{many['p99_ms']:.2f} ms",
                many["p99_ms"] < 5.0,
            )
        )
        if "steady_p99_ms" in many:
            rows.append(
                (
                    f"WebSocket, {many['sessions']} sessions x 2 clients: p99 < 5 ms while all "
                    "stream (after the prompts, before the first end)",
                    f"{many['steady_p99_ms']:.2f} ms",
                    many["steady_p99_ms"] < 5.0,
                )
            )
        listing = ws.get("sessions_list")
        if listing:
            rows.append(
                (
                    f"WebSocket, {listing['sessions']} sessions x 2 clients that also watch the "
                    "session list (every state change to every client), p99 (measured)",
                    f"{listing['p99_ms']:.2f} ms",
                    None,
                )
            )
        idle = ws["idle"]["per_connection_bytes"]
        rows.append(
            (
                "WebSocket: server memory per idle connection < 256 KiB",
                f"{idle / 1024:.0f} KiB",
                idle < 256 * 1024,
            )
        )
    rows += _agui_targets(results)
    return rows


def _agui_targets(results: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    rows: list[tuple[str, str, bool | None]] = []
    agui = results.get("agui")
    if not agui:
        return rows
    g = agui.get("throughput")
    if g:
        median = g["bridge"]["lines_per_s"]["median"]
        d = (results.get("throughput") or {}).get("d")
        if d:
            share = median / d["lines_per_s"]["median"]
            rows.append(
                ("(g) AG-UI over HTTP >= 50% of (d): (g)/(d)", f"{share:.0%}", share >= 0.5)
            )
        if "g/sdk" in g:
            rows.append(
                (
                    "(g) >= 5x ag-ui-claude-sdk on the same emitter",
                    f"{g['g/sdk']:.1f}x (best runs: {g['g/sdk_best']:.1f}x)",
                    g["g/sdk"] >= 5,
                )
            )
    lat = agui.get("latency")
    if lat:
        c = lat["concurrent"]
        rows.append(
            (
                f"AG-UI text delta p99 < 5 ms with {c['runs']} concurrent runs",
                f"{c['p99_ms']:.2f} ms",
                c["p99_ms"] < 5.0,
            )
        )
    mem = agui.get("memory")
    if mem:
        per = mem["per_thread_rss_bytes"]
        rows.append(
            (
                "AG-UI memory per idle thread < 1 MiB beyond its session",
                f"{per / 1024:.0f} KiB RSS, {mem['per_thread_traced_bytes'] / 1024:.0f} KiB traced",
                per < 1 << 20 and mem["per_thread_traced_bytes"] < 1 << 20,
            )
        )
    return rows


def _agui_md(agui: dict[str, Any]) -> list[str]:
    out = ["", "### AG-UI (`python -m benchmarks.agui`)"]
    g = agui.get("throughput")
    if g:
        out += [
            "",
            f"(g) the corpus as one CLI turn ({g['lines']:,} lines) to an httpx streaming client, "
            f"{g['repeats']} alternating repeats:",
            "",
            "| server | lines/s min | median | max | frames | text chars | tool calls |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for kind, label in (("bridge", "claudecode-bridge /agui"), ("sdk", "ag-ui-claude-sdk")):
            if kind in g:
                lps = g[kind]["lines_per_s"]
                run = g[kind]["runs"][-1]
                out.append(
                    f"| {label} | {_n(lps['min'])} | {_n(lps['median'])} | {_n(lps['max'])} | "
                    f"{_n(run['frames'])} | {_n(run['text_chars'])} | {run['tools']} |"
                )
    lat = agui.get("latency")
    if lat:
        c = lat["concurrent"]
        out += [
            "",
            f"Latency, {c['runs']} runs at once ({lat['lines_per_run']} deltas each at "
            f"{lat['rate']:.0f}/s, {lat.get('pacing', 'fixed')} pacing, "
            f"{lat['clients']} client processes, uvicorn "
            f"{lat['uvicorn']['loop']} + {lat['uvicorn']['http']}):",
            "",
            "| samples | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | server CPU µs/delta | "
            "clients CPU s |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {_n(c['latency_samples'])} | {c['p50_ms']:.2f} | {c['p90_ms']:.2f} | "
            f"{c['p99_ms']:.2f} | {c['p999_ms']:.2f} | {c['max_ms']:.2f} | "
            f"{c['server_cpu_us_per_delta']:.0f} | {c['clients_cpu_s']:.2f} |",
        ]
    mem = agui.get("memory")
    if mem:
        out += [
            "",
            f"Idle threads ({mem['threads']['threads']}, one run each, beyond their sessions): "
            f"{mem['per_thread_rss_bytes'] / 1024:.0f} KiB RSS and "
            f"{mem['per_thread_traced_bytes'] / 1024:.0f} KiB traced per thread.",
        ]
    return out


def _ws_md(ws: dict[str, Any]) -> list[str]:
    out = [
        "",
        f"### WebSocket ({ws['lines_per_session']} text deltas per session at "
        f"{ws['rate']:.0f}/s; emitter write -> client read)",
        "",
        "| run | clients | events delivered | events/s | p50 ms | p99 ms | max ms | server CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, label in (
        ("fanout", "1 session"),
        ("sessions", f"{ws['sessions']['sessions']} sessions"),
        ("sessions_list", f"{ws['sessions']['sessions']} sessions, clients watching the list"),
    ):
        if key not in ws:
            continue
        r = ws[key]
        clients = r["sessions"] * r["clients_per_session"]
        out.append(
            f"| {label} | {clients} | {_n(r['events_delivered'])} | "
            f"{_n(r['events_per_s'])} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | "
            f"{r['max_ms']:.2f} | {r['server_cpu_s']:.1f} |"
        )
    fan, many = ws["fanout"], ws["sessions"]
    if "steady_p99_ms" in many:
        out += [
            "",
            "While every session streams (deltas written after the last prompt's ack and "
            "before the first session's end; sending the prompts took "
            f"{fan['prompts_s'] * 1000:,.0f} ms and {many['prompts_s'] * 1000:,.0f} ms):",
            "",
            "| run | deltas timed | p50 ms | p99 ms | max ms |",
            "|---|---:|---:|---:|---:|",
        ]
        for r, label in ((fan, "1 session"), (many, f"{many['sessions']} sessions")):
            out.append(
                f"| {label} | {_n(r['steady_samples'])} | {r['steady_p50_ms']:.2f} | "
                f"{r['steady_p99_ms']:.2f} | {r['steady_max_ms']:.2f} |"
            )
    if "client_processes" in many:
        out += [
            "",
            f"Clients spread over {many['client_processes']} processes (their CPU: "
            f"{fan['clients_cpu_s']:.1f} s and {many['clients_cpu_s']:.1f} s); text deltas "
            f"timed: {_n(fan['latency_samples'])} and {_n(many['latency_samples'])} (deltas "
            "read together from the CLI travel in one event frame).",
        ]
    idle = ws["idle"]
    before, after = idle["rss_before"] / _MIB, idle["rss_after"] / _MIB
    out += [
        "",
        f"Idle connections: {idle['connections']} -> server RSS {before:,.1f} -> "
        f"{after:,.1f} MiB, {idle['per_connection_bytes'] / 1024:,.0f} KiB each.",
    ]
    return out


def _history_md(h: dict[str, Any]) -> list[str]:
    base = h["interpreter_peak_rss"]
    many, big = h["list_many"], h["big"]
    return [
        "",
        "### Session history (adapter.history.transcripts, in a fresh interpreter each)",
        "",
        "| task | seconds | CPU seconds | peak RSS (MiB) | over the bare interpreter (MiB) |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {label} | {row['seconds']:.3f} | {row.get('cpu_s', 0.0):.3f} | "
            f"{row['peak_rss'] / _MIB:,.0f} | {(row['peak_rss'] - base) / _MIB:,.1f} |"
            for label, row in (
                (f"list {many['files']:,} transcripts", many),
                (f"list one {big['bytes'] / 1e6:,.0f} MB transcript", big["list"]),
                ("load it as events", big["load"]),
            )
        ),
    ]


def markdown(results: dict[str, Any]) -> str:
    """The results as Markdown tables (machine, command, targets, then each section)."""
    m = results["machine"]
    out = [
        f"Run {results['started']} with `{results['command']}` ({results['elapsed_s']:.0f} s).",
        "",
        f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['memory_gib']} GiB, {m['os']}, "
        f"{m['implementation']} {m['python']}; load average at start "
        f"{results['loadavg_start']}, at end {results['loadavg_end']}. Packages: "
        + ", ".join(f"{k} {v}" for k, v in m["packages"].items())
        + ".",
        "",
        "### Targets",
        "",
        "| target | measured | |",
        "|---|---|---|",
    ]
    out += [f"| {t} | {v} | {_ok(ok)} |" for t, v, ok in targets(results)]
    tp = results.get("throughput")
    if tp:
        c = tp["corpus"]
        out += [
            "",
            f"### Throughput ({c['lines']:,} lines, {c['bytes'] / 1e6:.1f} MB, {c['turns']} turns;"
            f" {tp['repeats']} repeats, {tp['backend']})",
            "",
            "| | path | lines/s min | median | max | MB/s median | our CPU µs/line (median) |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for key in "abcdef":
            if key in tp:
                row = tp[key]
                lps = row["lines_per_s"]
                out.append(
                    f"| ({key}) | {row['name']} | {_n(lps['min'])} | {_n(lps['median'])} | "
                    f"{_n(lps['max'])} | {row['mb_per_s']['median']:.1f} | "
                    f"{row['cpu_us_per_line']['median']:.2f} |"
                )
        ratios = ", ".join(f"{k} = {v:.2f}" for k, v in tp["ratios"].items() if v is not None)
        out += ["", f"Ratios of medians: {ratios}."]
        for name, label in (
            ("best_ratios", "Ratios of the best runs (other load only ever slows a run down)"),
            ("cpu_ratios", "Ratios of our process's median CPU time per line"),
        ):
            values = ", ".join(
                f"{k} = {v:.2f}" for k, v in tp.get(name, {}).items() if v is not None
            )
            if values:
                out += ["", f"{label}: {values}."]
        counts = tp.get("counts", {})
        if counts:
            out += [
                "",
                f"Messages / events per run: (c) {_n(counts.get('c', 0))} messages, "
                f"(d) {_n(counts.get('d', 0))} events, (e) {_n(counts.get('e_bytes', 0) / 1e6)}"
                f" MB of event JSON, (f) {_n(counts.get('f', 0))} messages.",
            ]
    lat = results.get("latency")
    if lat:
        out += [
            "",
            f"### Latency (emitter write -> receipt; {lat['lines_per_session']} text deltas per "
            f"session at {lat['rate_per_session']:g} lines/s)",
            "",
            "| level | sessions | samples | p50 ms | p99 ms | max ms | CPU ours | "
            "our CPU µs per line | CPU emitters |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        out += [
            f"| {r['level']} | {r['sessions']} | {r['samples']:,} | {r['p50_ms']:.3f} | "
            f"{r['p99_ms']:.3f} | {r['max_ms']:.3f} | {r['cpu_ours']:.0%} | "
            f"{r['cpu_us_per_line']:.0f} | {r['cpu_emitters']:.0%} |"
            for r in lat["runs"]
        ]
    mem = results.get("memory")
    if mem:
        out += [
            "",
            "### Memory (our process only)",
            "",
            "| level | sessions | KiB per idle session | KiB per streaming session | "
            "KiB per session idle after a long turn |",
            "|---|---:|---:|---:|---:|",
        ]
        out += [
            f"| {r['level']} | {r['sessions']} | {r['per_idle_session'] / 1024:,.0f} | "
            f"{r['per_streaming_session'] / 1024:,.0f} | "
            f"{r['per_session_after_long_turn'] / 1024:,.0f} "
            f"(x{r['long_turn_sessions']}, {r['long_turn_lines']:,} lines) |"
            for r in mem["sessions"]
        ]
        out += [
            "",
            "| level | line MiB | seconds | ms per MiB | peak RSS above start | x line | "
            "peak traced | x line |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        out += [
            f"| {b['level']} | {b['size'] / _MIB:.0f} | {b['seconds']:.3f} | "
            f"{b['seconds_per_mib'] * 1000:.2f} | {b['peak_rss_above_before'] / _MIB:,.0f} MiB | "
            f"{b['peak_rss_x_line']:.2f} | {b['peak_traced'] / _MIB:,.0f} MiB | "
            f"{b['peak_traced_x_line']:.2f} |"
            for b in mem["bigline"]
        ]
    sc = results.get("scale")
    if sc:
        rate = sc["session_rate"]
        out += [
            "",
            f"### Scale ({sc['sessions']} adapter sessions at once, {sc['lines_per_session']:,} "
            "corpus lines each)",
            "",
            "| aggregate lines/s | MB/s | wall s | session lines/s min / mean / max "
            "| slowest / mean | peak client backlog (bound) "
            "| peak subscriber backlog (bound) | dropped | RSS idle -> peak |",
            "|---:|---:|---:|---|---:|---|---|---:|---|",
            f"| {_n(sc['aggregate_lines_per_s'])} | {sc['aggregate_mb_per_s']:.1f} | "
            f"{sc['wall_seconds']:.2f} | {_n(rate['min'])} / {_n(rate['mean'])} / "
            f"{_n(rate['max'])} | {sc['slowest_share_of_mean']:.0%} | "
            f"{sc['peak_client_batches']} batches ({sc['client_batches_bound']}) | "
            f"{sc['peak_subscriber_events']} events ({sc['subscriber_events_bound']}) | "
            f"{sc['subscribers_dropped']} | {sc['rss_idle_sessions'] / _MIB:,.0f} -> "
            f"{sc['rss_peak_streaming'] / _MIB:,.0f} MiB |",
        ]
    acp = results.get("acp")
    if acp:
        out += [
            "",
            f"### (h) The ACP agent ({acp['corpus_lines']:,} corpus lines;"
            f" {acp['repeats']} repeats, (d) and (h) alternately)",
            "",
            "| | path | lines/s min | median | max |",
            "|---|---|---:|---:|---:|",
        ]
        for key in ("d", "h"):
            row = acp[key]
            lps = row["lines_per_s"]
            out.append(
                f"| ({key}) | {row['name']} | {_n(lps['min'])} | {_n(lps['median'])} | "
                f"{_n(lps['max'])} |"
            )
        out += [
            "",
            f"(h)/(d): {acp['ratio']:.2f} (medians), {acp['best_ratio']:.2f} (best runs); "
            f"{_n(acp['h']['updates'])} session/update notifications per run.",
        ]
    term = results.get("terminals")
    if term:
        tp = term["throughput"]
        mem = term["memory"]
        out += [
            "",
            f"### (i)-(k) Terminal sessions (`cat` of {term['file_bytes'] / 1e6:.0f} MB)",
            "",
            "| (i) path | MB/s | share of raw |",
            "|---|---:|---:|",
            f"| raw pty read (before / after) | {tp['raw']['bytes_per_s'] / 1e6:.0f} / "
            f"{tp['raw_after']['bytes_per_s'] / 1e6:.0f} | 100% |",
        ]
        for key, label in (("screen_off", "screen off"), ("screen_on", "screen on")):
            row = tp[key]
            out.append(
                f"| session -> 1 WebSocket viewer, {label} | {row['bytes_per_s'] / 1e6:.0f} | "
                f"{row['share_of_raw']:.0%} |"
            )
        out += [
            "",
            "| (j) keystroke echo, 20 busy terminals | p50 ms | p99 ms | max ms |",
            "|---|---:|---:|---:|",
        ]
        for key, label in (("screen_off", "screen off"), ("screen_on", "screen on")):
            echo = term["echo"][key]
            out.append(
                f"| {label} ({echo['keys']} keys) | {echo['p50_ms']:.2f} | "
                f"{echo['p99_ms']:.2f} | {echo['max_ms']:.2f} |"
            )
        out += [
            "",
            f"(k) memory per idle terminal: {mem['per_terminal'] / 1024:.1f} KiB allocated "
            f"(tracemalloc), RSS growth {mem['rss_per_terminal'] / 1024:.1f} KiB "
            f"({mem['terminals']} terminals; the programs' own memory not counted).",
        ]
    if results.get("ws"):
        out += _ws_md(results["ws"])
    if results.get("history"):
        out += _history_md(results["history"])
    if results.get("agui"):
        out += _agui_md(results["agui"])
    return "\n".join(out) + "\n"
