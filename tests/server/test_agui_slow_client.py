"""An AG-UI client that stops reading its socket while its run streams, against a real server
run with ``serve``'s own uvicorn configuration.

While a client keeps up, the run's pump writes the frames to it itself; a write that would
wait for this client is left to the client's stream, which reads on from the run's frames.
So the run goes to its end without waiting for the client, and the client, once it reads
again, gets every frame once and in order: the same run a fast client sees.
"""

from __future__ import annotations

import base64
import json
import os
import socket
from pathlib import Path
from typing import Any

import h11
import pytest

from adapter.commands.serve import uvicorn_config
from claudecode.testing import script, text_turn
from tests.support.servers import running
from tests.support.sockets import GatedSocket
from tests.support.waits import wait_until

from ._agui import app_for, client, text_of, valid
from ._sse import parse, post_stream, run_input, user

pytestmark = pytest.mark.server


def _post(sock: socket.socket, port: int, body: dict[str, Any]) -> h11.Connection:
    conn = h11.Connection(h11.CLIENT)
    data = json.dumps(body).encode()
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Content-Type", "application/json"),
        ("Accept", "text/event-stream"),
        ("Content-Length", str(len(data))),
    ]
    sock.sendall(conn.send(h11.Request(method="POST", target="/agui", headers=headers)))
    sock.sendall(conn.send(h11.Data(data=data)) + conn.send(h11.EndOfMessage()))
    return conn


def _read_body(sock: socket.socket, conn: h11.Connection) -> bytes:
    body = bytearray()
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(sock.recv(1 << 16))
        elif isinstance(event, h11.Response):
            assert 200 == event.status_code
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return bytes(body)


def test_a_client_that_stops_reading_gets_the_whole_run_once_it_reads_again(
    tmp_path: Path,
) -> None:
    # Incompressible text, far more than the kernel's buffers hold for a client that reads
    # nothing, in many events.
    big = base64.b64encode(os.urandom(4 * 1024 * 1024)).decode()
    app = app_for(tmp_path, script(text_turn(big, chunk=32 * 1024)), agui_disconnect="keep")
    with running(app, config=uvicorn_config) as url, client(url) as http:
        port = int(url.rsplit(":", 1)[1])
        sock = GatedSocket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: backs up soon
        sock.connect(("127.0.0.1", port))
        body = run_input("slow", [user("go")])
        try:
            sock.gate.clear()  # reads nothing from here on
            conn = _post(sock, port, body)

            def turn_done() -> bool:
                sessions = http.get("/api/sessions").json()
                return any(s["state"] == "idle" and s["last_seq"] > 100 for s in sessions)

            def run_done() -> bool:
                # A connect gets the thread whole, and no live run to join.
                _, events = post_stream(http, "/agui/connect", run_input("slow", []))
                return [e["type"] for e in events] == [
                    "RUN_STARTED",
                    "MESSAGES_SNAPSHOT",
                    "RUN_FINISHED",
                ]

            wait_until(turn_done, what="the CLI turn's end, the client not reading")
            wait_until(run_done, what="the run's end, the client not reading")
            _, snapshot = post_stream(http, "/agui/connect", run_input("slow", []))
            messages = snapshot[1]["messages"]
            assert big == messages[-1]["content"]
            sock.gate.set()
            raw = _read_body(sock, conn)
        finally:
            sock.close()
    events = valid(parse(raw), body)
    assert big == text_of(events)
    assert "RUN_FINISHED" == events[-1]["type"]
