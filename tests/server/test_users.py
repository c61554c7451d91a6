"""Users and ownership on a real server: alice, bob and root (an admin) over REST, /ws,
AG-UI (the real @ag-ui/client) and /ws/pty; the users file, its reload, the audit log."""

from __future__ import annotations

import json
import os
import stat
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import websockets.exceptions
import websockets.sync.client as ws_client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter import PermissionPolicy, SessionConfig
from adapter.audit import AuditLog
from adapter.server import BUILTIN_PROVIDERS, ServerSettings, create_app
from adapter.server.identity import (
    UsersFileError,
    hash_token,
    new_token,
    parse_users,
    user_entry,
)
from adapter.server.terminal_routes import make_terminal_routes
from adapter.terminals import TerminalManager
from claudecode.testing import fake_cli_command, script, tool_turn
from tests.support.agui_clients import drive, text_of
from tests.support.servers import running

from ._users import WAIT, Team

pytestmark = pytest.mark.server


def _app(tmp_path: Path, team: Team, config: Path | None = None, **extra: Any) -> Any:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    defaults = SessionConfig(
        cli_path=fake_cli_command(
            script(tool_turn("Bash", {"command": "touch made.txt"}, permission=True)),
            tmp_path / "fake",
        ),
        cwd=work,
        policy=PermissionPolicy("supervised"),
        env={} if config is None else {"CLAUDE_CONFIG_DIR": str(config)},
    )
    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/sh"}
    terminals = make_terminal_routes(
        lambda: TerminalManager(env=env, stop_grace=2.0), default_cwd=str(work)
    )
    builtin = [p for p in BUILTIN_PROVIDERS if not p.startswith("adapter.server.terminal_routes")]
    settings = ServerSettings(
        users_file=team.users_file,
        audit_log=tmp_path / "audit.jsonl",
        state_dir=tmp_path / "state",
        session_defaults=defaults,
        max_sessions=8,
        **extra,
    )
    return create_app(settings=settings, providers=[*builtin, terminals])


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return Team.write(tmp_path / "users.toml")


@pytest.fixture
def server(tmp_path: Path, team: Team) -> Iterator[str]:
    with running(_app(tmp_path, team)) as url:
        yield url


def audit(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _unknown_like(answer: httpx.Response, session_id: str, probe: httpx.Response) -> None:
    """``answer`` (about someone else's ``session_id``) is what an unknown id gets."""
    assert 404 == answer.status_code == probe.status_code
    assert answer.json()["error"].replace(session_id, "X") == probe.json()["error"].replace(
        "nope", "X"
    )


# ------------------------------------------------------------------ the users file


def test_who_am_i_and_bad_tokens(server: str, team: Team) -> None:
    for name, admin, terminals in (("alice", False, False), ("bob", False, True)):
        with team.http(server, name) as http:
            assert {"name": name, "admin": admin, "terminals": terminals} == http.get(
                "/api/me"
            ).json()
    with team.http(server, "root") as http:
        assert http.get("/api/me").json()["admin"]
        # The hash is not the token.
        hashed = hash_token(team.tokens["root"])
        assert 401 == http.get("/api/me", headers={"Authorization": f"Bearer {hashed}"}).status_code
        assert 401 == http.get("/api/me", headers={"Authorization": "Basic x"}).status_code
    with httpx.Client(base_url=server) as anon:
        assert 401 == anon.get("/api/sessions").status_code
        assert 200 == anon.get("/healthz").status_code


def test_the_users_file_is_read_again_when_it_changes(server: str, team: Team) -> None:
    carol = new_token()
    with httpx.Client(base_url=server, headers={"Authorization": f"Bearer {carol}"}) as http:
        assert 401 == http.get("/api/me").status_code
        text = team.users_file.read_text() + "\n" + user_entry("carol", carol)
        team.users_file.write_text(text)
        deadline = time.monotonic() + WAIT
        while http.get("/api/me").status_code != 200:
            assert time.monotonic() < deadline, "the new user was never accepted"
            time.sleep(0.2)
        assert "carol" == http.get("/api/me").json()["name"]
        # A broken edit keeps the users loaded before.
        team.users_file.write_text(text + "\n[[users]]\nname = 3\n")
        time.sleep(1.2)
        assert 200 == http.get("/api/me").status_code
        # Removing carol takes her access away.
        team.users_file.write_text(text.split('[[users]]\nname = "carol"')[0])
        deadline = time.monotonic() + WAIT
        while http.get("/api/me").status_code != 401:
            assert time.monotonic() < deadline, "the removed user was still accepted"
            time.sleep(0.2)


_names = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1
).filter(lambda s: s.strip() and s.isprintable())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(_names, st.booleans(), st.booleans()), max_size=5, unique_by=lambda u: u[0])
)
def test_user_entries_read_back(users: list[tuple[str, bool, bool]]) -> None:
    """What ``users add`` prints parses back to the same users, whatever the name."""
    tokens = [new_token() for _ in users]
    text = "\n".join(
        user_entry(name, token, admin=admin, terminals=terms)
        for (name, admin, terms), token in zip(users, tokens, strict=True)
    )
    parsed, warnings = parse_users(text)
    assert [] == warnings
    assert [(u.principal.name, u.principal.admin, u.principal.terminals) for u in parsed] == users
    assert [u.digest.hex() for u in parsed] == [hash_token(t) for t in tokens]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_users_or_a_users_file_error(text: str) -> None:
    """Garbage gets :class:`UsersFileError` (a clear message), never anything else."""
    try:
        parse_users(text)
    except UsersFileError as exc:
        message = str(exc)
    else:
        return
    assert message.startswith("users file: ")


def test_users_file_rules() -> None:
    good = user_entry("alice", "t")
    assert [] == parse_users(good)[1]
    extra = good + 'color = "blue"\n'
    assert ["users file: user 'alice': unknown key 'color' ignored"] == parse_users(extra)[1]
    for bad, why in (
        (good.replace('role = "user"', 'role = "root"'), "'role'"),
        (good.replace("terminals = false", 'terminals = "yes"'), "'terminals'"),
        (good.replace(hash_token("t"), "abc"), "64 hex"),
        (good + "\n" + good, "listed twice"),
        (good + "\n" + user_entry("bob", "t"), "same token_sha256"),
        ("users = 3", "array of tables"),
        ("[[users]]\n", "'name'"),
    ):
        with pytest.raises(UsersFileError, match=why):
            parse_users(bad)


# ------------------------------------------------------------------ REST, /ws, /ws/pty


def test_rest_each_user_sees_and_steers_only_their_own(
    server: str, team: Team, tmp_path: Path
) -> None:
    with team.http(server, "alice") as alice, team.http(server, "bob") as bob:
        mine = alice.post("/api/sessions", json={"user": "bob"}).json()
        assert "alice" == mine["user"]  # the client's "user" is not believed
        sid = mine["id"]
        theirs = bob.post("/api/sessions", json={}).json()["id"]
        assert [sid] == [s["id"] for s in alice.get("/api/sessions").json()]
        assert [theirs] == [s["id"] for s in bob.get("/api/sessions").json()]
        probe = bob.get("/api/sessions/nope")
        _unknown_like(bob.get(f"/api/sessions/{sid}"), sid, probe)
        for method, path, body in (
            ("POST", f"/api/sessions/{sid}/prompt", {"text": "hi"}),
            ("POST", f"/api/sessions/{sid}/interrupt", None),
            ("POST", f"/api/sessions/{sid}/permissions/p1", {"behavior": "allow"}),
            ("DELETE", f"/api/sessions/{sid}", None),
        ):
            answer = bob.request(method, path, json=body)
            unknown = bob.request(method, path.replace(sid, "nope"), json=body)
            _unknown_like(answer, sid, unknown)
        # alice's session still runs, untouched.
        assert "closed" != alice.get(f"/api/sessions/{sid}").json()["state"]
    with team.http(server, "root") as root:
        assert {sid, theirs} <= {s["id"] for s in root.get("/api/sessions").json()}
        assert 200 == root.get(f"/api/sessions/{sid}").status_code
        assert 200 == root.delete(f"/api/sessions/{sid}").status_code
    records = audit(tmp_path)
    actions = [(r["action"], r["user"], r.get("session")) for r in records]
    assert ("session_create", "alice", sid) in actions
    assert ("session_create", "bob", theirs) in actions
    assert ("admin_action", "root", sid) in actions
    assert ("session_close", "root", sid) in actions
    deadline = time.monotonic() + WAIT
    while ("session_end", "alice", sid) not in actions:  # however it ended, for its owner
        assert time.monotonic() < deadline, actions
        time.sleep(0.05)
        actions = [(r["action"], r.get("user"), r.get("session")) for r in audit(tmp_path)]
    # Nobody's refused probe is anyone's action on alice's session.
    assert not any(r["user"] == "bob" and r.get("session") == sid for r in records)
    assert all(r["via"] == "rest" for r in records if r["action"] != "session_end")
    assert 0o600 == stat.S_IMODE((tmp_path / "audit.jsonl").stat().st_mode)


def test_ws_lists_events_and_permission_decisions_stay_with_their_owner(
    server: str, team: Team, tmp_path: Path
) -> None:
    alice = team.ws(server, "alice")
    bob = team.ws(server, "bob")
    try:
        assert "session_list" == bob.request({"type": "list_sessions"})["type"]
        ack = alice.request({"type": "create_session"})
        sid = ack["session_id"]
        alice.request({"type": "subscribe", "session_id": sid, "since_seq": 0})
        alice.request({"type": "prompt", "session_id": sid, "text": "alice secret"})
        asked = alice.until(
            lambda f: f["type"] == "event" and f["event"]["type"] == "permission_request"
        )[-1]["event"]
        for frame in (
            {"type": "subscribe", "session_id": sid},
            {"type": "prompt", "session_id": sid, "text": "x"},
            {"type": "interrupt", "session_id": sid},
            {"type": "close_session", "session_id": sid},
            {
                "type": "permission_response",
                "session_id": sid,
                "pending_id": asked["pending_id"],
                "decision": "allow",
            },
        ):
            refused = bob.request(frame)
            unknown = bob.request({**frame, "session_id": "nope"})
            assert "error" == refused["type"] == unknown["type"]
            assert refused["code"] == unknown["code"] == "unknown_session"
            assert refused["message"].replace(sid, "X") == unknown["message"].replace("nope", "X")
        answer = alice.request(
            {
                "type": "permission_response",
                "session_id": sid,
                "pending_id": asked["pending_id"],
                "decision": "allow",
            }
        )
        assert "ack" == answer["type"]
        alice.until(lambda f: f["type"] == "event" and f["event"]["type"] == "complete")
        own = bob.request({"type": "create_session"})["session_id"]
        listed = bob.request({"type": "list_sessions"})
        assert [own] == [s["id"] for s in listed["sessions"]]
        bob.drain()
        # Bob's own probes are echoed back to him in their errors; nothing else names it.
        told = [f for f in bob.seen if f["type"] != "error"]
        assert sid not in json.dumps(told)
        assert "alice secret" not in json.dumps(bob.seen)
        # Terminals: alice may not open one; bob's is not hers to see.
        refused = alice.request({"type": "create_session", "kind": "terminal", "agent": "shell"})
        assert ("error", "forbidden") == (refused["type"], refused["code"])
        term = bob.request({"type": "create_session", "kind": "terminal", "agent": "shell"})
        assert "ack" == term["type"], term
        assert term["session_id"] not in json.dumps(alice.request({"type": "list_sessions"}))
        gone = alice.request({"type": "close_session", "session_id": term["session_id"]})
        assert "unknown_session" == gone["code"]
        bob.request({"type": "close_session", "session_id": term["session_id"]})
    finally:
        alice.close()
        bob.close()
    decisions = [r for r in audit(tmp_path) if r["action"] == "permission_decision"]
    assert [("alice", sid, "Bash", "allow", "ws")] == [
        (r["user"], r["session"], r["tool"], r["decision"], r["via"]) for r in decisions
    ]
    starts = [r for r in audit(tmp_path) if r["action"].startswith("terminal_")]
    # The end is recorded as the program is reaped, before stop returns.
    assert ["terminal_refused", "terminal_start", "terminal_end", "terminal_stop"] == [
        r["action"] for r in starts
    ]
    assert "bob" == starts[2]["user"] and starts[2]["reason"]


def test_terminals_rest_and_pty(server: str, team: Team, tmp_path: Path) -> None:
    with team.http(server, "alice") as alice, team.http(server, "bob") as bob:
        assert 403 == alice.post("/api/terminals", json={"agent": "shell"}).status_code
        assert alice.get("/api/terminals").json()["allowed"] is False
        assert bob.get("/api/terminals").json()["allowed"] is True
        created = bob.post("/api/terminals", json={"agent": "shell"})
        assert 201 == created.status_code, created.text
        tid = created.json()["id"]
        assert [] == alice.get("/api/terminals").json()["terminals"]
        assert [tid] == [t["id"] for t in bob.get("/api/terminals").json()["terminals"]]
        probe = alice.delete("/api/terminals/nope")
        answer = alice.delete(f"/api/terminals/{tid}")
        assert 404 == answer.status_code == probe.status_code
        assert answer.json()["error"].replace(tid, "X") == probe.json()["error"].replace(
            "nope", "X"
        )
        base = server.replace("http://", "ws://")
        for target in (tid, "nope"):
            url = f"{base}/ws/pty/{target}?token={team.tokens['alice']}"
            with ws_client.connect(url, open_timeout=WAIT) as ws:
                assert "unknown" == json.loads(ws.recv(timeout=WAIT))["code"]
                with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
                    ws.recv(timeout=WAIT)
                assert closed.value.rcvd is not None and 4404 == closed.value.rcvd.code
        with ws_client.connect(
            f"{base}/ws/pty/{tid}?token={team.tokens['bob']}", open_timeout=WAIT
        ) as ws:
            assert "status" == json.loads(ws.recv(timeout=WAIT))["type"]
        with team.http(server, "root") as root:
            assert 200 == root.delete(f"/api/terminals/{tid}").status_code
    records = audit(tmp_path)
    assert ("admin_action", "root", "stop", "bob") in [
        (r["action"], r["user"], r.get("operation"), r.get("owner")) for r in records
    ]


# ------------------------------------------------------------------ AG-UI


def test_agui_threads_are_per_user(server: str, team: Team, tmp_path: Path) -> None:
    """Two users with the same thread id get two threads: neither sees the other's."""
    run = {"op": "run", "client": "1.0.0", "path": "/agui", "threadId": "t1"}
    first = drive(
        server,
        [{**run, "text": "alice secret", "approve": "allow"}],
        tmp_path / "alice",
        token=team.tokens["alice"],
    )
    assert "Done." in text_of(first["steps"][0])  # approved, and the turn ended
    second = drive(
        server,
        [
            {"op": "connect", "client": "1.0.0", "path": "/agui/connect", "threadId": "t1"},
            {**run, "text": "bob hello"},
        ],
        tmp_path / "bob",
        token=team.tokens["bob"],
    )
    assert "alice secret" not in json.dumps(second)
    assert [] == second["steps"][0]["events"]  # alice's t1 is no thread of bob's
    assert "bob hello" in json.dumps(second["steps"][1])
    again = drive(
        server,
        [{"op": "connect", "client": "1.0.0", "path": "/agui/connect", "threadId": "t1"}],
        tmp_path / "alice2",
        token=team.tokens["alice"],
    )
    assert "alice secret" in json.dumps(again)
    assert "bob hello" not in json.dumps(again)
    with team.http(server, "bob") as bob:
        sessions = bob.get("/api/sessions").json()
        assert sessions and all(s["user"] == "bob" for s in sessions)
    vias = {r["via"] for r in audit(tmp_path) if r["action"] == "session_create"}
    assert {"agui"} == vias
    # alice's approval, given as a role:"tool" message to the next run, is her decision.
    decisions = [r for r in audit(tmp_path) if r["action"] == "permission_decision"]
    assert [("alice", "Bash", "allow", "agui")] == [
        (r["user"], r["tool"], r["decision"], r["via"]) for r in decisions
    ]


# ------------------------------------------------------------------ stored sessions


def test_history_lists_and_resumes_only_what_the_user_started(tmp_path: Path, team: Team) -> None:
    """Stored conversations belong to who started them through the bridge (the state dir
    remembers): each user's history lists theirs, root's all, and resuming someone else's
    answers like an unknown id."""
    stored = Path(__file__).resolve().parents[1] / "fixtures" / "history" / "projects"
    source = next((stored / "-work-demo").glob("*.jsonl"))
    project = tmp_path / "claude-config" / "projects" / "-work-demo"
    project.mkdir(parents=True)
    ids = {"alice": str(uuid.uuid4()), "bob": str(uuid.uuid4()), "nobody": str(uuid.uuid4())}
    for sid in ids.values():
        (project / f"{sid}.jsonl").write_text(source.read_text())
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    lines = [json.dumps({"cli": ids[u], "user": u}) for u in ("alice", "bob")]
    # A torn line (a crash mid-write) is skipped; the first owner named wins.
    lines += ['{"cli": "x', json.dumps({"cli": ids["alice"], "user": "bob"})]
    (state / "history-owners.jsonl").write_text("\n".join(lines))
    with running(_app(tmp_path, team, config=tmp_path / "claude-config")) as url:
        listed = {}
        for name in ("alice", "bob", "root"):
            client = team.ws(url, name)
            try:
                answer = client.request({"type": "list_history"})
                listed[name] = {s["session_id"] for s in answer["sessions"]}
                if name == "bob":
                    refused = client.request({"type": "create_session", "resume": ids["alice"]})
                    assert ("error", "unknown_session") == (refused["type"], refused["code"])
                if name == "alice":
                    resumed = client.request({"type": "create_session", "resume": ids["alice"]})
                    assert "ack" == resumed["type"], resumed
            finally:
                client.close()
        assert {ids["alice"]} == listed["alice"]
        assert {ids["bob"]} == listed["bob"]
        assert set(ids.values()) == listed["root"]


def test_the_audit_log_appends_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"action": "earlier"}\n')
    path.chmod(0o644)
    log = AuditLog(path)
    log.write("session_close", user="alice", via="rest", session="s1", tool=None)
    log.close()
    log.write("after_close", user="alice")  # to the structured log only
    assert 0o600 == stat.S_IMODE(path.stat().st_mode)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert "earlier" == lines[0]["action"]
    assert {"action", "time", "user", "via", "session"} == set(lines[1])
    assert 2 == len(lines)


def test_the_audit_log_reopens_its_path(tmp_path: Path) -> None:
    """After a rotation the records go to a new file at the path; a path that cannot be
    opened keeps the old file; after close, reopening opens nothing."""
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    log.write("one")
    path.rename(tmp_path / "audit.jsonl.1")
    log.reopen()
    log.write("two")
    assert 0o600 == stat.S_IMODE(path.stat().st_mode)
    (tmp_path / "audit.jsonl.1").rename(tmp_path / "kept")
    path.rename(tmp_path / "gone")
    path.mkdir()  # not a file: cannot be opened
    log.reopen()
    log.write("three")  # still to the file opened before
    log.close()
    path.rmdir()
    log.reopen()  # closed: opens nothing
    log.write("four")  # to the structured log only
    assert not path.exists()

    def actions(name: str) -> list[str]:
        text = (tmp_path / name).read_text()
        return [json.loads(line)["action"] for line in text.splitlines()]

    assert ["one"] == actions("kept")
    assert ["two", "three"] == actions("gone")


_header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(scheme=st.sampled_from(["Bearer ", "bearer ", "Basic ", ""]), data=st.data())
def test_any_authorization_header_is_a_user_or_401(
    server: str, team: Team, scheme: str, data: st.DataObject
) -> None:
    """Whatever a client sends as its credentials, the answer is a user or 401, never a
    crash; over WebSocket, ?token= the same (a user's session list, or a refused handshake)."""
    value = data.draw(st.one_of(_header_text, st.sampled_from(sorted(team.tokens.values()))))
    header = (scheme + value).strip()  # HTTP trims a header's outer whitespace itself
    with httpx.Client(base_url=server, timeout=WAIT) as http:
        answer = http.get("/api/me", headers={"Authorization": header} if header else {})
    known = {t: n for n, t in team.tokens.items()}
    if scheme.lower() == "bearer " and value.strip() in known:
        assert known[value.strip()] == answer.json()["name"]
    else:
        assert 401 == answer.status_code
        assert "bearer token" in answer.json()["error"]
    url = server.replace("http://", "ws://") + "/ws?" + urlencode({"token": value})
    status = 101
    try:
        with ws_client.connect(url, open_timeout=WAIT) as ws:
            assert "session_list" == json.loads(ws.recv(timeout=WAIT))["type"]
    except websockets.exceptions.InvalidStatus as refused:
        status = refused.response.status_code
    assert status == (101 if value in known else 403)
