"""A ``/ws`` client that stops reading its socket, for longer than the server's keepalive,
against a real server run with ``serve``'s own uvicorn configuration (its keepalive made
short, so the stall need not last 40 s).

Before the fix the client, once it read again, found the connection failed with 1011 (the
keepalive timed out on a client that did not answer its pings, since it read nothing) rather
than the documented 4001: the server's close waited for room in a send buffer the client
never drained.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import socket
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client as ws_client

from adapter import PermissionPolicy, SessionConfig
from adapter.commands._ws_protocol import WebSocketProtocol
from adapter.commands.serve import uvicorn_config
from adapter.server import ServerSettings, create_app
from adapter.server.terminal_routes import CLOSE_LAGGING
from adapter.server.ws import CLOSE_SLOW_CONSUMER
from adapter.server.ws.endpoint import ws_routes
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.servers import running
from tests.support.sockets import GatedSocket
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import wait_until

pytestmark = pytest.mark.server

#: The server's keepalive in these tests: a ping every PING seconds, PING to answer.
PING = 0.5


def _app(tmp_path: Path, subscriber_buffer: int = 5_000, **ws_options: Any) -> Any:
    # Incompressible text, far more than the kernel's buffers hold for a client that reads
    # nothing, in many events.
    big = base64.b64encode(os.urandom(6 * 1024 * 1024)).decode()
    work = tmp_path / "work"
    work.mkdir()
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn(big, chunk=64 * 1024)), tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
        subscriber_buffer=subscriber_buffer,
    )
    settings = ServerSettings(session_defaults=defaults, state_dir=tmp_path / "state")
    providers: list[Any] = [
        "adapter.server.routes:core_routes",
        partial(ws_routes, max_queue=8, **ws_options),
    ]
    return create_app(settings=settings, providers=providers)


class _QuickProtocol(WebSocketProtocol):
    """serve's WebSocket protocol, its wait for a client's answer to a close cut from
    uvicorn's 10 s to less than the tests' stalls: a stall outlasts it, as in life one may
    outlast 10 s."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.close_timeout = PING / 2


def _serve_config(app: Any) -> Any:
    config = uvicorn_config(app, ws_ping_interval=PING, ws_ping_timeout=PING)
    config.ws = _QuickProtocol
    return config


def _connect(url: str, **kwargs: Any) -> Any:
    # No keepalive of the client's own: only the server's is under test.
    ws = ws_client.connect(
        url, max_size=None, open_timeout=HANG_GUARD, ping_interval=None, **kwargs
    ).__enter__()
    assert "session_list" == json.loads(ws.recv(timeout=HANG_GUARD))["type"]
    return ws


def _request(ws: Any, frame: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps({**frame, "request_id": "r"}))
    while True:
        got: dict[str, Any] = json.loads(ws.recv(timeout=HANG_GUARD))
        if got.get("request_id") == "r":
            return got


def _until_complete(ws: Any, session_id: str) -> int:
    """Events up to the session's ``complete``."""
    n = 0
    while True:
        frame = json.loads(ws.recv(timeout=HANG_GUARD))
        if frame["type"] == "event" and frame["session_id"] == session_id:
            n += 1
            if frame["event"]["type"] == "complete":
                return n


def _close_of(ws: Any) -> tuple[int | None, str]:
    """Read everything the server sent; the code and reason of its close frame."""
    try:
        while True:
            ws.recv(timeout=HANG_GUARD)
    except websockets.exceptions.ConnectionClosed as closed:
        if closed.rcvd is None:
            return None, ""
        return closed.rcvd.code, closed.rcvd.reason


def _logged(caplog: pytest.LogCaptureFixture, *words: str) -> bool:
    return any(all(w in r.getMessage() for w in words) for r in caplog.records)


def _server_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith(("claudecode", "uvicorn"))
    ]


def test_a_subscriber_stalled_past_the_keepalive_is_closed_with_4001(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A subscriber that stops reading while its session streams: the keepalive finds its
    send buffer full and closes it with 4001 and a reason, which it reads once it resumes;
    the other subscriber streams the whole turn meanwhile, the server goes on serving, and
    nothing is logged as an error."""
    caplog.set_level(logging.INFO)
    app = _app(tmp_path)
    with running(app, config=_serve_config) as base:
        url = base.replace("http://", "ws://") + "/ws"
        fast = _connect(url)
        sock = GatedSocket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: backs up soon
        sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        slow = _connect(url, sock=sock)
        try:
            ack = _request(fast, {"type": "create_session"})
            sid = ack["session_id"]
            for ws in (fast, slow):
                assert "ack" == _request(ws, {"type": "subscribe", "session_id": sid})["type"]
            sock.gate.clear()  # the slow client stops reading its socket
            fast.send(json.dumps({"type": "prompt", "session_id": sid, "text": "go"}))
            assert _until_complete(fast, sid) > 50  # never held up by the slow one
            wait_until(lambda: _logged(caplog, "ws.stalled"), what="the keepalive's close")
            # It stays stalled past a whole keepalive (the scenario's stall, not a wait for
            # a condition): a close that waited for room would lose to uvicorn's 1011 here.
            time.sleep(4 * PING)
            sock.gate.set()
            code, reason = _close_of(slow)
            assert CLOSE_SLOW_CONSUMER == code
            assert reason.startswith("too slow")
            # The server goes on serving: the other client, and a new one.
            assert "pong" == _request(fast, {"type": "ping"})["type"]
            again = _connect(url)
            assert "pong" == _request(again, {"type": "ping"})["type"]
            again.close()
        finally:
            sock.gate.set()
            fast.close()
            slow.close()
    assert [] == _server_errors(caplog)


def test_a_subscription_dropped_while_its_send_waits_closes_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A subscriber that stops reading while its session streams more events than its
    session queue holds: the session drops the subscription while the connection's send
    waits for room, and the server closes it with 4001 then, with no keepalive in sight (an
    hour away here); the client reads the close once it resumes."""
    caplog.set_level(logging.INFO)
    app = _app(tmp_path, subscriber_buffer=16)

    def no_keepalive(app: Any) -> Any:
        config = uvicorn_config(app, ws_ping_interval=3600, ws_ping_timeout=3600)
        config.ws = _QuickProtocol
        return config

    with running(app, config=no_keepalive) as base:
        url = base.replace("http://", "ws://") + "/ws"
        fast = _connect(url)
        sock = GatedSocket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        slow = _connect(url, sock=sock)
        try:
            sid = _request(fast, {"type": "create_session"})["session_id"]
            for ws in (fast, slow):
                assert "ack" == _request(ws, {"type": "subscribe", "session_id": sid})["type"]
            sock.gate.clear()  # the slow client stops reading its socket
            fast.send(json.dumps({"type": "prompt", "session_id": sid, "text": "go"}))
            assert _until_complete(fast, sid) > 50
            wait_until(lambda: _logged(caplog, "ws.closed", "4001"), what="the slow one's close")
            assert not _logged(caplog, "ws.stalled")  # not the keepalive's doing
            sock.gate.set()
            code, reason = _close_of(slow)
            assert CLOSE_SLOW_CONSUMER == code
            assert reason.startswith("too slow")
            assert "pong" == _request(fast, {"type": "ping"})["type"]
        finally:
            sock.gate.set()
            fast.close()
            slow.close()
    assert [] == _server_errors(caplog)


def test_a_client_that_floods_requests_and_stalls_past_the_keepalive_gets_4001(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that sends requests and never reads their replies: the server closes it
    with 4001 once the replies exceed the byte bound; the close is written behind the full
    send buffer at once, so the keepalive, which comes while the client still reads nothing,
    does not replace it with 1011."""
    caplog.set_level(logging.INFO)
    # Room for the replies of many reads of the client's requests: the send buffer fills
    # before the byte bound is reached.
    app = _app(tmp_path, max_queue_bytes=1024 * 1024)
    with running(app, config=_serve_config) as base:
        url = base.replace("http://", "ws://") + "/ws"
        sock = GatedSocket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        ws = _connect(url, sock=sock)
        closed = threading.Event()
        try:
            sock.gate.clear()

            def flood() -> None:
                frame = json.dumps({"type": "ping", "request_id": "p" * 250})
                with contextlib.suppress(websockets.exceptions.ConnectionClosed):
                    while not closed.is_set():
                        ws.send(frame)

            sender = threading.Thread(target=flood, daemon=True)
            sender.start()
            wait_until(lambda: _logged(caplog, "ws.closed"), what="the flooding client's close")
            closed.set()
            time.sleep(4 * PING)  # the client stalls on, past a whole keepalive
            sock.gate.set()
            sender.join(HANG_GUARD)
            code, reason = _close_of(ws)
            assert CLOSE_SLOW_CONSUMER == code
            assert reason.startswith("too slow")
            again = _connect(url)
            assert "pong" == _request(again, {"type": "ping"})["type"]
            again.close()
        finally:
            closed.set()
            sock.gate.set()
            ws.close()
    assert [] == _server_errors(caplog)


def test_an_idle_client_that_stops_reading_gets_4001_not_1011(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Nothing to send, so the send buffer never fills: a client that does not answer the
    keepalive still gets the typed close (were it gone, it would read no close at all)."""
    caplog.set_level(logging.INFO)
    with running(_app(tmp_path), config=_serve_config) as base:
        sock = GatedSocket()
        sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        ws = _connect(base.replace("http://", "ws://") + "/ws", sock=sock)
        try:
            sock.gate.clear()
            wait_until(lambda: _logged(caplog, "ws.stalled"), what="the keepalive's close")
            sock.gate.set()
            code, reason = _close_of(ws)
            assert CLOSE_SLOW_CONSUMER == code
            assert reason.startswith("too slow")
        finally:
            sock.gate.set()
            ws.close()
    assert [] == _server_errors(caplog)


@pytest.mark.pty
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="terminals need Linux")
def test_a_terminal_viewer_stalled_past_the_keepalive_gets_1013(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``/ws/pty`` viewer that stops reading while its terminal prints: the typed close
    of a viewer fallen behind (1013), not 1011; the terminal lives on."""
    caplog.set_level(logging.INFO)
    work = tmp_path / "work"
    work.mkdir()
    settings = ServerSettings(
        session_defaults=SessionConfig(cwd=work), state_dir=tmp_path / "state"
    )
    with (
        running(create_app(settings=settings), config=_serve_config) as base,
        httpx.Client(base_url=base, timeout=HANG_GUARD) as http,
    ):
        term = http.post("/api/terminals", json={"agent": "shell"})
        assert 201 == term.status_code, term.text
        tid = term.json()["id"]
        sock = GatedSocket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", int(base.rsplit(":", 1)[1])))
        url = base.replace("http://", "ws://") + f"/ws/pty/{tid}"
        ws = ws_client.connect(
            url, sock=sock, max_size=None, open_timeout=HANG_GUARD, ping_interval=None
        ).__enter__()
        try:
            ws.recv(timeout=HANG_GUARD)  # the status
            sock.gate.clear()
            ws.send(b"yes 'the terminal prints and prints' | head -c 30000000\r")
            wait_until(lambda: _logged(caplog, "ws.stalled"), what="the keepalive's close")
            time.sleep(4 * PING)  # the viewer stalls on
            sock.gate.set()
            code, _ = _close_of(ws)
            assert CLOSE_LAGGING == code
            assert 200 == http.get(f"/api/terminals/{tid}").status_code
        finally:
            sock.gate.set()
            ws.close()
            http.delete(f"/api/terminals/{tid}")
    assert [] == _server_errors(caplog)
