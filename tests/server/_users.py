"""Shared pieces of the identity tests: a team in a users file, a blocking /ws client, and
the web UI opened as one of its users."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets.sync.client as ws_client

from adapter.server.identity import new_token, user_entry
from tests.support.browser import open_webui
from tests.support.timeouts import HANG_GUARD

WAIT = HANG_GUARD


@dataclass
class Team:
    """alice (no terminals), bob (terminals) and root (an admin), with their tokens."""

    users_file: Path
    tokens: dict[str, str] = field(default_factory=dict)

    @classmethod
    def write(cls, path: Path) -> Team:
        team = cls(path)
        entries = []
        for name, admin, terminals in (
            ("alice", False, False),
            ("bob", False, True),
            ("root", True, True),
        ):
            token = new_token()
            team.tokens[name] = token
            entries.append(user_entry(name, token, admin=admin, terminals=terminals))
        path.write_text("\n".join(entries), encoding="utf-8")
        return team

    def http(self, base: str, name: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[name]}"}
        return httpx.Client(base_url=base, headers=headers, timeout=WAIT)

    def ws(self, base: str, name: str) -> WsClient:
        url = base.replace("http://", "ws://") + f"/ws?token={self.tokens[name]}"
        return WsClient(url)


class WsClient:
    """A blocking /ws client speaking the protocol as JSON dicts; keeps every frame."""

    def __init__(self, url: str, **kwargs: Any) -> None:
        # entered by hand: the connection lives across calls (closed by close())
        self.conn = ws_client.connect(url, max_size=None, open_timeout=WAIT, **kwargs).__enter__()
        self.seen: list[dict[str, Any]] = []
        self._n = 0
        first = self.recv()
        assert "session_list" == first["type"], first

    def close(self) -> None:
        self.conn.close()

    def recv(self, timeout: float = WAIT) -> dict[str, Any]:
        frame: dict[str, Any] = json.loads(self.conn.recv(timeout=timeout))
        self.seen.append(frame)
        return frame

    def until(self, pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        while True:
            got.append(self.recv())
            if pred(got[-1]):
                return got

    def request(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Send with a fresh request_id; the frame that answers it."""
        self._n += 1
        rid = f"r{self._n}"
        self.conn.send(json.dumps({**frame, "request_id": rid}))
        return self.until(lambda f: f.get("request_id") == rid)[-1]

    def drain(self) -> list[dict[str, Any]]:
        """Everything that arrives until a ping is answered."""
        self._n += 1
        rid = f"r{self._n}"
        self.conn.send(json.dumps({"type": "ping", "request_id": rid}))
        return self.until(lambda f: f.get("request_id") == rid)


def open_as(browser: Any, url: str, token: str) -> Any:
    """The web UI at ``url`` in a fresh browser context, logged in with ``token``
    (``#token=``) and connected; the page's uncaught errors collect in ``page.errors``."""
    return open_webui(browser, f"{url}/#token={token}")
