"""The cluster as separate processes: a `serve --nats` gateway and `worker` processes (the
fake CLI behind them) on one real nats-server; the test process is a second gateway.

* 30 sessions created through the gateway's HTTP API spread over three workers (on uvloop
  and on asyncio's own loop); every
  session's events arrive gap-free at a client of the second gateway; permission answers
  and interrupts sent to the first gateway reach the right worker.
* kill -9 of a worker in the middle of a turn: its session is reported lost (the turn ended
  as interrupted) and resumes on another worker under the same id, numbering on.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from adapter.backend import SessionSpec
from adapter.cluster import (
    ClusterConfig,
    LocalNatsServer,
)
from adapter.events import (
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    PermissionRequest,
    SessionStatus,
    ToolUpdate,
)
from claudecode.testing import fake_cli_command, script, text_turn, tool_turn
from tests.support.cluster import until_moved
from tests.support.timeouts import PROCESSES_GUARD

from ._support import processes, second_gateway, start_gateway, start_worker

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow, pytest.mark.server]


def maps_uvloop(pid: int) -> bool:
    """Whether uvloop's extension is loaded in process ``pid`` (only on its loop)."""
    return "uvloop" in Path(f"/proc/{pid}/maps").read_text()


async def collect_turn(
    events: Any, http: httpx.AsyncClient, session_id: str, *, interrupt_at_first_chunk: bool = False
) -> list[Event]:
    seen: list[Event] = []
    interrupted = False
    async for event in events:
        seen.append(event)
        if isinstance(event, PermissionRequest):
            answer = await http.post(
                f"/api/sessions/{session_id}/permissions/{event.pending_id}",
                json={"behavior": "allow"},
            )
            assert 200 == answer.status_code, answer.text
        if interrupt_at_first_chunk and isinstance(event, MessageChunk) and not interrupted:
            interrupted = True
            answer = await http.post(f"/api/sessions/{session_id}/interrupt")
            assert 200 == answer.status_code, answer.text
        if isinstance(event, Complete):
            return seen
    raise AssertionError("the events ended before the turn completed")


async def test_thirty_sessions_on_three_worker_processes(tmp_path: Path) -> None:
    config = ClusterConfig(prefix=f"p{uuid.uuid4().hex[:8]}")
    slow_text = "word " * 400
    body = script(
        tool_turn("Bash", {"command": "touch approved.txt"}, permission=True),
        text_turn(slow_text, delay=0.02, chunk=4),
    )
    cli = fake_cli_command(body, tmp_path / "fake")
    with LocalNatsServer(tmp_path / "nats") as server, processes(tmp_path) as procs:
        # Each event loop a worker can run on: uvloop (asked for, and auto's choice when it
        # is installed, as in the test extra) and asyncio's own.
        loops = {"w1": "uvloop", "w2": "auto", "w3": "asyncio"}
        for name, loop in loops.items():
            start_worker(procs, server, config, name, cli, tmp_path, "--loop", loop)
        base = start_gateway(procs, server, config)
        async with (
            second_gateway(server, config, 3) as backend,
            httpx.AsyncClient(base_url=base, timeout=60) as http,
        ):
            on_uvloop = {name: maps_uvloop(procs.procs[name].pid) for name in loops}
            assert {"w1": True, "w2": True, "w3": False} == on_uvloop
            ready = (await http.get("/readyz")).json()
            assert ready["ready"] and ready["nats"] == "connected"
            infos = []
            for i in range(30):
                cwd = tmp_path / f"s{i}"
                cwd.mkdir()
                created = await http.post("/api/sessions", json={"cwd": str(cwd)})
                assert 201 == created.status_code, created.text
                infos.append(created.json())
            owners = Counter(info["owner"] for info in infos)
            assert {"w1", "w2", "w3"} == set(owners)
            assert max(owners.values()) - min(owners.values()) <= 4, owners

            results: dict[str, list[Event]] = {}

            async def drive(index: int, session_id: str) -> None:
                async with backend.subscribe(session_id, after_seq=0) as events:
                    answer = await http.post(
                        f"/api/sessions/{session_id}/prompt", json={"text": "go"}
                    )
                    assert 202 == answer.status_code, answer.text
                    seen = await collect_turn(events, http, session_id)
                    if index % 3 == 0:  # a third of them: a second turn, interrupted
                        answer = await http.post(
                            f"/api/sessions/{session_id}/prompt", json={"text": "talk"}
                        )
                        assert 202 == answer.status_code
                        seen += await collect_turn(
                            events, http, session_id, interrupt_at_first_chunk=True
                        )
                    results[session_id] = seen

            with anyio.fail_after(PROCESSES_GUARD):
                async with anyio.create_task_group() as tg:
                    for index, info in enumerate(infos):
                        tg.start_soon(drive, index, info["id"])

            for index, info in enumerate(infos):
                seen = results[info["id"]]
                assert list(range(1, len(seen) + 1)) == [e.seq for e in seen]
                assert (tmp_path / f"s{index}" / "approved.txt").exists()
                assert any(isinstance(e, ToolUpdate) and e.status == "complete" for e in seen)
                completes = [e for e in seen if isinstance(e, Complete)]
                if index % 3 == 0:
                    assert 2 == len(completes)
                    assert completes[1].is_error, completes[1]
                    text = "".join(
                        e.text
                        for e in seen[seen.index(completes[0]) :]
                        if isinstance(e, MessageChunk)
                    )
                    assert len(text) < len(slow_text)
            listed = (await http.get("/api/sessions")).json()
            assert {i["id"] for i in infos} <= {i["id"] for i in listed}
            closed = await http.delete(f"/api/sessions/{infos[0]['id']}")
            assert 200 == closed.status_code


async def test_kill_9_a_worker_mid_turn(tmp_path: Path) -> None:
    config = ClusterConfig(prefix=f"k{uuid.uuid4().hex[:8]}")
    slow = fake_cli_command(
        script(text_turn("slow " * 2000, delay=0.02, chunk=4)), tmp_path / "fake-a"
    )
    record = tmp_path / "wb-cli.jsonl"
    steady = fake_cli_command(
        script(text_turn("resumed and well"), record_path=str(record)), tmp_path / "fake-b"
    )
    with LocalNatsServer(tmp_path / "nats") as server, processes(tmp_path) as procs:
        start_worker(procs, server, config, "wa", slow, tmp_path, "--label", "pin=a")
        start_worker(procs, server, config, "wb", steady, tmp_path)
        async with second_gateway(server, config, 2) as backend:
            with anyio.fail_after(PROCESSES_GUARD):
                info = await backend.create(SessionSpec(labels={"pin": "a"}))
            assert "wa" == info.owner
            seen: list[Event] = []
            async with backend.subscribe(info.id, after_seq=0) as events:
                await backend.prompt(info.id, "talk")
                with anyio.fail_after(PROCESSES_GUARD):
                    async for event in events:
                        seen.append(event)
                        if (
                            isinstance(event, MessageChunk)
                            and len(seen) > 5
                            and procs.procs["wa"].returncode is None
                        ):
                            procs.kill("wa")
                        if isinstance(event, Complete):
                            break
                assert isinstance(seen[-1], Complete) and seen[-1].synthetic
                assert isinstance(seen[-2], ErrorEvent) and "interrupted" == seen[-2].kind
                now = await until_moved(backend, info.id, "wb", PROCESSES_GUARD)
                before = next(e for e in seen if isinstance(e, SessionStatus)).cli_session_id
                assert before and before == now.cli_session_id
                await backend.prompt(info.id, "are you there?")
                with anyio.fail_after(PROCESSES_GUARD):
                    after: list[Event] = []
                    async for event in events:
                        after.append(event)
                        if isinstance(event, Complete):
                            break
            seqs = [e.seq for e in seen + after]
            assert list(range(1, len(seqs) + 1)) == seqs
            assert "resumed and well" == "".join(
                e.text for e in after if isinstance(e, MessageChunk)
            )
            # The CLI on the second worker was started with --resume of the same session.
            argv = json.loads(record.read_text().splitlines()[0])["argv"]
            assert f"--resume={before}" in argv or before == argv[argv.index("--resume") + 1]
