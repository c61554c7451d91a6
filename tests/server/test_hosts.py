"""DNS rebinding and the Host / Origin allow-list, over real HTTP, WebSocket and Chromium.

A page on a name the attacker re-points at 127.0.0.1 sends ``Host: <that name>:PORT`` and a
matching ``Origin``: every route family must refuse it before any route runs, while the
names a local user types (localhost, 127.0.0.1) keep working, in a real browser too.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client as ws_client
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from adapter.server.security import AllowedHosts
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.servers import running

pytestmark = pytest.mark.server

REBIND = "rebind.attacker.example"
ALLOWED = "bridge.internal.example"


def _settings(tmp_path: Path, **overrides: Any) -> ServerSettings:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn("hello")), tmp_path / "fake"),
        cwd=work,
        policy=PermissionPolicy("supervised"),
    )
    return ServerSettings(session_defaults=defaults, **overrides)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """The default server (loopback, no token) with one extra allowed host."""
    app = create_app(settings=_settings(tmp_path, allowed_hosts=(ALLOWED,)))
    with running(app) as url:
        yield url


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def as_host(url: str, name: str) -> tuple[dict[str, str], str]:
    """Headers and origin of a page served from ``name`` on the server's port."""
    origin = f"http://{name}:{port_of(url)}"
    return {"Host": f"{name}:{port_of(url)}", "Origin": origin}, origin


AGUI_INPUT = {
    "threadId": "t-rebind",
    "runId": "r1",
    "state": None,
    "messages": [{"id": "m1", "role": "user", "content": "hi"}],
    "tools": [],
    "context": [],
    "forwardedProps": None,
}

HTTP_PROBES: list[tuple[str, str, Any]] = [
    ("GET", "/", None),
    ("GET", "/readyz", None),
    ("GET", "/api/sessions", None),
    ("POST", "/api/sessions", {}),
    ("GET", "/api/terminals", None),
    ("POST", "/api/terminals", {"agent": "shell"}),
    ("POST", "/agui", AGUI_INPUT),
    ("POST", "/agui/connect", AGUI_INPUT),
    ("POST", "/copilotkit", {"method": "info"}),
    ("POST", "/copilotkit/agent/default/run", AGUI_INPUT),
]


def ws_connect(url: str, path: str, name: str, origin: str | None) -> Any:
    """A WebSocket handshake naming ``name`` as its host, over a socket to the server."""
    sock = socket.create_connection(("127.0.0.1", port_of(url)), timeout=10)
    headers = {"Origin": origin} if origin else {}
    return ws_client.connect(
        f"ws://{name}:{port_of(url)}{path}", sock=sock, additional_headers=headers, open_timeout=10
    )


def until_reply(ws: Any, marker: str) -> str:
    """The first frame containing ``marker`` (the server greets with a session list)."""
    for _ in range(20):
        frame = str(ws.recv(timeout=30))
        if marker in frame:
            return frame
    raise AssertionError(f"no frame with {marker}")


def test_a_rebinding_page_is_refused_on_every_route_family(server: str) -> None:
    """Host: rebind.attacker.example with its own Origin: 421 JSON before any route runs, a
    refused handshake (403) on WebSockets; no session, no terminal is started."""
    headers, origin = as_host(server, REBIND)
    with httpx.Client(base_url=server, timeout=30) as http:
        for method, path, body in HTTP_PROBES:
            answer = http.request(method, path, json=body, headers=headers)
            assert 421 == answer.status_code, (method, path, answer.text)
            assert {"error": "host not allowed"} == answer.json()
            # The Host alone is enough: a rebinding page's fetch may omit Origin (GET).
            bare = http.request(method, path, json=body, headers={"Host": headers["Host"]})
            assert 421 == bare.status_code, (method, path)
        # Nothing ran: no session, no terminal.
        assert [] == http.get("/api/sessions").json()
        assert [] == http.get("/api/terminals").json()["terminals"]
    for path in ("/ws", "/ws/pty/term-0000000000000000"):
        for sent_origin in (origin, None):
            with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
                ws_connect(server, path, REBIND, sent_origin)
            assert 403 == refused.value.response.status_code, path


@pytest.mark.pty
def test_local_names_and_allowed_hosts_work(server: str) -> None:
    """localhost, 127.0.0.1 and an --allowed-host name reach every route family, with their
    own Origin; an allowed host can even start a terminal."""
    with httpx.Client(base_url=server, timeout=30) as http:
        for name in ("localhost", "127.0.0.1", ALLOWED):
            headers, origin = as_host(server, name)
            assert 200 == http.get("/api/sessions", headers=headers).status_code, name
            assert 200 == http.get("/", headers=headers).status_code, name
            with ws_connect(server, "/ws", name, origin) as ws:
                ws.send('{"type": "ping", "request_id": "a"}')
                assert "pong" in until_reply(ws, '"type":"pong"')
        headers, _ = as_host(server, ALLOWED)
        started = http.post("/api/terminals", json={"agent": "shell"}, headers=headers)
        if sys.platform.startswith("linux"):
            assert 201 == started.status_code, started.text
            assert 200 == http.delete(f"/api/terminals/{started.json()['id']}").status_code
        # The wrong port on a local name is another origin (another local app).
        other = {"Host": f"localhost:{port_of(server)}", "Origin": "http://localhost:1"}
        assert 403 == http.get("/api/sessions", headers=other).status_code
        wrong_port = {"Host": "localhost:1"}
        assert 421 == http.get("/api/sessions", headers=wrong_port).status_code


def test_origin_is_never_measured_against_the_request_host(server: str) -> None:
    """A local Host with a foreign Origin is refused (403), even when the foreign name is
    the one in Host: the allow-list decides, not the request."""
    port = port_of(server)
    with httpx.Client(base_url=server, timeout=30) as http:
        for origin in (f"http://{REBIND}:{port}", "null", "http://evil.example", "file://"):
            answer = http.get("/api/sessions", headers={"Origin": origin})
            assert 403 == answer.status_code, origin
            assert {"error": "origin not allowed"} == answer.json()
        assert (
            200 == http.get("/api/sessions", headers={"Origin": f"http://[::1]:{port}"}).status_code
        )


def test_no_terminals_serves_none(tmp_path: Path) -> None:
    """ServerSettings(terminals=False): no terminal routes, and /ws refuses a terminal session."""
    app = create_app(settings=_settings(tmp_path, terminals=False))
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert 404 == http.get("/api/terminals").status_code
        assert 404 == http.post("/api/terminals", json={"agent": "shell"}).status_code
        with ws_client.connect(url.replace("http://", "ws://") + "/ws", open_timeout=10) as ws:
            ws.send('{"type":"create_session","request_id":"t","kind":"terminal","agent":"shell"}')
            assert "not served" in until_reply(ws, '"type":"error"')


def test_allowed_hosts_are_checked_when_the_app_is_made() -> None:
    with pytest.raises(ValueError, match="host"):
        create_app(settings=ServerSettings(allowed_hosts=("bad host:port:x",)))
    with pytest.raises(ValueError, match="not a host"):
        create_app(settings=ServerSettings(allowed_hosts=("example.com:http",)))


_SCOPE = {"type": "http", "scheme": "http", "server": ("127.0.0.1", 8000)}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_host_parser_never_raises_and_only_admits_the_list(host: str) -> None:
    """Any Host header value: a bool, and True only for the listed names on the port."""
    hosts = AllowedHosts((ALLOWED, "exact.example:9000"))
    admitted = hosts.allows_host(host, _SCOPE)
    assert isinstance(hosts.allows_origin(host, _SCOPE), bool)
    if admitted:
        name = host.strip().lower()
        assert (
            name
            in {
                "localhost:8000",
                "127.0.0.1:8000",
                "[::1]:8000",
                "exact.example:9000",
            }
            or name.split(":")[0] == ALLOWED
        ), host


def test_the_address_a_connection_arrived_on_is_allowed_with_its_port() -> None:
    """Bound to 0.0.0.0, a client on the network names the machine's address: allowed on
    the server's port, as are IPv6 addresses in brackets; a name never is unless listed."""
    hosts = AllowedHosts(())
    lan = {"type": "http", "scheme": "http", "server": ("192.168.1.5", 8000)}
    assert hosts.allows_host("192.168.1.5:8000", lan)
    assert not hosts.allows_host("192.168.1.5:8001", lan)
    assert not hosts.allows_host("box.lan:8000", lan)
    assert hosts.allows_origin("http://192.168.1.5:8000", lan)
    v6 = {"type": "http", "scheme": "http", "server": ("fe80::1", 8000)}
    assert hosts.allows_host("[FE80::1]:8000", v6)
    assert hosts.allows_host("[::1]:8000", v6)
    https = {"type": "http", "scheme": "https", "server": ("127.0.0.1", 443)}
    assert hosts.allows_host("localhost", https)  # the default port of the scheme
    assert AllowedHosts(("*",)).allows_host("anything.example:1", lan)


def test_with_the_host_check_off_origin_is_same_origin() -> None:
    """``--allowed-host '*'`` (a proxy in front checks Host): a page may call its own host,
    and only that."""
    hosts = AllowedHosts(("*",))
    scope = {"type": "http", "scheme": "http", "server": ("127.0.0.1", 8000)}
    assert hosts.allows_origin("https://bridge.example", scope, "bridge.example:443")
    assert hosts.allows_origin("https://bridge.example", scope, "bridge.example")
    assert not hosts.allows_origin("https://evil.example", scope, "bridge.example")
    assert not hosts.allows_origin("https://bridge.example", scope, None)
