"""The WebSocket front end with the real CLI: a session's transcript listed by
``list_history``, resumed by ``create_session`` (the snapshot shows the stored
conversation, the CLI confirms the same session id), and forked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import websockets.sync.client as ws_client

from adapter.server import ServerSettings, create_app
from tests.support.configs import real_cli_config
from tests.support.timeouts import NODE_GUARD

from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.server]


class Client:
    def __init__(self, url: str) -> None:
        self.conn = ws_client.connect(url, max_size=None, open_timeout=NODE_GUARD).__enter__()
        self.n = 0

    def recv(self) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(self.conn.recv(timeout=NODE_GUARD))
        return frame

    def until(self, pred: Any) -> list[dict[str, Any]]:
        got = [self.recv()]
        while not pred(got[-1]):
            got.append(self.recv())
        return got

    def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        rid = f"r{self.n}"
        self.conn.send(json.dumps({**frame, "request_id": rid}))
        return self.until(lambda f: f.get("request_id") == rid)[-1]


@pytest.fixture
def url(cli_command: str, cli_env: Any) -> Iterator[str]:
    from tests.support.servers import running

    defaults = real_cli_config(cli_command, cli_env, policy="supervised")
    app = create_app(settings=ServerSettings(session_defaults=defaults))
    with running(app) as base:
        yield base.replace("http://", "ws://") + "/ws"


def turn(c: Client, session_id: str, text: str) -> list[dict[str, Any]]:
    assert "ack" == c.request({"type": "prompt", "session_id": session_id, "text": text})["type"]
    frames = c.until(lambda f: f["type"] == "event" and f["event"]["type"] == "complete")
    return [f["event"] for f in frames if f["type"] == "event"]


def test_list_resume_and_fork_stored_sessions(
    url: str, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    fake_api.add_main(
        text_turn("The first answer."), text_turn("Resumed answer."), text_turn("Forked answer.")
    )
    c = Client(url)
    assert "session_list" == c.recv()["type"]
    ack = c.request({"type": "create_session"})
    sid = ack["session_id"]
    c.request({"type": "subscribe", "session_id": sid, "since_seq": 0})
    events = turn(c, sid, "remember the word teapot")
    [status] = [e for e in events if e["type"] == "session_status"]
    cli_id = status["cli_session_id"]
    assert "ack" == c.request({"type": "close_session", "session_id": sid})["type"]

    listed = c.request({"type": "list_history", "cwd": str(cli_env.cwd)})
    assert "history" == listed["type"]
    [stored] = listed["sessions"]
    assert (cli_id, "remember the word teapot") == (stored["session_id"], stored["title"])
    everywhere = c.request({"type": "list_history"})
    assert [cli_id] == [s["session_id"] for s in everywhere["sessions"]]

    ack = c.request({"type": "create_session", "resume": cli_id})
    assert "ack" == ack["type"], ack
    resumed = ack["session_id"]
    c.request({"type": "subscribe", "session_id": resumed})
    snap = c.until(lambda f: f["type"] == "snapshot")[-1]
    entries = snap["chat"]["entries"]
    assert ["remember the word teapot", "The first answer."] == [
        e["text"] for e in entries if e["kind"] in ("user", "text")
    ]
    events = turn(c, resumed, "what was the word?")
    [status] = [e for e in events if e["type"] == "session_status"]
    assert ("resumed", cli_id) == (status["status"], status["cli_session_id"])
    assert "teapot" in str(fake_api.main_requests()[-1].body), "the CLI sent the old turns"

    ack = c.request({"type": "create_session", "resume": cli_id, "fork": True})
    forked = ack["session_id"]
    c.request({"type": "subscribe", "session_id": forked, "since_seq": 0})
    events = turn(c, forked, "fork it")
    [status] = [e for e in events if e["type"] == "session_status"]
    assert status["cli_session_id"] and cli_id != status["cli_session_id"]
    c.conn.close()
