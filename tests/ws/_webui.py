"""What the web UI's browser tests share: a server on the fake CLI, a page on it, a second
client and screenshots (polling and the axe-core check are tests.support.browser's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import websockets.sync.client as ws_client

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from tests.support.browser import open_webui
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "webui"
# Records notifications instead of showing them (headless Chromium has no notification UI).
NOTIFY_STUB = """
window.__notes = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.__notes.push({title, body: options && options.body}); }
};
"""


def serve(tmp_path: Path, cli_path: str | Path, **extra: Any) -> Any:
    """A server over ``cli_path``; ``extra``: more :class:`ServerSettings` (``agents``...)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    defaults = SessionConfig(cli_path=cli_path, cwd=work, policy=PermissionPolicy("supervised"))
    return running(create_app(settings=ServerSettings(session_defaults=defaults, **extra)))


__all__ = ("ARTIFACTS", "Remote", "open_page", "serve", "shot")


def open_page(browser: Any, url: str) -> Any:
    return open_webui(browser, url + "/", init_script=NOTIFY_STUB)


class Remote:
    """Another client on the same server (plain WebSocket)."""

    def __init__(self, url: str) -> None:
        ws_url = url.replace("http://", "ws://") + "/ws"
        self.conn = ws_client.connect(ws_url, open_timeout=HANG_GUARD).__enter__()
        self.n = 0

    def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        rid = f"x{self.n}"
        self.conn.send(json.dumps({**frame, "request_id": rid}))
        while True:
            reply: dict[str, Any] = json.loads(self.conn.recv(timeout=HANG_GUARD))
            if reply.get("request_id") == rid:
                return reply


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
