"""``worker --demo`` behind a gateway, all separate processes on a real nats-server: the
demo's sessions are stored as ``serve --demo`` stores them, so they are listed by the
gateway's history and resumed through it.

Before the fix the worker's demo wrote no transcripts: the gateway's history stayed empty."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect

from adapter.cluster import ClusterConfig, LocalNatsServer
from tests.support.processes import child, send
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import eventually

from ._support import gateway_url, recv_reply

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow, pytest.mark.server]


async def until_complete(ws: ClientConnection, session_id: str) -> None:
    while True:
        frame: dict[str, Any] = json.loads(await ws.recv())
        assert frame["type"] != "error", frame
        if (
            frame["type"] == "event"
            and frame["session_id"] == session_id
            and frame["event"]["type"] == "complete"
        ):
            return


async def a_turn(ws: ClientConnection, request_id: int, **create: Any) -> dict[str, Any]:
    """Create a session (autonomous: the demo's tools run, its question is declined), run
    one turn on it and close it; the ``create_session`` ack."""

    async def created() -> dict[str, Any] | None:
        frame = {"type": "create_session", "policy": "autonomous", **create}
        await send(ws, request_id=request_id, **frame)
        reply = await recv_reply(ws, request_id)
        if reply["type"] == "error" and reply["code"] == "unavailable":
            return None  # no worker known to the gateway yet
        assert "ack" == reply["type"], reply
        return reply

    ack: dict[str, Any] = await eventually(created, PROCESSES_GUARD, poll=0.2, what="a worker")
    session_id = ack["session_id"]
    await send(ws, type="subscribe", session_id=session_id, request_id=request_id + 1)
    await send(ws, type="prompt", session_id=session_id, text="Give me a tour.")
    await until_complete(ws, session_id)
    await send(ws, type="close_session", session_id=session_id, request_id=request_id + 2)
    assert "ack" == (await recv_reply(ws, request_id + 2))["type"]
    return ack


async def history(ws: ClientConnection, request_id: int) -> list[dict[str, Any]]:
    await send(ws, type="list_history", request_id=request_id)
    sessions: list[dict[str, Any]] = (await recv_reply(ws, request_id))["sessions"]
    return sessions


async def test_worker_demo_sessions_have_history_and_resume_through_a_gateway(
    tmp_path: Path,
) -> None:
    config = ClusterConfig(prefix=f"d{uuid.uuid4().hex[:8]}")
    nats_args = ("--nats-prefix", config.prefix)
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        child(
            tmp_path / "w1.log",
            "worker", "--nats", server.url, *nats_args, "--id", "w1", "--demo",
            "--demo-home", str(tmp_path / "home"), "--idle-timeout", "0",
        ),
        child(tmp_path / "g.log", "serve", "--port", "0", "--nats", server.url, *nats_args) as g,
    ):  # fmt: skip
        url = gateway_url(g)
        with anyio.fail_after(PROCESSES_GUARD):
            async with connect(url, max_size=None) as ws:
                first = await a_turn(ws, 10)
                # Mirrored by the worker, copied by the gateway: listed once it arrives.
                listed = await eventually(
                    lambda: history(ws, 20), PROCESSES_GUARD, what="the session in history"
                )
                assert 1 == len(listed)
                stored = listed[0]["session_id"]
                assert str(tmp_path / "home" / "work") == first["session"]["cwd"]

                # Resumed through the gateway: the same stored conversation goes on.
                again = await a_turn(ws, 30, resume=stored)
                assert stored == again["session"]["cli_session_id"]
                assert [stored] == [s["session_id"] for s in await history(ws, 40)]
    # The kept home holds the transcript where the CLI would keep it.
    assert list((tmp_path / "home" / "config" / "projects").rglob(f"{stored}.jsonl"))
