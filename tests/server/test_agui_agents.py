"""Named agents (``--agents``) over real HTTP, against the fake CLI subprocess: each agent's
runs start its session with its own settings, threads keep their agent (across a restart
too), unknown ids stay 404, and a server without a file offers the one default agent."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.server import parse_agents
from adapter.server.agui.threads import ThreadRecord, ThreadStore
from claudecode.testing import script, text_turn
from tests.support.servers import running

from ._agui import app_for, client, text_of, valid
from ._sse import post_stream, run_input, user

pytestmark = pytest.mark.server


def agents_in(tmp_path: Path) -> Any:
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir(exist_ok=True)
    return parse_agents(
        """
        [agents.alpha]
        description = "Alpha reviews"
        cwd = "alpha"
        model = "model-alpha"
        system_prompt = "You are ALPHA."
        allowed_tools = ["Read", "Bash(git diff:*)"]
        effort = "low"

        [agents.beta]
        cwd = "beta"
        policy = "plan"
        append_system_prompt = "Also be BETA."
        disallowed_tools = ["Bash"]
        add_dirs = ["alpha"]
        [agents.beta.mcp_servers.docs]
        type = "http"
        url = "http://127.0.0.1:9/mcp"
        """,
        base_dir=tmp_path,
    )


def launches(record: Path) -> list[dict[str, Any]]:
    """Every CLI start the fake CLI recorded: its argv and cwd."""
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    return [line for line in lines if "argv" in line]


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_each_agent_starts_its_sessions_with_its_own_settings(tmp_path: Path) -> None:
    """info lists both agents with their descriptions; a run of each, by REST, by the single
    endpoint and by plain /agui (the default: the file's first), starts a CLI with that
    agent's cwd, model, prompts, rules and MCP servers."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("one"), record_path=str(record))
    agents = agents_in(tmp_path)
    with running(app_for(tmp_path, body, agents=agents)) as url, client(url) as http:
        info = http.get("/copilotkit/info").json()
        assert {"alpha": "Alpha reviews", "beta": "Claude Code, through claudecode-bridge"} == {
            k: v["description"] for k, v in info["agents"].items()
        }
        assert ["alpha", "beta"] == [v["name"] for v in info["agents"].values()]
        assert info == http.post("/copilotkit", json={"method": "info"}).json()
        a_body = run_input("t-a", [user("hi alpha")])
        _, a_events = post_stream(http, "/copilotkit/agent/alpha/run", a_body)
        b_body = run_input("t-b", [user("hi beta")])
        envelope = {"method": "agent/run", "params": {"agentId": "beta"}, "body": b_body}
        _, b_events = post_stream(http, "/copilotkit", envelope)
        d_body = run_input("t-d", [user("hi default")])
        _, d_events = post_stream(http, "/agui", d_body)
        for events, sent in ((a_events, a_body), (b_events, b_body), (d_events, d_body)):
            valid(events, sent)
            assert "one" == text_of(events)
        assert str(tmp_path / "alpha") == a_events[1]["snapshot"]["cwd"]
        assert str(tmp_path / "beta") == b_events[1]["snapshot"]["cwd"]
        # Each thread's session says which agent it is (plain /agui: the file's first).
        sessions = {s["id"]: s for s in http.get("/api/sessions").json()}
        named = {
            events[1]["snapshot"]["sessionId"]: sessions[events[1]["snapshot"]["sessionId"]]
            for events in (a_events, b_events, d_events)
        }
        assert [("ag-ui", "alpha"), ("ag-ui", "beta"), ("ag-ui", "alpha")] == [
            (s["origin"], s["named_agent"]) for s in named.values()
        ]
    alpha, beta, default = launches(record)
    assert str(tmp_path / "alpha") == alpha["cwd"] == default["cwd"]
    assert str(tmp_path / "beta") == beta["cwd"]
    a, b = alpha["argv"], beta["argv"]
    assert "model-alpha" == flag(a, "--model") and flag(b, "--model") is None
    assert (
        "You are ALPHA." == flag(a, "--system-prompt") and flag(a, "--append-system-prompt") is None
    )
    assert (
        "Also be BETA." == flag(b, "--append-system-prompt") and flag(b, "--system-prompt") is None
    )
    assert "Read,Bash(git diff:*)" == flag(a, "--allowedTools")
    assert "Bash" == flag(b, "--disallowedTools") and flag(b, "--allowedTools") is None
    assert "low" == flag(a, "--effort") and flag(b, "--effort") is None
    assert "plan" == flag(b, "--permission-mode") and flag(a, "--permission-mode") is None
    assert str(tmp_path / "alpha") == flag(b, "--add-dir")
    mcp = beta["arg_files"][flag(b, "--mcp-config")]
    servers = json.loads(mcp)["mcpServers"] if isinstance(mcp, str) else mcp["mcpServers"]
    assert {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {}} == servers["docs"]


def test_unknown_agents_are_404_and_threads_keep_their_agent(tmp_path: Path) -> None:
    """An id the file does not name is 404 on every route (``default`` too, when the file
    has no agent of that name); a thread of alpha refuses a run of beta (409, saying why)
    and a connect of beta sees nothing; after a restart the thread is still alpha's."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("one"), record_path=str(record))
    agents = agents_in(tmp_path)
    with running(app_for(tmp_path, body, agents=agents)) as url, client(url) as http:
        ok = run_input("t-keep", [user("first", "u1")])
        for path in (
            "/copilotkit/agent/nope/run",
            "/copilotkit/agent/default/run",
            "/copilotkit/agent/nope/connect",
            "/copilotkit/agent/nope/suggest",
        ):
            response = http.post(path, json=ok)
            assert (404, {"error": "Agent not found"}) == (response.status_code, response.json())
        for method in ("agent/run", "agent/connect", "agent/stop"):
            params = {"agentId": "nope", "threadId": "t-keep"}
            response = http.post(
                "/copilotkit", json={"method": method, "params": params, "body": ok}
            )
            assert 404 == response.status_code
        _, events = post_stream(http, "/copilotkit/agent/alpha/run", ok)
        valid(events, ok)
        again = run_input("t-keep", [user("first", "u1"), user("second", "u2")])
        refused = http.post("/copilotkit/agent/beta/run", json=again)
        assert 409 == refused.status_code
        assert "talks to agent 'alpha', not 'beta'" in refused.json()["error"]
        _, seen = post_stream(http, "/copilotkit/agent/beta/connect", run_input("t-keep", []))
        assert [] == seen
        _, seen = post_stream(http, "/copilotkit/agent/alpha/connect", run_input("t-keep", []))
        assert "MESSAGES_SNAPSHOT" in [e["type"] for e in seen]
    with sqlite3.connect(tmp_path / "state" / "agui-threads.sqlite3") as db:
        assert [("t-keep", "alpha")] == db.execute(
            "SELECT thread_id, agent FROM threads"
        ).fetchall()
    with running(app_for(tmp_path, body, agents=agents)) as url, client(url) as http:
        assert 409 == http.post("/copilotkit/agent/beta/run", json=again).status_code
        _, events = post_stream(http, "/agui", again)  # the default agent: alpha
        valid(events, again)
    first, resumed = launches(record)
    assert str(tmp_path / "alpha") == first["cwd"] == resumed["cwd"]
    assert "You are ALPHA." == flag(resumed["argv"], "--system-prompt")
    assert any(arg.startswith("--resume=") for arg in resumed["argv"])


def test_without_a_file_the_one_default_agent_is_unchanged(tmp_path: Path) -> None:
    body = script(text_turn("one"))
    with running(app_for(tmp_path, body)) as url, client(url) as http:
        info = http.get("/copilotkit/info").json()
        assert ["default"] == list(info["agents"])
        sent = run_input("t", [user("hi")])
        _, events = post_stream(http, "/copilotkit/agent/default/run", sent)
        valid(events, sent)
        # The implicit default agent is no named agent: its session names none.
        (session,) = http.get("/api/sessions").json()
        assert ("ag-ui", None) == (session["origin"], session.get("named_agent"))
        assert 404 == http.post("/copilotkit/agent/alpha/run", json=sent).status_code


def test_a_thread_store_from_before_agents_gains_the_column(tmp_path: Path) -> None:
    """A store file written before threads had agents opens, keeps its threads (agent
    None: the default agent's) and saves agents from then on."""
    path = tmp_path / "threads.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE threads (thread_id TEXT PRIMARY KEY, cli_session_id TEXT, "
            "messages TEXT NOT NULL DEFAULT '[]', updated_at REAL NOT NULL)"
        )
        db.execute("INSERT INTO threads VALUES ('old', 'cli-1', '[]', 1.0)")

    async def main() -> None:
        store = ThreadStore(path)
        try:
            old = await store.load("old")
            assert old is not None and ("cli-1", None) == (old.cli_session_id, old.agent)
            await store.save(ThreadRecord("new", agent="beta"))
            new = await store.load("new")
            assert new is not None and "beta" == new.agent
        finally:
            store.close()

    anyio.run(main)
