"""A gateway that loses NATS tells its clients, and recovers: a `serve --nats` gateway and a
`worker` process (fake CLI) on a real nats-server, which is stopped in the middle of a turn
and started again (same port, same store).

* the WebSocket client subscribed to the session gets an ``error`` frame with code
  ``unavailable`` for it; a request meanwhile gets one too; ``/readyz`` says 503;
* the AG-UI run streaming the other session ends with ``RUN_ERROR`` code ``unavailable``;
* NATS back: the client subscribes again with ``since_seq`` and receives the rest of the
  turn with no gap and no repeat — nothing the worker produced during the outage is lost.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from adapter.cluster import LocalNatsServer
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.processes import child, send
from tests.support.timeouts import PROCESSES_GUARD
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow, pytest.mark.server]


async def frame_of(ws: ClientConnection) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(await ws.recv())
    return frame


async def wait_ready(http: httpx.AsyncClient, ready: bool) -> None:

    async def reached() -> bool:
        response = await http.get("/readyz")
        return (response.status_code == 200) == ready

    await eventually(reached, PROCESSES_GUARD, poll=0.1, what=f"ready is {ready}")


async def test_a_gateway_tells_its_clients_about_a_nats_outage(tmp_path: Path) -> None:
    prefix = f"o{uuid.uuid4().hex[:8]}"
    text = "slow " * 600
    cli = fake_cli_command(script(text_turn(text, delay=0.02, chunk=4)), tmp_path / "fake")
    work = tmp_path / "work"
    work.mkdir()
    with LocalNatsServer(tmp_path / "nats") as server:
        nats = ("--nats", server.url, "--nats-prefix", prefix)
        with (
            child(
                tmp_path / "w.log", "worker", *nats, "--id", "w1", "--cli", str(cli),
                "--cwd", str(work), "--idle-timeout", "0", "-v",
            ),
            child(
                tmp_path / "g.log", "serve", "--port", "0", *nats,
                "--state-dir", str(tmp_path / "state"), "-v",
            ) as gateway,
        ):  # fmt: skip
            assert gateway.stdout is not None
            line = gateway.stdout.readline().decode()
            assert "serving on http://127.0.0.1:" in line, (tmp_path / "g.log").read_text()
            base = line.split("serving on ", 1)[1].split()[0]
            with anyio.fail_after(PROCESSES_GUARD):
                async with (
                    httpx.AsyncClient(base_url=base, timeout=PROCESSES_GUARD) as http,
                    connect(base.replace("http://", "ws://") + "/ws", max_size=None) as ws,
                ):
                    await wait_ready(http, True)
                    request = 0
                    while True:  # until the gateway knows the worker
                        request += 1
                        await send(ws, type="create_session", request_id=request)
                        frame = await frame_of(ws)
                        while frame.get("request_id") != request:
                            frame = await frame_of(ws)
                        if frame["type"] == "ack":
                            break
                        await anyio.sleep(0.2)
                    sid = frame["session_id"]
                    await send(ws, type="subscribe", session_id=sid)
                    await send(ws, type="prompt", session_id=sid, text="go")

                    # An AG-UI run on another session streams at the same time.
                    agui: list[dict[str, Any]] = []
                    agui_streaming = anyio.Event()

                    async def run_agui() -> None:
                        body = {
                            "threadId": "t-outage",
                            "runId": uuid.uuid4().hex,
                            "messages": [{"id": "u1", "role": "user", "content": "talk"}],
                            "tools": [],
                            "context": [],
                            "forwardedProps": {},
                            "state": {},
                        }
                        async with http.stream("POST", "/agui", json=body) as response:
                            assert 200 == response.status_code
                            async for raw in response.aiter_lines():
                                if raw.startswith("data: "):
                                    agui.append(json.loads(raw[len("data: ") :]))
                                    if agui[-1]["type"] == "TEXT_MESSAGE_CONTENT":
                                        agui_streaming.set()

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(run_agui)
                        last = 0
                        chunks = 0
                        while chunks < 5:
                            frame = await frame_of(ws)
                            assert frame["type"] != "error", frame
                            if frame["type"] == "snapshot":
                                last = frame["chat"]["last_seq"]
                            elif frame["type"] == "event" and frame["session_id"] == sid:
                                assert last + 1 == frame["seq"]
                                last = frame["seq"]
                                chunks += frame["event"]["type"] == "message_chunk"
                        await agui_streaming.wait()

                        server.stop()  # NATS goes away in the middle of both turns
                        while True:
                            frame = await frame_of(ws)
                            if frame["type"] == "event":
                                assert last + 1 == frame["seq"]
                                last = frame["seq"]
                                continue
                            if frame["type"] == "error":
                                break
                        assert "unavailable" == frame["code"] and sid == frame["session_id"]
                    assert "RUN_ERROR" == agui[-1]["type"]
                    assert "unavailable" == agui[-1]["code"]

                    # Meanwhile: requests are refused with the same code; not ready.
                    await send(ws, type="subscribe", session_id=sid, since_seq=last, request_id="x")
                    frame = await frame_of(ws)
                    while frame.get("request_id") != "x":
                        frame = await frame_of(ws)
                    assert "error" == frame["type"] and "unavailable" == frame["code"], frame
                    assert 503 == (await http.get("/readyz")).status_code

                    server.start()  # same port, same store
                    await wait_ready(http, True)
                    await send(ws, type="subscribe", session_id=sid, since_seq=last, request_id="y")
                    received = ""
                    while True:
                        frame = await frame_of(ws)
                        if frame["type"] == "error" and frame.get("request_id") == "y":
                            # Ready, but the gateway's view is still catching up: retry.
                            await anyio.sleep(0.2)
                            await send(
                                ws, type="subscribe", session_id=sid, since_seq=last, request_id="y"
                            )
                            continue
                        assert frame["type"] != "error", frame
                        if frame["type"] != "event":
                            continue
                        assert last + 1 == frame["seq"], (last, frame)
                        last = frame["seq"]
                        event = frame["event"]
                        if event["type"] == "message_chunk":
                            received += event["text"]
                        if event["type"] == "complete":
                            break
                    assert not event.get("is_error"), event
                    assert received and text.endswith(received)
    for name in ("w.log", "g.log"):  # a NATS restart is no worker death
        assert "cluster.session_lost" not in (tmp_path / name).read_text()
