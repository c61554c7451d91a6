"""The shared server: security, errors, health and the session REST API, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client as ws_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerContext, ServerSettings, create_app
from claudecode.testing import fake_cli_command, script, tool_turn
from tests.support.servers import running
from tests.support.waits import wait_until

pytestmark = pytest.mark.server

TOKEN = "s3cret-token"


def defaults(tmp_path: Path, body: Any) -> SessionConfig:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return SessionConfig(
        cli_path=fake_cli_command(body, tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
    )


def echo_ws(ctx: ServerContext) -> list[BaseRoute]:
    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_text(await ws.receive_text())
        await ws.close()

    return [WebSocketRoute("/ws/echo", echo)]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = ServerSettings(
        token=TOKEN,
        cors_origins=("http://app.example",),
        max_body_bytes=1000,
        session_defaults=defaults(
            tmp_path, script(tool_turn("Bash", {"command": "touch made.txt"}, permission=True))
        ),
        max_sessions=2,
    )
    app = create_app(settings=settings, extra_providers=[echo_ws])
    with running(app) as url:
        yield url


def client(url: str, token: str | None = TOKEN) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, headers=headers, timeout=30)


def test_health_is_public_everything_else_needs_the_token(server: str) -> None:
    """/healthz answers anyone; other routes 401 without the right bearer token."""
    with client(server, token=None) as anon:
        assert {"status": "ok"} == anon.get("/healthz").json()
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            answer = anon.get("/readyz", headers=headers)
            assert 401 == answer.status_code
            assert "Bearer" == answer.headers["www-authenticate"]
            assert "bearer token" in answer.json()["error"]
        # The query-parameter form is for WebSocket handshakes only.
        assert 401 == anon.get("/api/sessions", params={"token": TOKEN}).status_code
    with client(server) as authed:
        ready = authed.get("/readyz")
        assert 200 == ready.status_code
        body = ready.json()
        assert body["ready"] and body["cli"] and 0 == body["sessions"]
        assert 2 == body["max_sessions"]


def test_origins_cors_and_preflight(server: str) -> None:
    """A configured origin gets CORS headers (and its preflight); a foreign one gets 403."""
    with client(server) as http:
        allowed = http.get("/api/sessions", headers={"Origin": "http://app.example"})
        assert 200 == allowed.status_code
        assert "http://app.example" == allowed.headers["access-control-allow-origin"]
        foreign = http.get("/api/sessions", headers={"Origin": "http://evil.example"})
        assert 403 == foreign.status_code
        assert "origin not allowed" == foreign.json()["error"]
        same = http.get("/api/sessions", headers={"Origin": server})
        assert 200 == same.status_code
    with client(server, token=None) as anon:
        preflight = anon.options(
            "/api/sessions",
            headers={
                "Origin": "http://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert 200 == preflight.status_code
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()


def test_body_limits_and_json_errors(server: str) -> None:
    """413 for big bodies (declared or chunked); JSON 4xx for everything a client gets wrong."""
    with client(server) as http:
        big = http.post("/api/sessions", content=b"{" + b" " * 2000 + b"}")
        assert 413 == big.status_code
        assert "larger than 1000" in big.json()["error"]

        def chunks() -> Iterator[bytes]:
            for _ in range(20):
                yield b" " * 100

        chunked = http.post(
            "/api/sessions", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert 413 == chunked.status_code
        cases = [
            (http.get("/nope"), 404),
            (http.put("/healthz"), 405),
            (http.post("/api/sessions", content=b"{}"), 415),
            (http.post("/api/sessions", content=b"{", headers=_json), 400),
            (http.post("/api/sessions", json={"cwd": 5}), 400),
            (http.get("/api/sessions/unknown"), 404),
            (http.post("/api/sessions/unknown/prompt", json={"text": "hi"}), 404),
            (http.post("/api/sessions/unknown/prompt", json={"txt": "hi"}), 400),
            (http.post("/api/sessions/u/permissions/p", json={"behavior": "maybe"}), 400),
            (http.post("/api/sessions/u/permissions/p", json={"behavior": "allow"}), 404),
        ]
        for answer, status in cases:
            assert (status, "application/json") == (
                answer.status_code,
                answer.headers["content-type"],
            ), answer.text
            assert isinstance(answer.json()["error"], str)
        assert "$.cwd" in http.post("/api/sessions", json={"cwd": 5}).json()["error"]
        assert 200 == http.get("/healthz").status_code  # still serving


_json = {"Content-Type": "application/json"}


def test_session_rest_api_with_an_approval(server: str, tmp_path: Path) -> None:
    """Create, prompt, answer the permission request over REST, see it idle, close it."""
    with client(server) as http:
        created = http.post("/api/sessions", json={"model": "sonnet"})
        assert 201 == created.status_code, created.text
        session = created.json()
        assert ("idle", "sonnet") == (session["state"], session["model"])
        sid = session["id"]
        assert 202 == http.post(f"/api/sessions/{sid}/prompt", json={"text": "go"}).status_code
        info = wait_for(http, sid, lambda s: s["state"] == "waiting")
        assert "go" == info["title"]
        (pending,) = info["pending_permissions"]
        answer = http.post(f"/api/sessions/{sid}/permissions/{pending}", json={"behavior": "allow"})
        assert 200 == answer.status_code, answer.text
        wait_for(http, sid, lambda s: s["state"] == "idle" and s["last_seq"] > 5)
        assert (tmp_path / "work" / "made.txt").exists()
        again = http.post(f"/api/sessions/{sid}/permissions/{pending}", json={"behavior": "deny"})
        assert 404 == again.status_code
        assert [sid] == [s["id"] for s in http.get("/api/sessions").json()]
        closed = http.delete(f"/api/sessions/{sid}")
        assert "closed" == closed.json()["state"]
        assert 409 == http.post(f"/api/sessions/{sid}/prompt", json={"text": "x"}).status_code
        http.post("/api/sessions", json={})
        http.post("/api/sessions", json={})
        full = http.post("/api/sessions", json={})
        assert 429 == full.status_code


def wait_for(http: httpx.Client, sid: str, done: Any) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        info: dict[str, Any] = http.get(f"/api/sessions/{sid}").json()
        return info if done(info) else None

    found: dict[str, Any] = wait_until(reached, poll=0.05, what=f"session {sid}")
    return found


def test_websocket_routes_take_the_token_as_a_query_parameter(server: str) -> None:
    """Browsers cannot set headers on WebSockets: ?token= works there; no token or a foreign
    Origin is refused at the handshake."""
    base = server.replace("http://", "ws://") + "/ws/echo"
    with ws_client.connect(f"{base}?token={TOKEN}") as ws:
        ws.send("ping")
        assert "ping" == ws.recv(timeout=10)
    with ws_client.connect(base, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        ws.send("pong")
        assert "pong" == ws.recv(timeout=10)
    for url, headers in (
        (base, {}),
        (f"{base}?token=wrong", {}),
        (f"{base}?token={TOKEN}", {"Origin": "http://evil.example"}),
    ):
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            ws_client.connect(url, additional_headers=headers, open_timeout=10)
        assert 403 == refused.value.response.status_code


@settings(
    max_examples=60,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=10,
    ),
    path=st.sampled_from(
        ["/api/sessions/nope/prompt", "/api/sessions/nope/permissions/p", "/api/sessions/x"]
    ),
)
def test_arbitrary_json_gets_a_json_answer_never_a_500(server: str, body: Any, path: str) -> None:
    """Whatever JSON arrives, the answer is a JSON 4xx, and the server keeps serving."""
    with client(server) as http:
        answer = http.post(path, content=json.dumps(body).encode(), headers=_json)
        assert 400 <= answer.status_code < 500, answer.text
        assert isinstance(answer.json()["error"], str)
