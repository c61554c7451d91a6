"""The CLI's stored session history, measured: listing many transcripts and listing and
loading a very large one (:func:`measure_history`), each in a fresh interpreter."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ("measure_history",)

_FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "fixtures"
    / "history"
    / "projects"
    / "-work-demo"
    / "8e0ef7c0-2997-4c14-89ba-3bc6b8f3c1d7.jsonl"
)


def _peak(
    code: str, setup: str = "from adapter.chat import list_sessions, load_events"
) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter after ``setup``; its wall time and peak RSS.

    The peak is the child's own ``VmHWM``: ``ru_maxrss`` survives ``exec``, so a child of a
    big benchmark process would report its parent's peak."""
    wrapper = (
        "import time, json\n"
        f"{setup}\n"
        "t, c = time.perf_counter(), time.process_time()\n"
        f"{code}\n"
        "w, cpu = time.perf_counter() - t, time.process_time() - c\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "print(json.dumps({'seconds': w, 'cpu_s': cpu, 'peak_rss': int(hwm.split()[1]) * 1024}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", wrapper],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def measure_history(
    *, files: int = 1000, big_mb: int = 200, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Listing ``files`` transcripts, listing and loading one of ``big_mb`` MB."""
    real = _FIXTURE.read_bytes()
    with tempfile.TemporaryDirectory(prefix="ccb-history-") as tmp:
        config = Path(tmp) / "many"
        project = config / "projects" / "-work-bench"
        project.mkdir(parents=True)
        for i in range(files):
            (project / f"{i:08d}-0000-4000-8000-000000000000.jsonl").write_bytes(real)
        log(f"history: listing {files} files")
        imports = "from adapter.chat import list_sessions, load_events\n"
        empty = _peak(imports)
        many = _peak(
            imports + f"n = len(list_sessions(config=__import__('pathlib').Path({str(config)!r})))"
        )
        big_config = Path(tmp) / "big"
        big_project = big_config / "projects" / "-work-big"
        big_project.mkdir(parents=True)
        big = big_project / "11111111-2222-4333-8444-555555555555.jsonl"
        filler = (
            json.dumps({"type": "attachment", "attachment": {"content": "x" * 64_000}}) + "\n"
        ).encode()
        with big.open("wb") as fh:
            fh.write(real)
            while fh.tell() < big_mb * 1_000_000:
                fh.write(filler * 16)
                fh.write(real)
        size = big.stat().st_size
        log(f"history: listing and loading one {size / 1e6:.0f} MB file")
        path = f"__import__('pathlib').Path({str(big_config)!r})"
        listed = _peak(f"s = list_sessions(config={path})")
        loaded = _peak(f"e = load_events({str(big)!r})")
        shutil.rmtree(config)
    return {
        "interpreter_peak_rss": empty["peak_rss"],
        "list_many": {"files": files, **many},
        "big": {"bytes": size, "list": listed, "load": loaded},
    }
