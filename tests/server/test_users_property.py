"""A property of the ownership layer, on a real server: whatever two users do, in any order,
over REST, /ws and AG-UI, nothing either of them is answered, sent or listed carries a session
of the other's (nor the text of its prompts)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app
from claudecode.testing import fake_cli_command, script
from tests.support.servers import running

from ._sse import post_stream, run_input, user
from ._users import Team

pytestmark = pytest.mark.server

USERS = ("alice", "bob")


@dataclass
class World:
    base: str
    team: Team
    #: Every session id each user was given, across examples.
    owned: dict[str, set[str]] = field(default_factory=lambda: {u: set() for u in USERS})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("owners")
    team = Team.write(tmp / "users.toml")
    work = tmp / "work"
    work.mkdir()
    settings_ = ServerSettings(
        users_file=team.users_file,
        state_dir=tmp / "state",
        session_defaults=SessionConfig(
            cli_path=fake_cli_command(script(), tmp / "fake"),  # echoes every prompt
            cwd=work,
            policy=PermissionPolicy("autonomous"),
        ),
        max_sessions=64,
    )
    providers = [
        "adapter.server.routes:core_routes",
        "adapter.server.agui.server:agui_routes",
        "adapter.server.ws.endpoint:ws_routes",
    ]
    os.environ.setdefault("HOME", str(tmp))
    with running(create_app(settings=settings_, providers=providers)) as base:
        yield World(base, team)


_step = st.tuples(
    st.sampled_from(USERS),
    st.sampled_from(
        [
            "rest_create",
            "rest_list",
            "rest_get",
            "rest_prompt",
            "rest_close",
            "ws_create",
            "ws_list",
            "ws_subscribe",
            "ws_prompt",
            "agui_run",
            "agui_connect",
        ]
    ),
    st.integers(0, 7),  # which known session (anyone's) or thread the step names
)


def _secret(name: str) -> str:
    return f"{name}-secret"


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(_step, min_size=1, max_size=10))
def test_no_user_ever_sees_the_other_users_sessions(
    world: World, steps: list[tuple[str, str, int]]
) -> None:
    team = world.team
    http = {u: team.http(world.base, u) for u in USERS}
    ws = {u: team.ws(world.base, u) for u in USERS}
    heard: dict[str, list[Any]] = {u: [] for u in USERS}
    try:
        for name, op, pick in steps:
            known = sorted(world.owned["alice"] | world.owned["bob"])
            target = known[pick % len(known)] if known else "none"
            mine = target in world.owned[name]
            text = f"{_secret(name)} {pick}"
            c, w = http[name], ws[name]
            if op == "rest_create":
                body = c.post("/api/sessions", json={}).json()
                world.owned[name].add(body["id"])
                heard[name].append(body)
            elif op == "rest_list":
                listed = c.get("/api/sessions").json()
                assert {s["id"] for s in listed} <= world.owned[name]
                heard[name].append(listed)
            elif op == "rest_get":
                answer = c.get(f"/api/sessions/{target}")
                assert answer.status_code == (200 if mine else 404)
                if mine:
                    heard[name].append(answer.json())
            elif op == "rest_prompt":
                answer = c.post(f"/api/sessions/{target}/prompt", json={"text": text})
                assert answer.status_code in ((202, 409) if mine else (404,))
            elif op == "rest_close":
                answer = c.delete(f"/api/sessions/{target}")
                assert answer.status_code == (200 if mine else 404)
            elif op == "ws_create":
                ack = w.request({"type": "create_session"})
                world.owned[name].add(ack["session_id"])
            elif op == "ws_list":
                listed = w.request({"type": "list_sessions"})["sessions"]
                assert {s["id"] for s in listed} <= world.owned[name]
            elif op in ("ws_subscribe", "ws_prompt"):
                frame: dict[str, Any] = {"type": "subscribe", "session_id": target}
                if op == "ws_prompt":
                    frame = {"type": "prompt", "session_id": target, "text": text}
                reply = w.request(frame)
                if not mine:
                    assert ("error", "unknown_session") == (reply["type"], reply["code"])
            elif op in ("agui_run", "agui_connect"):
                path = "/agui" if op == "agui_run" else "/agui/connect"
                messages = [user(text)] if op == "agui_run" else []
                _, events = post_stream(c, path, run_input(f"t{pick % 2}", messages))
                heard[name].append(events)
                for s in c.get("/api/sessions").json():
                    world.owned[name].add(s["id"])
        for name in USERS:
            ws[name].drain()
    finally:
        for name in USERS:
            ws[name].close()
            http[name].close()
    for name in USERS:
        other = next(u for u in USERS if u != name)
        # Errors echo the id a user's own request named: everything else is checked.
        told = json.dumps([heard[name], [f for f in ws[name].seen if f["type"] != "error"]])
        assert _secret(other) not in told
        assert not [sid for sid in world.owned[other] if sid in told]
