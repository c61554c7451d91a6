"""A working directory the worker does not have, asked for through a gateway (all separate
processes on a real nats-server): the client gets the answer the single-process server
gives (``bad_request`` / 409 and the words naming the directory), never a 500 or the CLI's
spawn failure naming the worker's paths (a 502, were the worker not to check), and no session
is left behind in the cluster's registry."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect

from adapter.cluster import ClusterConfig, LocalNatsServer
from tests.support.processes import child, send
from tests.support.timeouts import HANG_GUARD, PROCESSES_GUARD
from tests.support.waits import eventually

from ._support import gateway_url, recv_reply

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow, pytest.mark.server]


async def test_a_missing_cwd_through_a_gateway_is_a_worded_409(tmp_path: Path) -> None:
    config = ClusterConfig(prefix=f"c{uuid.uuid4().hex[:8]}")
    nats_args = ("--nats-prefix", config.prefix)
    missing = str(tmp_path / "no" / "such" / "dir")
    words = f"the working directory {missing!r} does not exist"
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        child(
            tmp_path / "w1.log",
            "worker", "--nats", server.url, *nats_args, "--id", "w1", "--demo",
            "--idle-timeout", "0",
        ),
        child(tmp_path / "g.log", "serve", "--port", "0", "--nats", server.url, *nats_args) as g,
    ):  # fmt: skip
        url = gateway_url(g)
        base = url.removesuffix("/ws").replace("ws://", "http://")
        with anyio.fail_after(PROCESSES_GUARD):
            async with httpx.AsyncClient(base_url=base, timeout=HANG_GUARD) as http:

                async def created() -> httpx.Response | None:
                    answer = await http.post("/api/sessions", json={"cwd": missing})
                    return None if answer.status_code == 503 else answer  # no worker yet

                answer = await eventually(created, PROCESSES_GUARD, poll=0.2, what="a worker")
                assert 409 == answer.status_code, answer.text
                assert {"error": words} == answer.json()
                a_file = tmp_path / "a-file"
                a_file.write_text("")
                answer = await http.post("/api/sessions", json={"cwd": str(a_file)})
                assert 409 == answer.status_code, answer.text
                assert "is not a directory" in answer.json()["error"]

                async with connect(url, max_size=None) as ws:
                    await send(ws, type="create_session", request_id=1, cwd=missing)
                    reply = await recv_reply(ws, 1)
                    assert {"code": "bad_request", "message": words} == {
                        k: reply.get(k) for k in ("code", "message")
                    }, reply
                    assert "error" == reply["type"]

                    # Nothing left behind: no session listed, none in the registry.
                    assert [] == (await http.get("/api/sessions")).json()
                    await send(ws, type="list_sessions", request_id=2)
                    assert [] == (await recv_reply(ws, 2))["sessions"]

                    # And the cluster goes on serving: a directory the worker has.
                    await send(ws, type="create_session", request_id=3, cwd=str(tmp_path))
                    ok: dict[str, Any] = await recv_reply(ws, 3)
                    assert "ack" == ok["type"], ok
    log = (tmp_path / "g.log").read_text() + (tmp_path / "w1.log").read_text()
    assert "Traceback" not in log, log
