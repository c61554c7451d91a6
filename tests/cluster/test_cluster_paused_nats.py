"""A gateway whose NATS stays connected but stops answering (nats-server paused with
SIGSTOP), against a real nats-server and workers: every :class:`ClusterBackend` call that
needs NATS raises the typed :class:`ClusterUnavailableError` (never nats-py's own
``TimeoutError``), ``list`` answers from the registry copy, everything works again once
NATS answers; readiness says "not answering" while it is paused and ready again after; a
WebSocket client of a ``serve --nats`` gateway process gets ``unavailable`` error frames
(never ``internal``) and its REST API and ``/readyz`` a 503 with a JSON error, and its
requests work again after."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect

from adapter.backend import SessionSpec
from adapter.cluster import ClusterBackend, ClusterConfig, ClusterUnavailableError, LocalNatsServer
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.processes import child, send, worker_child
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

from ._support import (
    fast_config,
    gateway_url,
    paused,
    recv_reply,
    running,
    worker_defaults,
)

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def _until_ready_is(backend: ClusterBackend, ready: bool) -> dict[str, Any]:
    """Probe readiness until it says ``ready`` (a hang guard, not a timing)."""

    async def reached() -> dict[str, Any] | None:
        state = await backend.readiness()
        return state if state["ready"] is ready else None

    state: dict[str, Any] = await eventually(reached, poll=0.1, what=f"ready is {ready}")
    return state


async def test_readiness_follows_a_paused_and_resumed_nats(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """Connected but paused: not ready ("not answering"), and back once NATS answers."""
    async with running(nats_server, fast_config(), worker_defaults(tmp_path, script())) as (
        backend,
        _,
    ):
        assert {"ready": True, "nats": "connected"}.items() <= (
            await _until_ready_is(backend, True)
        ).items()
        with paused(nats_server):
            state = await _until_ready_is(backend, False)
            assert "not answering" == state["nats"]
            assert backend.ready  # the connection is still up
            # Concurrent probes while it does not answer: all say so, none hangs.
            states: list[dict[str, Any]] = []

            async def probe() -> None:
                states.append(await backend.readiness())

            with anyio.fail_after(HANG_GUARD):
                async with anyio.create_task_group() as tg:
                    for _ in range(5):
                        tg.start_soon(probe)
            assert [False] * 5 == [s["ready"] for s in states]
        assert "connected" == (await _until_ready_is(backend, True))["nats"]


async def _subscribe(backend: ClusterBackend, session_id: str) -> None:
    async with backend.subscribe(session_id, after_seq=0):
        pass


async def test_every_call_raises_the_typed_error_while_nats_is_paused(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    config = dataclasses.replace(fast_config(), request_timeout=1.0, create_timeout=2.0)
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (backend, _):
        info = await backend.create(SessionSpec())
        sid = info.id
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "info": lambda: backend.info(sid),
            "subscribe": lambda: _subscribe(backend, sid),
            "prompt": lambda: backend.prompt(sid, "hi"),
            "interrupt": lambda: backend.interrupt(sid),
            "set_model": lambda: backend.set_model(sid, "m"),
            "close": lambda: backend.close(sid),
            "create": lambda: backend.create(SessionSpec()),
            "create with an id": lambda: backend.create(SessionSpec(), session_id="chosen"),
        }
        with paused(nats_server):
            assert backend.ready  # connected all the same: only answers are missing
            for call in calls.values():
                with anyio.fail_after(HANG_GUARD), pytest.raises(ClusterUnavailableError):
                    await call()
            # The registry copy answers without NATS.
            with anyio.fail_after(HANG_GUARD):
                assert sid in [s.id for s in await backend.list()]
        # Works again. (What the paused requests asked for may land late: the close too.)
        with anyio.fail_after(HANG_GUARD):
            assert sid == (await backend.info(sid)).id
            again = await backend.create(SessionSpec())
            await backend.close(again.id)


async def _get_until(url: str, status: int) -> httpx.Response:
    async with httpx.AsyncClient(timeout=HANG_GUARD) as http:

        async def answered() -> httpx.Response | None:
            answer = await http.get(url)
            return answer if answer.status_code == status else None

        response: httpx.Response = await eventually(answered, poll=0.1, what=f"{url} {status}")
        return response


@pytest.mark.slow
@pytest.mark.server
async def test_a_websocket_client_gets_unavailable_while_nats_is_paused(tmp_path: Path) -> None:
    """Processes: nats-server, one worker, one ``serve --nats`` gateway (request and create
    timeouts of 3 s, from its options). Paused: a create and a subscribe get ``unavailable``
    error frames, a GET of the session over REST a 503, ``/readyz`` a 503 (then 200 once
    resumed)."""
    config = ClusterConfig(prefix=f"p{uuid.uuid4().hex[:8]}")
    cli = fake_cli_command(script(text_turn("hello")), tmp_path / "fake")
    nats_args = ("--nats-prefix", config.prefix)
    with (
        LocalNatsServer(tmp_path / "nats") as server,
        worker_child(tmp_path / "w1.log", server.url, nats_args, "w1", cli),
        child(
            tmp_path / "g1.log",
            "serve",
            "--port",
            "0",
            "--nats",
            server.url,
            *nats_args,
            "--nats-request-timeout",
            "3",
            "--nats-create-timeout",
            "3",
        ) as g1,
    ):
        url = gateway_url(g1)
        with anyio.fail_after(HANG_GUARD * 3):
            async with connect(url, max_size=None) as ws:
                (tmp_path / "s").mkdir()
                while True:
                    await send(ws, type="create_session", request_id=1, cwd=str(tmp_path / "s"))
                    frame = await recv_reply(ws, 1)
                    if frame["type"] == "ack":
                        break
                    await anyio.sleep(0.2)  # no worker known yet
                session_id = frame["session_id"]
                frames: list[dict[str, Any]] = []
                with paused(server):
                    await send(ws, type="create_session", request_id=2, cwd=str(tmp_path / "s"))
                    frames.append(await recv_reply(ws, 2))
                    await send(ws, type="subscribe", session_id=session_id, request_id=3)
                    frames.append(await recv_reply(ws, 3))
                    api = url.replace("ws://", "http://").removesuffix("/ws") + "/api/sessions/"
                    async with httpx.AsyncClient(timeout=HANG_GUARD) as http:
                        answer = await http.get(api + session_id)
                    assert 503 == answer.status_code, answer.text
                    assert "error" in answer.json()
                    ready_url = api.removesuffix("/api/sessions/") + "/readyz"
                    answer = await _get_until(ready_url, 503)
                    assert "not answering" == answer.json()["nats"]
                await _get_until(ready_url, 200)
                for frame in frames:
                    assert "error" == frame["type"], frame
                    assert "unavailable" == frame["code"], frame
                    assert "Traceback" not in json.dumps(frame)
                # Works again: ``unavailable`` means retry (what the paused requests left
                # may keep NATS busy for a moment); any other error fails.
                for request_id in range(4, 1000):
                    await send(ws, type="subscribe", session_id=session_id, request_id=request_id)
                    frame = await recv_reply(ws, request_id)
                    if frame["type"] != "error" or frame["code"] != "unavailable":
                        break
                    await anyio.sleep(0.5)
                assert "error" != frame["type"], frame
