"""Hostile and careless input against a real server: never a 500, never a dropped connection
without a close code, and the server keeps serving.

Each test here failed before its fix: deep JSON and invalid UTF-8 were 500s (a
``RecursionError`` / ``UnicodeDecodeError`` out of the decoder), NUL bytes reached the CLI's
command line, two concurrent runs on a new AG-UI thread both started, a ``/ws`` client that
never read its replies grew the server without bound, and the frame limit counted
characters.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import websockets.exceptions
import websockets.sync.client as ws_client

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from adapter.server.ws import CLOSE_FRAME_TOO_LARGE, CLOSE_SLOW_CONSUMER
from adapter.server.ws.endpoint import ws_routes
from claudecode.testing import fake_cli_command, script, text_turn, tool_turn
from tests.support.servers import running
from tests.support.sockets import GatedSocket
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.server


def _settings(tmp_path: Path, **overrides: Any) -> ServerSettings:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn("hello")), tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
    )
    return ServerSettings(session_defaults=defaults, state_dir=tmp_path / "state", **overrides)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    with running(create_app(settings=_settings(tmp_path, max_sessions=4))) as url:
        yield url


def run_input(thread_id: str, text: str = "hi") -> dict[str, Any]:
    return {
        "threadId": thread_id,
        "runId": "r-" + thread_id,
        "state": None,
        "messages": [{"id": "m-" + thread_id, "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "forwardedProps": None,
    }


#: Every route that takes a JSON body (session ids are filled in by the tests).
JSON_ROUTES = (
    "/agui",
    "/agui/connect",
    "/copilotkit",
    "/copilotkit/agent/default/run",
    "/copilotkit/agent/default/connect",
    "/api/sessions",
    "/api/sessions/{sid}/prompt",
    "/api/sessions/{sid}/permissions/nope",
    "/api/terminals",
)


#: A field each route reads (by the path's last part), for a string that is not UTF-8.
READ_FIELD = {
    "copilotkit": "method",
    "sessions": "cwd",
    "prompt": "text",
    "nope": "behavior",
    "terminals": "agent",
}


def deep(levels: int) -> bytes:
    """An object with a value nested ``levels`` arrays deep (in an unknown field and in a
    field the routes decode as any JSON)."""
    nested = b"[" * levels + b"]" * levels
    return b'{"mcp_servers": {"x": {"y": ' + nested + b'}}, "state": ' + nested + b"}"


def post_raw(http: httpx.Client, path: str, body: bytes) -> httpx.Response:
    return http.post(path, content=body, headers={"Content-Type": "application/json"})


def a_session(http: httpx.Client) -> str:
    created = http.post("/api/sessions", json={})
    assert 201 == created.status_code, created.text
    return str(created.json()["id"])


def test_deep_json_and_invalid_utf8_are_400_on_every_json_route(server: str) -> None:
    """10,000 / 1,000 / 200 levels deep and a string of invalid UTF-8: 400 with a JSON
    error saying why, on every JSON route; the same keep-alive client goes on."""
    with httpx.Client(base_url=server, timeout=HANG_GUARD) as http:
        sid = a_session(http)
        for template in JSON_ROUTES:
            path = template.format(sid=sid)
            for levels in (10_000, 1_000, 200):
                answer = post_raw(http, path, deep(levels))
                assert 400 == answer.status_code, (path, levels, answer.text)
                error = answer.json()["error"]
                # Routes that refuse unknown fields never reach the deep value.
                assert "levels deep" in error or "unknown field" in error, (path, error)
            field = READ_FIELD.get(template.split("/")[-1], "threadId")
            bad = post_raw(http, path, b'{"%s": "caf\xc3 \xff\xfe"}' % field.encode())
            assert 400 == bad.status_code, (path, bad.text)
            assert "UTF-8" in bad.json()["error"], path
        assert 200 == http.get("/readyz").status_code
        assert 1 == len(http.get("/api/sessions").json())


@pytest.mark.parametrize("field", ["cwd", "resume", "model", "permission_mode", "policy"])
def test_a_nul_byte_in_a_session_field_is_400_naming_it(server: str, field: str) -> None:
    with httpx.Client(base_url=server, timeout=HANG_GUARD) as http:
        answer = http.post("/api/sessions", json={field: "a\x00b"})
        assert 400 == answer.status_code, answer.text
        assert f"`$.{field}`" in answer.json()["error"]
        assert [] == http.get("/api/sessions").json()


@pytest.mark.pty
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="terminals need Linux")
def test_a_nul_byte_in_a_terminal_field_is_400(server: str) -> None:
    with httpx.Client(base_url=server, timeout=HANG_GUARD) as http:
        cases = [({"agent": "shell", "cwd": "/tmp\x00x"}, "cwd"), ({"agent": "sh\x00"}, "agent")]
        for body, field in cases:
            answer = http.post("/api/terminals", json=body)
            assert 400 == answer.status_code, answer.text
            assert f"`$.{field}`" in answer.json()["error"]


def test_two_concurrent_runs_on_a_new_thread_one_gets_409(tmp_path: Path) -> None:
    """Truly concurrent: both requests are on the wire before either is answered (the
    turn waits for an approval, so the first run is still going)."""
    settings = _settings(tmp_path, max_sessions=8)
    waiting = script(tool_turn("Bash", {"command": "true"}, permission=True))
    defaults = dataclasses.replace(
        settings.session_defaults, cli_path=fake_cli_command(waiting, tmp_path / "waits")
    )
    settings = dataclasses.replace(settings, session_defaults=defaults)

    async def both(url: str, thread_id: str) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=HANG_GUARD) as http:
            statuses: list[int] = []

            async def one() -> None:
                async with http.stream("POST", "/agui", json=run_input(thread_id)) as answer:
                    statuses.append(answer.status_code)
                    if answer.status_code == 200:  # up to the approval the turn waits for
                        async for line in answer.aiter_lines():
                            if "TOOL_CALL_END" in line or "RUN_FINISHED" in line:
                                break

            async with anyio.create_task_group() as tg:
                tg.start_soon(one)
                tg.start_soon(one)
            return sorted(statuses)

    with running(create_app(settings=settings)) as url:
        for trial in range(3):
            assert [200, 409] == anyio.run(both, url, f"t-new-{trial}")
        with httpx.Client(base_url=url, timeout=HANG_GUARD) as http:
            assert 3 == len(http.get("/api/sessions").json())


# ------------------------------------------------------------------ /ws


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/ws"


def until_type(ws: Any, kind: str) -> dict[str, Any]:
    for _ in range(50):
        frame: dict[str, Any] = json.loads(ws.recv(timeout=HANG_GUARD))
        if frame["type"] == kind:
            return frame
    raise AssertionError(f"no {kind} frame")


def test_ws_deep_frames_get_an_error_and_the_connection_goes_on(server: str) -> None:
    with ws_client.connect(ws_url(server), open_timeout=HANG_GUARD) as ws:
        until_type(ws, "session_list")
        for levels in (10_000, 1_000, 200):
            nested = "[" * levels + "]" * levels
            for frame in (
                '{"type": "ping", "request_id": "d", "x": ' + nested + "}",
                '{"type": "create_session", "request_id": "d", "cwd": ' + nested + "}",
                nested,
            ):
                ws.send(frame)
                error = until_type(ws, "error")
                assert "invalid_json" == error["code"], (levels, error)
                assert "levels deep" in error["message"]
        ws.send('{"type": "ping", "request_id": "after"}')
        assert "after" == until_type(ws, "pong")["request_id"]


def test_ws_nul_fields_and_long_ids_are_refused_not_echoed(server: str) -> None:
    with ws_client.connect(ws_url(server), open_timeout=HANG_GUARD) as ws:
        until_type(ws, "session_list")
        for field in ("cwd", "resume", "model"):
            ws.send(json.dumps({"type": "create_session", "request_id": field, field: "a\x00"}))
            error = until_type(ws, "error")
            assert ("invalid_frame", field) == (error["code"], error["request_id"])
            assert f"`$.{field}`" in error["message"]
        long_id = "x" * 64 * 1024
        for frame in (
            {"type": "ping", "request_id": long_id},
            {"type": "subscribe", "session_id": long_id, "request_id": "s"},
            {"type": "nope", "request_id": long_id},
        ):
            ws.send(json.dumps(frame))
            reply = ws.recv(timeout=HANG_GUARD)
            assert len(reply) < 2000, reply[:200]
            assert "error" == json.loads(reply)["type"]
        ws.send(json.dumps({"type": "list_sessions", "request_id": "ls"}))
        assert [] == until_type(ws, "session_list")["sessions"]


def test_ws_frame_limit_counts_bytes(tmp_path: Path) -> None:
    """1,000 bytes: 400 three-byte characters (1,200 bytes) close the connection with 1009."""
    app = create_app(settings=_settings(tmp_path, max_body_bytes=1000))
    with running(app) as url, ws_client.connect(ws_url(url), open_timeout=HANG_GUARD) as ws:
        until_type(ws, "session_list")
        ws.send(json.dumps({"type": "ping", "request_id": "é" * 200}, ensure_ascii=False))
        assert "pong" == until_type(ws, "pong")["type"]  # 400 bytes: fine
        ws.send(json.dumps({"type": "ping", "request_id": "€" * 400}, ensure_ascii=False))
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            until_type(ws, "pong")
        assert closed.value.rcvd is not None
        assert CLOSE_FRAME_TOO_LARGE == closed.value.rcvd.code


def count_pongs_until_closed(ws: Any) -> int:
    pongs = 0
    try:
        while True:
            if json.loads(ws.recv(timeout=HANG_GUARD))["type"] == "pong":
                pongs += 1
    except websockets.exceptions.ConnectionClosed:
        return pongs


def test_ws_a_client_that_never_reads_its_replies_is_closed_with_4001(tmp_path: Path) -> None:
    """Pings sent by a client that reads nothing: the queued replies stay under the byte
    bound and the connection is closed with 4001, not grown without end."""
    providers: list[Any] = [partial(ws_routes, max_queue_bytes=64 * 1024)]
    app = create_app(settings=_settings(tmp_path), providers=providers)
    with running(app) as url:
        sock = GatedSocket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(url.rsplit(":", 1)[1])))
        with ws_client.connect(ws_url(url), sock=sock, open_timeout=HANG_GUARD) as ws:
            until_type(ws, "session_list")
            sock.gate.clear()
            sent = 0
            stop = threading.Event()

            def flood() -> None:
                nonlocal sent
                frame = json.dumps({"type": "ping", "request_id": "p" * 250})
                try:
                    while not stop.is_set() and sent < 200_000:
                        ws.send(frame)
                        sent += 1
                except websockets.exceptions.ConnectionClosed:
                    pass

            sender = threading.Thread(target=flood, daemon=True)
            sender.start()
            # The server stops reading once it closed the connection: the flood then stalls.
            last = -1
            while sender.is_alive() and sent != last:
                last = sent
                sender.join(1.0)
            stop.set()
            sock.gate.set()
            pongs = count_pongs_until_closed(ws)
            sender.join(HANG_GUARD)
            assert ws.protocol.close_rcvd is not None, "closed without a close frame"
            assert CLOSE_SLOW_CONSUMER == ws.protocol.close_rcvd.code
            assert pongs < sent
        # The server goes on serving.
        with ws_client.connect(ws_url(url), open_timeout=HANG_GUARD) as other:
            until_type(other, "session_list")
            other.send('{"type": "ping", "request_id": 1}')
            assert 1 == until_type(other, "pong")["request_id"]


# ------------------------------------------------------------------ /ws/pty


def abort(sock: socket.socket) -> None:
    """Close with a reset, no close frame: a viewer whose machine vanished."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.mark.pty
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="terminals need Linux")
def test_an_abrupt_pty_viewer_disconnect_is_not_an_unhandled_exception(
    server: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with httpx.Client(base_url=server, timeout=HANG_GUARD) as http:
        term = http.post("/api/terminals", json={"agent": "shell"})
        assert 201 == term.status_code, term.text
        tid = term.json()["id"]
        try:
            for _ in range(3):
                sock = socket.create_connection(("127.0.0.1", int(server.rsplit(":", 1)[1])))
                url = f"{ws_url(server)}/pty/{tid}"
                with ws_client.connect(url, sock=sock, open_timeout=HANG_GUARD) as ws:
                    ws.recv(timeout=HANG_GUARD)  # the status
                    ws.send(b"yes | head -c 3000000\r")  # output flowing while it vanishes
                    ws.recv(timeout=HANG_GUARD)
                    abort(sock)
                time.sleep(0.5)  # let the server notice (nothing is asserted on time)
            assert 200 == http.get(f"/api/terminals/{tid}").status_code
        finally:
            http.delete(f"/api/terminals/{tid}")
    # The server's records only: the test's own client, whose socket it aborts, may log
    # its side of the abort (websockets.client) from its reader thread.
    problems = [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith(("claudecode", "uvicorn"))
    ]
    assert [] == [r.getMessage() for r in problems]


def next_text_frame(ws: Any, kind: str) -> dict[str, Any]:
    """The next JSON control frame of ``kind`` (the screen's binary frames are skipped)."""
    for _ in range(200):
        frame = ws.recv(timeout=HANG_GUARD)
        if isinstance(frame, str) and (parsed := json.loads(frame))["type"] == kind:
            return dict(parsed)
    raise AssertionError(f"no {kind} frame")


@pytest.mark.pty
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="terminals need Linux")
def test_a_deep_pty_control_frame_is_refused_and_the_viewer_stays(server: str) -> None:
    """A deep value before the ``type`` (which the decoder skips over looking for the tag)
    is a ``bad_frame`` error, not a crashed viewer."""
    with httpx.Client(base_url=server, timeout=HANG_GUARD) as http:
        tid = http.post("/api/terminals", json={"agent": "shell"}).json()["id"]
        try:
            with ws_client.connect(f"{ws_url(server)}/pty/{tid}", open_timeout=HANG_GUARD) as ws:
                assert "status" == json.loads(ws.recv(timeout=HANG_GUARD))["type"]
                nested = "[" * 5000 + "]" * 5000
                ws.send('{"x": ' + nested + ', "type": "status"}')
                assert "bad_frame" == next_text_frame(ws, "error")["code"]
                ws.send('{"type": "status"}')
                assert "status" == next_text_frame(ws, "status")["type"]
        finally:
            http.delete(f"/api/terminals/{tid}")


def test_the_keep_alive_connection_survives_a_refused_body(server: str) -> None:
    """On one raw HTTP/1.1 connection: a 10,000-level body, a body that is not UTF-8, then a
    good request, all answered (a 500 used to make uvicorn drop the connection)."""
    port = int(server.rsplit(":", 1)[1])
    bodies = [deep(10_000), b'{"cwd": "\xff"}', b"{}"]
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD) as sock:
        reader = sock.makefile("rb")
        for body in bodies:
            head = (
                f"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            sock.sendall(head.encode() + body)
            status = reader.readline().split()[1]
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            answer = json.loads(reader.read(length))
            expected = b"201" if body == b"{}" else b"400"
            assert expected == status, answer
