"""The cluster behind the WebSocket front end, all separate processes: two `serve --nats`
gateways, two `worker` processes (fake CLI), one nats-server. Sessions created over one
gateway's `/ws` spread over the workers; their events arrive gap-free after the snapshot;
permission answers sent over the socket reach the owning worker; a client that switches to
the other gateway in the middle of a turn with `since_seq` sees no gap and no repeat."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect

from adapter.cluster import ClusterConfig, LocalNatsServer
from claudecode.testing import fake_cli_command, script, text_turn, tool_turn
from tests.support.processes import child, follow_frame, send, worker_child
from tests.support.timeouts import PROCESSES_GUARD

from ._support import gateway_url, recv_reply

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow, pytest.mark.server]


async def recv(ws: ClientConnection) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(await ws.recv())
    assert frame["type"] != "error", frame
    return frame


async def test_sessions_over_websocket_and_a_gateway_switch_mid_turn(tmp_path: Path) -> None:
    config = ClusterConfig(prefix=f"w{uuid.uuid4().hex[:8]}")
    body = script(
        tool_turn("Bash", {"command": "touch approved.txt"}, permission=True),
        text_turn("chunk " * 150, delay=0.02, chunk=6),
    )
    cli = fake_cli_command(body, tmp_path / "fake")
    nats_args = ("--nats-prefix", config.prefix)
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker_child(tmp_path / "w1.log", server.url, nats_args, "w1", cli),
        worker_child(tmp_path / "w2.log", server.url, nats_args, "w2", cli),
        child(tmp_path / "g1.log", "serve", "--port", "0", "--nats", server.url, *nats_args) as g1,
        child(tmp_path / "g2.log", "serve", "--port", "0", "--nats", server.url, *nats_args) as g2,
    ):
        first, second = gateway_url(g1), gateway_url(g2)
        with anyio.fail_after(PROCESSES_GUARD):
            async with connect(first, max_size=None) as ws:
                # Wait for both workers to be known to the gateway, then create sessions.
                owners: dict[str, str] = {}
                cwds: dict[str, Path] = {}
                for i in range(8):
                    cwd = tmp_path / f"s{i}"
                    cwd.mkdir()
                    while True:
                        await send(ws, type="create_session", request_id=i, cwd=str(cwd))
                        frame = await recv_reply(ws, i)
                        if frame["type"] == "ack":
                            break
                        await anyio.sleep(0.2)  # no worker known yet
                    owners[frame["session_id"]] = frame["session"]["owner"]
                    cwds[frame["session_id"]] = cwd
                assert {"w1", "w2"} == set(owners.values())
                last: dict[str, int] = {}
                done: set[str] = set()
                for n, session_id in enumerate(owners):
                    await send(ws, type="subscribe", session_id=session_id, request_id=100 + n)
                    await send(ws, type="prompt", session_id=session_id, text="go")
                while len(done) < len(owners):
                    await follow_frame(ws, await recv(ws), last, done)
                for session_id, cwd in cwds.items():
                    assert (cwd / "approved.txt").exists(), owners[session_id]

                # A slow turn; leave gateway 1 in the middle of it.
                target = next(iter(owners))
                await send(ws, type="prompt", session_id=target, text="talk")
                chunks = 0
                while chunks < 5:
                    frame = await recv(ws)
                    if frame["type"] == "event" and frame["session_id"] == target:
                        assert last[target] + 1 == frame["seq"]
                        last[target] = frame["seq"]
                        chunks += frame["event"]["type"] == "message_chunk"
            switched_at = last[target]
            async with connect(second, max_size=None) as ws2:
                await send(ws2, type="subscribe", session_id=target, since_seq=switched_at)
                seqs: list[int] = []
                text = ""
                while True:
                    frame = await recv(ws2)
                    if frame["type"] != "event" or frame["session_id"] != target:
                        continue
                    seqs.append(frame["seq"])
                    if frame["event"]["type"] == "message_chunk":
                        text += frame["event"]["text"]
                    if frame["event"]["type"] == "complete":
                        break
        assert list(range(switched_at + 1, switched_at + 1 + len(seqs))) == seqs
        assert text and "chunk " * 150 != text  # only the part after the switch
