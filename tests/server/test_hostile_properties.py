"""Arbitrary JSON (deep, wide, odd Unicode, NULs) at every JSON route and every ``/ws`` frame
type of one real server: never a 5xx, never a WebSocket closed without a close code, and the
server keeps answering."""

from __future__ import annotations

import json
import sys
import typing
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import websockets.sync.client as ws_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from adapter.server.ws.protocol import ClientFrame
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.servers import running
from tests.support.timeouts import HANG_GUARD

pytestmark = pytest.mark.server

FRAME_TYPES = sorted(str(t.__struct_config__.tag) for t in typing.get_args(ClientFrame))
ROUTES = (
    "/agui",
    "/agui/connect",
    "/agui/stop/t",
    "/copilotkit",
    "/copilotkit/agent/default/run",
    "/copilotkit/agent/default/connect",
    "/copilotkit/agent/default/stop/t",
    "/api/sessions",
    "/api/sessions/{sid}/prompt",
    "/api/sessions/{sid}/interrupt",
    "/api/sessions/{sid}/permissions/p",
    "/api/terminals",
)
#: Field names the routes and frames read, so that arbitrary values reach their checks.
FIELDS = (
    "threadId",
    "runId",
    "messages",
    "state",
    "tools",
    "context",
    "forwardedProps",
    "method",
    "params",
    "body",
    "cwd",
    "model",
    "policy",
    "permission_mode",
    "resume",
    "mcp_servers",
    "labels",
    "text",
    "behavior",
    "updated_input",
    "agent",
    "cols",
    "rows",
    "session_id",
    "request_id",
    "since_seq",
    "images",
    "decision",
    "pending_id",
    "mode",
    "version",
    "limit",
    "kind",
)

odd_text = st.text(
    alphabet=st.characters(codec="utf-8", include_characters="\x00\u2028\ufeff\U0001f600"),
    max_size=30,
)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | odd_text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(odd_text, inner, max_size=6),
    max_leaves=30,
)


@st.composite
def nested(draw: st.DrawFn) -> str:
    """A value nested anywhere from a few to thousands of levels, as JSON text."""
    levels = draw(st.sampled_from([3, 120, 130, 999, 1001, 5000]))
    opener = draw(st.sampled_from(["[", '{"k":']))
    closer = "]" if opener == "[" else "}"
    return opener * levels + "0" + closer * levels


@st.composite
def bodies(draw: st.DrawFn, type_tag: str | None = None) -> bytes:
    """A JSON object of the routes' field names with arbitrary values, arbitrary JSON, or a
    deeply nested value in one of the fields."""
    shape = draw(st.sampled_from(["fields", "any", "deep"]))
    if shape == "any":
        return json.dumps(draw(json_values)).encode()
    fields = draw(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6))
    if type_tag is not None:
        fields["type"] = type_tag
    text = json.dumps(fields)
    if shape == "deep":
        deep_field = f'"{draw(st.sampled_from(FIELDS))}": {draw(nested())}'
        if draw(st.booleans()):  # first: a decoder looking for the type skips over it
            text = "{" + deep_field + ("," if fields else "") + text[1:]
        else:
            text = text[:-1] + ("," if fields else "") + deep_field + "}"
    return text.encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("hostile")
    (tmp / "work").mkdir()
    defaults = SessionConfig(
        cli_path=fake_cli_command(script(text_turn("hello")), tmp / "fake"),
        cwd=tmp / "work",
        policy=PermissionPolicy("supervised"),
    )
    app = create_app(
        settings=ServerSettings(session_defaults=defaults, max_sessions=4, state_dir=tmp / "state")
    )
    with running(app) as url:
        yield url


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(route=st.sampled_from(ROUTES), body=bodies())
def test_json_routes_never_answer_5xx(server: str, route: str, body: bytes) -> None:
    with httpx.Client(base_url=server, timeout=HANG_GUARD) as http:
        sessions = http.get("/api/sessions").json()
        sid = sessions[0]["id"] if sessions else "nope"
        answer = http.post(
            route.format(sid=sid), content=body, headers={"Content-Type": "application/json"}
        )
        assert answer.status_code < 500, (route, body[:300], answer.text[:300])
        if answer.headers.get("content-type", "").startswith("application/json"):
            answer.json()  # a JSON answer, error or not
        assert 200 == http.get("/healthz").status_code


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_ws_frames_never_drop_the_connection(server: str, data: st.DataObject) -> None:
    tag = data.draw(st.sampled_from([*FRAME_TYPES, None]), label="type")
    frame = data.draw(bodies(tag), label="frame")
    binary = data.draw(st.booleans(), label="binary")
    url = server.replace("http://", "ws://") + "/ws"
    with ws_client.connect(url, open_timeout=HANG_GUARD, max_size=None) as ws:
        ws.send(frame if binary else frame.decode())
        # Whatever the frame did, the connection answers the next request.
        ws.send('{"type": "ping", "request_id": "probe"}')
        for _ in range(200):
            reply: dict[str, Any] = json.loads(ws.recv(timeout=HANG_GUARD))
            if reply.get("type") == "error":
                assert reply["code"] != "internal", (frame[:300], reply)
            if reply.get("type") == "pong" and reply.get("request_id") == "probe":
                break
        else:
            raise AssertionError("no pong")
        # Sessions the frame may have made are closed, so the next examples have room.
        ws.send('{"type": "list_sessions", "request_id": "ls"}')
        while (listed := json.loads(ws.recv(timeout=HANG_GUARD))).get("request_id") != "ls":
            pass
        for session in listed["sessions"]:
            ws.send(json.dumps({"type": "close_session", "session_id": session["id"]}))


@pytest.fixture(scope="module")
def watched_terminal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A shell whose keyboard another viewer holds (``terminal_input="first"``): the viewer
    under test is read-only, so nothing it sends is ever typed into the shell."""
    if not sys.platform.startswith("linux"):
        pytest.skip("terminals need Linux")
    tmp = tmp_path_factory.mktemp("pty")
    app = create_app(
        settings=ServerSettings(terminal_input="first", state_dir=tmp / "state"),
        providers=["adapter.server.terminal_routes:terminal_routes"],
    )
    with running(app) as url, httpx.Client(base_url=url, timeout=HANG_GUARD) as http:
        tid = http.post("/api/terminals", json={"agent": "shell", "cwd": str(tmp)}).json()["id"]
        pty_url = url.replace("http://", "ws://") + f"/ws/pty/{tid}"
        with ws_client.connect(pty_url, open_timeout=HANG_GUARD) as keyboard:
            yield pty_url, keyboard
        http.delete(f"/api/terminals/{tid}")


def until_json(ws: Any, kind: str) -> dict[str, Any]:
    for _ in range(500):
        frame = ws.recv(timeout=HANG_GUARD)
        if isinstance(frame, str) and (parsed := json.loads(frame)).get("type") == kind:
            return dict(parsed)
    raise AssertionError(f"no {kind} frame")


@pytest.mark.pty
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    tag=st.sampled_from(["resize", "signal", "input", "status", "nope", None]),
    body=st.data(),
)
def test_pty_control_frames_never_drop_the_viewer(
    watched_terminal: tuple[str, Any], tag: str | None, body: st.DataObject
) -> None:
    pty_url, _ = watched_terminal
    frame = body.draw(bodies(tag), label="frame")
    with ws_client.connect(pty_url, open_timeout=HANG_GUARD, max_size=None) as ws:
        assert until_json(ws, "status")["can_type"] is False
        ws.send(frame.decode())
        ws.send('{"type": "status"}')  # answered whatever the frame before was
        until_json(ws, "status")
