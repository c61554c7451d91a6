"""Named agents under users (``--users`` with ``--agents``): a session started from an agent
over ``/ws`` belongs to whoever started it, like any other; every user sees the same list of
agents, and another user's session of an agent answers as an unknown one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.server import ServerSettings, create_app, parse_agents
from claudecode.testing import fake_cli_command, script
from tests.support.servers import running

from ._users import Team

pytestmark = pytest.mark.server


def test_a_session_of_an_agent_is_its_starters(tmp_path: Path) -> None:
    team = Team.write(tmp_path / "users.toml")
    work = tmp_path / "work"
    (tmp_path / "alpha").mkdir()
    work.mkdir()
    agents = parse_agents(
        '[agents.alpha]\ndescription = "Alpha"\ncwd = "alpha"\nsystem_prompt = "ALPHA"\n',
        base_dir=tmp_path,
    )
    settings = ServerSettings(
        users_file=team.users_file,
        audit_log=tmp_path / "audit.jsonl",
        session_defaults=SessionConfig(
            cli_path=fake_cli_command(script(), tmp_path / "fake"),
            cwd=work,
            policy=PermissionPolicy("supervised"),
        ),
        agents=agents,
    )
    providers = ["adapter.server.routes:core_routes", "adapter.server.ws.endpoint:ws_routes"]
    with running(create_app(settings=settings, providers=providers)) as url:
        alice, bob = team.ws(url, "alice"), team.ws(url, "bob")
        try:
            for client in (alice, bob):
                hello = client.request({"type": "hello", "version": 1})
                assert [{"name": "alpha", "description": "Alpha"}] == hello["agents"]
            ack = alice.request({"type": "create_session", "named_agent": "alpha"})
            assert "ack" == ack["type"], ack
            sid = ack["session_id"]
            assert ("alice", str(tmp_path / "alpha"), "alpha") == (
                ack["session"]["user"],
                ack["session"]["cwd"],
                ack["session"]["named_agent"],
            )
            assert [] == bob.request({"type": "list_sessions"})["sessions"]
            # The REST API shows the agent to its starter, and the session to nobody else.
            with team.http(url, "alice") as http:
                assert ["alpha"] == [s["named_agent"] for s in http.get("/api/sessions").json()]
                assert "alpha" == http.get(f"/api/sessions/{sid}").json()["named_agent"]
            with team.http(url, "bob") as http:
                assert [] == http.get("/api/sessions").json()
                assert 404 == http.get(f"/api/sessions/{sid}").status_code
            for frame in (
                {"type": "subscribe", "session_id": sid},
                {"type": "prompt", "session_id": sid, "text": "hi"},
                {"type": "close_session", "session_id": sid},
            ):
                reply = bob.request(frame)
                assert ("error", "unknown_session") == (reply["type"], reply["code"]), reply
            assert [sid] == [s["id"] for s in alice.request({"type": "list_sessions"})["sessions"]]
            # REST starts a session from an agent as /ws does: the body's fields over the
            # agent's; an agent the server does not offer is a 404 naming those it does.
            with team.http(url, "bob") as http:
                made = http.post("/api/sessions", json={"named_agent": "alpha"})
                assert 201 == made.status_code, made.text
                moved = http.post("/api/sessions", json={"named_agent": "alpha", "cwd": str(work)})
                assert 201 == moved.status_code, moved.text
                unknown = http.post("/api/sessions", json={"named_agent": "omega"})
                assert 404 == unknown.status_code
                assert "omega" in unknown.json()["error"] and "alpha" in unknown.json()["error"]
                rest = [made.json(), moved.json()]
                assert [
                    ("bob", str(tmp_path / "alpha"), "alpha", "rest"),
                    ("bob", str(work), "alpha", "rest"),
                ] == [(s["user"], s["cwd"], s["named_agent"], s["origin"]) for s in rest]
            assert [sid] == [s["id"] for s in alice.request({"type": "list_sessions"})["sessions"]]
        finally:
            alice.close()
            bob.close()
    created = [
        json.loads(line)
        for line in (tmp_path / "audit.jsonl").read_text().splitlines()
        if '"session_create"' in line
    ]
    assert [
        ("alice", sid, "alpha"),
        ("bob", rest[0]["id"], "alpha"),
        ("bob", rest[1]["id"], "alpha"),
    ] == [(e["user"], e["session"], e["named_agent"]) for e in created]
