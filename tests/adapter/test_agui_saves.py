"""The AG-UI service saves a streaming thread in rounds, not once per event, and an idle
thread keeps only its message log."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter import LocalBackend, PermissionPolicy, SessionConfig
from adapter.server.agui.events import decode_run_input
from adapter.server.agui.runs import AguiService
from adapter.server.agui.snapshot import MessageLog
from adapter.server.agui.threads import ThreadRecord, ThreadStore
from benchmarks._common import emitter_path
from tests.support.timeouts import HANG_GUARD, PROCESSES_GUARD

#: Seconds between the saver's rounds (adapter.server.agui.runs._SAVE_INTERVAL).
SAVE_INTERVAL = 0.5


class CountingStore(ThreadStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.saves: list[tuple[str, int]] = []

    async def save_threads(self, threads: list[tuple[ThreadRecord, MessageLog]]) -> None:
        self.saves += [(record.thread_id, len(log)) for record, log in threads]
        await super().save_threads(threads)


def _run_input(thread_id: str) -> Any:
    return decode_run_input(
        {
            "threadId": thread_id,
            "runId": uuid.uuid4().hex,
            "messages": [{"id": uuid.uuid4().hex, "role": "user", "content": "go"}],
        }
    )


@pytest.mark.anyio
async def test_streaming_threads_are_saved_once_per_round(tmp_path: Path) -> None:
    # Eight threads stream 300 text deltas each at 200/s (the paced benchmark emitter).
    config = SessionConfig(
        cli_path=emitter_path(),
        env={"BENCH_MODE": "paced", "BENCH_LINES": "300", "BENCH_RATE": "200"},
        policy=PermissionPolicy("autonomous"),
        client_options={"close_grace": 2, "kill_after": 2},
    )
    store = CountingStore(tmp_path / "threads.sqlite3")
    shutdown = anyio.Event()
    threads = [f"thread-{i}" for i in range(8)]
    frames: dict[str, list[bytes]] = {t: [] for t in threads}
    with anyio.fail_after(PROCESSES_GUARD):  # a hang guard
        async with LocalBackend(config) as backend:
            service = AguiService(backend, store, shutting_down=lambda: shutdown)
            async with service.running():
                started = time.monotonic()

                async def run(thread_id: str) -> None:
                    handle = await service.start_run(_run_input(thread_id))
                    async for chunk in handle.listen():
                        frames[thread_id].append(chunk)

                async with anyio.create_task_group() as tg:
                    for thread_id in threads:
                        tg.start_soon(run, thread_id)
                elapsed = time.monotonic() - started
                for thread_id in threads:
                    # An idle thread keeps neither its finished run (with every frame) nor
                    # a second copy of its messages besides the log.
                    idle = service._threads[thread_id]
                    assert idle.run is None and [] == idle.record.messages
                    assert 2 == len(idle.log)
    for thread_id in threads:
        events = [
            json.loads(frame.removeprefix(b"data: "))
            for frame in b"".join(frames[thread_id]).split(b"\n\n")
            if frame.startswith(b"data: ")
        ]
        deltas = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert 300 == len(deltas.split())  # every delta arrived
        assert "RUN_FINISHED" == events[-1]["type"]
        saves = [n for t, n in store.saves if t == thread_id]
        # One save per round at most (the rounds are SAVE_INTERVAL apart), plus the final
        # save at the end of the run; each one after the first has the streamed reply.
        assert 1 <= len(saves) <= elapsed / SAVE_INTERVAL + 2, (len(saves), elapsed)
        assert 2 == saves[-1]  # the prompt and the reply
    with anyio.fail_after(HANG_GUARD):
        record = await ThreadStore(tmp_path / "threads.sqlite3").load(threads[0])
    assert record is not None and record.messages[-1]["role"] == "assistant"
