"""One process in both roles: `serve --nats URL --worker` is a gateway and one of the
cluster's workers. With a second, separate `worker` process on the same real nats-server,
sessions created through the combined process's WebSocket spread over both workers, stream
gap-free to the client, and take permission answers on whichever worker runs them."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect

from adapter.cluster import LocalNatsServer
from claudecode.testing import fake_cli_command, script, tool_turn
from tests.support.processes import child, follow_frame, send
from tests.support.timeouts import PROCESSES_GUARD

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow, pytest.mark.server]


async def reply_to(ws: ClientConnection, request_id: int) -> dict[str, Any]:
    while True:
        frame: dict[str, Any] = json.loads(await ws.recv())
        if frame.get("request_id") == request_id:
            return frame


async def test_a_gateway_that_is_also_a_worker(tmp_path: Path) -> None:
    prefix = f"r{uuid.uuid4().hex[:8]}"
    body = script(
        tool_turn("Bash", {"command": "touch approved.txt"}, permission=True),
    )
    cli = fake_cli_command(body, tmp_path / "fake")
    homes = {name: tmp_path / f"{name}-config" for name in ("both", "w2")}
    for home in homes.values():
        home.mkdir(mode=0o700)
    common = ("--cli", str(cli), "--idle-timeout", "0", "--max-sessions", "4", "-v")
    with LocalNatsServer(tmp_path / "nats") as server:
        nats = ("--nats", server.url, "--nats-prefix", prefix)
        with (
            child(
                tmp_path / "both.log",
                "serve",
                "--port",
                "0",
                *nats,
                "--worker",
                "--id",
                "both",
                *common,
                env={"CLAUDE_CONFIG_DIR": str(homes["both"])},
            ) as both,
            child(
                tmp_path / "w2.log",
                "worker",
                *nats,
                "--id",
                "w2",
                *common,
                env={"CLAUDE_CONFIG_DIR": str(homes["w2"])},
            ),
        ):
            assert both.stdout is not None
            banner = [both.stdout.readline().decode() for _ in range(2)]
            assert "serving on http://127.0.0.1:" in banner[0], (tmp_path / "both.log").read_text()
            url = banner[0].split("serving on ", 1)[1].split()[0].replace("http://", "ws://")
            with anyio.fail_after(PROCESSES_GUARD):
                async with connect(url + "/ws", max_size=None) as ws:
                    owners: dict[str, str] = {}
                    cwds: dict[str, Path] = {}
                    request = 0
                    # Until both workers are known, a creation may land on one only: make
                    # sessions until each worker runs some (6 fit: 4 per worker at most).
                    while len(owners) < 6:
                        cwd = tmp_path / f"s{len(owners)}"
                        cwd.mkdir(exist_ok=True)
                        request += 1
                        await send(ws, type="create_session", request_id=request, cwd=str(cwd))
                        frame = await reply_to(ws, request)
                        if frame["type"] != "ack":
                            await anyio.sleep(0.2)  # no worker known yet
                            continue
                        owners[frame["session_id"]] = frame["session"]["owner"]
                        cwds[frame["session_id"]] = cwd
                    assert {"both", "w2"} == set(owners.values()), owners

                    last: dict[str, int] = {}
                    done: set[str] = set()
                    for session_id in owners:
                        request += 1
                        await send(ws, type="subscribe", session_id=session_id, request_id=request)
                        await send(ws, type="prompt", session_id=session_id, text="go")
                    while len(done) < len(owners):
                        frame = json.loads(await ws.recv())
                        assert frame["type"] != "error", frame
                        await follow_frame(ws, frame, last, done)
            for session_id, cwd in cwds.items():
                assert (cwd / "approved.txt").exists(), owners[session_id]
