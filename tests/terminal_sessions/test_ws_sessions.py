"""Terminal sessions in the WebSocket protocol (/ws): listed with kind "terminal", reported by
session_changed as their state changes, created and stopped with create_session /
close_session. Real server, real ``websockets`` client."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets.sync.client as ws_client

from adapter.server import ServerSettings, create_app
from adapter.server.terminal_routes import make_terminal_routes
from adapter.terminals import TerminalManager
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD

from ._helpers import shell_env

pytestmark = [pytest.mark.server, pytest.mark.pty]

TOKEN = "ws-terminal-token"


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Any]:
    routes = make_terminal_routes(
        lambda: TerminalManager(env=shell_env(tmp_path)), default_cwd=str(tmp_path)
    )
    providers: list[Any] = [
        "adapter.server.routes:core_routes",
        "adapter.server.ws.endpoint:ws_routes",
        routes,
    ]
    app = create_app(settings=ServerSettings(token=TOKEN), providers=providers)
    with running(app) as base:
        url = base.replace("http://", "ws://") + f"/ws?token={TOKEN}"
        with ws_client.connect(url, open_timeout=HANG_GUARD) as conn:
            yield conn


_seen: dict[int, list[dict[str, Any]]] = {}


def until(conn: Any, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first frame (already received, or coming) that matches."""
    seen = _seen.setdefault(id(conn), [])
    for frame in seen:
        if pred(frame):
            seen.remove(frame)
            return frame
    while True:
        frame = json.loads(conn.recv(timeout=HANG_GUARD))
        if pred(frame):
            return frame  # type: ignore[no-any-return]
        seen.append(frame)


def request(conn: Any, frame: dict[str, Any], rid: str) -> dict[str, Any]:
    conn.send(json.dumps({**frame, "request_id": rid}))
    return until(conn, lambda f: f.get("request_id") == rid)


def test_terminals_are_listed_changed_created_and_closed_over_ws(ws: Any) -> None:
    assert [] == until(ws, lambda f: f["type"] == "session_list")["sessions"]
    # Watch the list: every session's state changes, the terminals' too.
    assert [] == request(ws, {"type": "list_sessions"}, "l0")["sessions"]
    ack = request(ws, {"type": "create_session", "kind": "terminal", "agent": "shell"}, "c1")
    assert "ack" == ack["type"], ack
    session = ack["session"]
    tid = ack["session_id"]
    assert ("terminal", "shell", tid) == (session["kind"], session["title"], session["id"])
    # The shell draws its prompt and goes quiet: the state reaches idle.
    until(
        ws,
        lambda f: (
            f["type"] == "session_changed"
            and f["session"]["id"] == tid
            and f["session"].get("state") == "idle"
        ),
    )
    listed = request(ws, {"type": "list_sessions"}, "l1")
    assert [("terminal", tid)] == [(s["kind"], s["id"]) for s in listed["sessions"]]
    assert "ack" == request(ws, {"type": "close_session", "session_id": tid}, "x1")["type"]
    closed = until(
        ws,
        lambda f: f["type"] == "session_changed" and f["session"].get("state") == "closed",
    )
    assert ("terminated", "stopped") == (
        closed["session"]["status"],
        closed["session"]["status_reason"],
    )


def test_bad_terminal_requests_get_typed_errors(ws: Any) -> None:
    until(ws, lambda f: f["type"] == "session_list")
    for rid, frame, code in (
        ("a", {"type": "create_session", "kind": "terminal"}, "bad_request"),
        ("b", {"type": "create_session", "kind": "terminal", "agent": "vim"}, "bad_request"),
        (
            "c",
            {"type": "create_session", "kind": "terminal", "agent": "shell", "cols": 0},
            "bad_request",
        ),
        ("d", {"type": "create_session", "kind": "tty", "agent": "shell"}, "invalid_frame"),
    ):
        answer = request(ws, frame, rid)
        assert ("error", code) == (answer["type"], answer["code"]), answer
