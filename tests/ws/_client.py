"""The WebSocket protocol tests' client and server: a blocking client speaking the protocol
as JSON dicts, and a real server over the fake CLI on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import websockets.sync.client as ws_client

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from adapter.server.ws.endpoint import ws_routes
from claudecode.testing import fake_cli_command
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD

TOKEN = "ws-token"


class Client:
    """A blocking WebSocket client speaking the protocol as JSON dicts."""

    def __init__(self, url: str, **kwargs: Any) -> None:
        # entered by hand: the connection lives across calls (closed by close())
        self.conn = ws_client.connect(
            url, max_size=None, open_timeout=HANG_GUARD, **kwargs
        ).__enter__()
        self.seen: list[dict[str, Any]] = []
        self._n = 0

    def close(self) -> None:
        self.conn.close()

    def send(self, frame: dict[str, Any] | str | bytes) -> None:
        self.conn.send(frame if isinstance(frame, str | bytes) else json.dumps(frame))

    def recv(self) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(self.conn.recv(timeout=HANG_GUARD))
        self.seen.append(frame)
        return frame

    def until(self, pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """Frames up to and including the first that matches."""
        got: list[dict[str, Any]] = []
        while True:
            frame = self.recv()
            got.append(frame)
            if pred(frame):
                return got

    def saw(self, pred: Callable[[dict[str, Any]], bool], since: int = 0) -> None:
        """Return once a frame (received after ``self.seen[since]``, or coming) matches."""
        if not any(pred(f) for f in self.seen[since:]):
            self.until(pred)

    def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Send with a fresh request_id; the ack or error that answers it."""
        self._n += 1
        rid = f"r{self._n}"
        self.send({**frame, "request_id": rid})
        got = self.until(
            lambda f: (
                (f.get("request_id") == rid and f["type"] in ("ack", "error", "pong"))
                or (f.get("request_id") == rid and f["type"] in ("session_list", "history"))
            )
        )
        return got[-1]


def settings_for(
    tmp_path: Path,
    body: Any,
    subscriber_buffer: int = 5_000,
    history_size: int = 10_000,
    **extra: Any,
) -> ServerSettings:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    defaults = SessionConfig(
        cli_path=fake_cli_command(body, tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
        subscriber_buffer=subscriber_buffer,
        history_size=history_size,
    )
    return ServerSettings(
        session_defaults=defaults, max_sessions=4, max_body_bytes=64 * 1024, **extra
    )


@contextmanager
def serve(
    tmp_path: Path,
    body: Any,
    *,
    max_queue: int | None = None,
    config: Callable[[Any], Any] | None = None,
    **extra: Any,
) -> Iterator[str]:
    """A real server on 127.0.0.1; yields the ws:// URL of /ws. ``config``: the uvicorn
    config (``serve``'s :func:`~adapter.commands.serve.uvicorn_config`, say)."""
    providers: list[Any] = ["adapter.server.routes:core_routes"]
    providers.append(
        partial(ws_routes, max_queue=max_queue) if max_queue is not None else ws_routes
    )
    app = create_app(settings=settings_for(tmp_path, body, **extra), providers=providers)
    with running(app, config=config) as url:
        yield url.replace("http://", "ws://") + "/ws"


def connect(url: str, **kwargs: Any) -> Client:
    c = Client(url, **kwargs)
    first = c.recv()
    assert "session_list" == first["type"]
    return c
