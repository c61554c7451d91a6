"""Named agents over ``/ws`` (``serve --agents``): real WebSocket clients against a real
server on 127.0.0.1, sessions on the fake CLI, which records how each CLI was started.

``hello`` lists the agents (names and descriptions, nothing the CLI is handed);
``create_session`` with ``named_agent`` starts a CLI with that agent's settings, the frame's
own fields replacing the agent's where a client may set them; an unknown name is an
``unknown_agent`` error, a malformed one ``invalid_frame``, and no CLI starts for either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.server import parse_agents
from adapter.server.agents import AGENT_NAME_PATTERN
from adapter.server.ws import CreateSession, Error, decode_client_frame
from claudecode.testing import script, text_turn

from ._client import Client, connect, serve

pytestmark = pytest.mark.server

#: What the agents file gives the CLI and a client must never see.
SECRETS = ("You are ALPHA.", "Bearer s3cret-token", "Also be BETA.")


def agents_in(tmp_path: Path) -> Any:
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir(exist_ok=True)
    return parse_agents(
        """
        [agents.alpha]
        description = "Alpha <b>reviews</b> & reports"
        cwd = "alpha"
        model = "model-alpha"
        system_prompt = "You are ALPHA."
        allowed_tools = ["Read"]
        effort = "low"
        [agents.alpha.mcp_servers.docs]
        type = "http"
        url = "http://127.0.0.1:9/mcp"
        headers = { Authorization = "Bearer s3cret-token" }

        [agents.beta]
        cwd = "beta"
        policy = "plan"
        append_system_prompt = "Also be BETA."
        disallowed_tools = ["Bash"]
        """,
        base_dir=tmp_path,
    )


def launches(record: Path) -> list[dict[str, Any]]:
    """Every CLI start the fake CLI recorded: its argv and cwd."""
    if not record.exists():
        return []
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    return [line for line in lines if "argv" in line]


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def started(c: Client, frame: dict[str, Any]) -> dict[str, Any]:
    """The session a create_session started, once its CLI has run a turn (so it was
    launched and recorded)."""
    ack = c.request({"type": "create_session", **frame})
    assert "ack" == ack["type"], ack
    sid = ack["session_id"]
    c.request({"type": "subscribe", "session_id": sid})
    assert "ack" == c.request({"type": "prompt", "session_id": sid, "text": "go"})["type"]
    c.until(
        lambda f: (
            f["type"] == "event" and f["session_id"] == sid and f["event"]["type"] == "complete"
        )
    )
    session: dict[str, Any] = ack["session"]
    return session


def test_hello_lists_the_agents_and_nothing_they_hand_the_cli(tmp_path: Path) -> None:
    """The ack to hello names each agent with its description, in the file's order; no
    system prompt, MCP server or credential is in it (nor in anything else said)."""
    with serve(tmp_path, script(), agents=agents_in(tmp_path)) as url:
        c = connect(url)
        try:
            c.send({"type": "hello", "version": 1, "request_id": "h"})
            raw = c.conn.recv(timeout=30)
            assert isinstance(raw, str)
            for secret in (*SECRETS, "mcp", "model-alpha", str(tmp_path)):
                assert secret not in raw
            ack = json.loads(raw)
            assert [
                {"name": "alpha", "description": "Alpha <b>reviews</b> & reports"},
                {"name": "beta", "description": "Claude Code, through claudecode-bridge"},
            ] == ack["agents"]
        finally:
            c.close()


def test_a_session_starts_with_its_agents_settings(tmp_path: Path) -> None:
    """Each agent's session runs a CLI in the agent's directory with its model, prompts,
    rules, effort, policy and MCP servers; a session without a name keeps the server's own."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("one"), record_path=str(record))
    with serve(tmp_path, body, agents=agents_in(tmp_path)) as url:
        c = connect(url)
        try:
            a = started(c, {"named_agent": "alpha"})
            b = started(c, {"named_agent": "beta"})
            plain = started(c, {})
        finally:
            c.close()
    assert (str(tmp_path / "alpha"), "model-alpha") == (a["cwd"], a["model"])
    assert str(tmp_path / "beta") == b["cwd"]
    assert str(tmp_path / "work") == plain["cwd"]
    alpha, beta, server = launches(record)
    assert str(tmp_path / "alpha") == alpha["cwd"]
    a_argv, b_argv, s_argv = alpha["argv"], beta["argv"], server["argv"]
    assert "model-alpha" == flag(a_argv, "--model")
    assert "You are ALPHA." == flag(a_argv, "--system-prompt")
    assert "Read" == flag(a_argv, "--allowedTools")
    assert "low" == flag(a_argv, "--effort")
    mcp = alpha["arg_files"][flag(a_argv, "--mcp-config")]
    servers = json.loads(mcp)["mcpServers"] if isinstance(mcp, str) else mcp["mcpServers"]
    assert "http://127.0.0.1:9/mcp" == servers["docs"]["url"]
    assert "Also be BETA." == flag(b_argv, "--append-system-prompt")
    assert "Bash" == flag(b_argv, "--disallowedTools")
    assert "plan" == flag(b_argv, "--permission-mode")
    for name in ("--model", "--system-prompt", "--append-system-prompt", "--effort"):
        assert flag(s_argv, name) is None, name
    assert "--mcp-config" not in s_argv or "docs" not in json.dumps(server["arg_files"])


def test_a_session_says_which_agent_it_started_from(tmp_path: Path) -> None:
    """The agent's name is in the session's info wherever a client reads it: the create's
    ack, the list, a watcher's changes, the snapshot; a session without an agent has none."""
    with serve(tmp_path, script(text_turn("one")), agents=agents_in(tmp_path)) as url:
        watcher, c = connect(url), connect(url)
        try:
            assert [] == watcher.request({"type": "list_sessions"})["sessions"]
            a = c.request({"type": "create_session", "named_agent": "alpha", "origin": "webui"})
            plain = c.request({"type": "create_session"})
            assert "alpha" == a["session"]["named_agent"]
            assert "named_agent" not in plain["session"]  # null: the schema's default
            listed = c.request({"type": "list_sessions"})["sessions"]
            names = {s["id"]: s.get("named_agent") for s in listed}
            assert {a["session_id"]: "alpha", plain["session_id"]: None} == names
            changed = watcher.until(
                lambda f: f["type"] == "session_changed" and f["session"]["id"] == a["session_id"]
            )
            assert "alpha" == changed[-1]["session"]["named_agent"]
            c.send({"type": "subscribe", "session_id": a["session_id"]})
            snapshot = c.until(lambda f: f["type"] == "snapshot")[-1]
            assert "alpha" == snapshot["session"]["named_agent"]
        finally:
            watcher.close()
            c.close()


def test_the_frames_fields_replace_the_agents_and_the_rest_stays(tmp_path: Path) -> None:
    """cwd, model, effort and policy of the frame win over the agent's (a client may set them
    on any session); the agent's system prompt, rules and MCP servers stay."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("one"), record_path=str(record))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with serve(tmp_path, body, agents=agents_in(tmp_path)) as url:
        c = connect(url)
        try:
            frame = {
                "named_agent": "alpha",
                "cwd": str(elsewhere),
                "model": "model-mine",
                "effort": "max",
                "policy": "plan",
            }
            session = started(c, frame)
        finally:
            c.close()
    assert (str(elsewhere), "model-mine") == (session["cwd"], session["model"])
    (launch,) = launches(record)
    argv = launch["argv"]
    assert str(elsewhere) == launch["cwd"]
    assert ("model-mine", "max", "plan") == (
        flag(argv, "--model"),
        flag(argv, "--effort"),
        flag(argv, "--permission-mode"),
    )
    assert ("You are ALPHA.", "Read") == (
        flag(argv, "--system-prompt"),
        flag(argv, "--allowedTools"),
    )


def test_names_the_server_does_not_offer_start_nothing(tmp_path: Path) -> None:
    """An unknown name is unknown_agent (naming the ones offered), ``default`` too when the
    file has none of that name; a malformed one invalid_frame; a terminal with a name
    bad_request. No CLI starts, no session is listed, and the connection goes on."""
    record = tmp_path / "argv.jsonl"
    body = script(text_turn("one"), record_path=str(record))
    with serve(tmp_path, body, agents=agents_in(tmp_path)) as url:
        c = connect(url)
        try:
            for name in ("gamma", "default", "Alpha"):
                reply = c.request({"type": "create_session", "named_agent": name})
                assert ("error", "unknown_agent") == (reply["type"], reply["code"]), reply
                assert repr(name) in reply["message"] and "alpha, beta" in reply["message"]
            malformed: list[Any] = ["", "../alpha", "alpha\n", "a" * 65, "al pha", 7, ["alpha"]]
            for bad in malformed:
                reply = c.request({"type": "create_session", "named_agent": bad})
                assert ("error", "invalid_frame") == (reply["type"], reply["code"]), reply
                assert "named_agent" in reply["message"]
            reply = c.request(
                {
                    "type": "create_session",
                    "kind": "terminal",
                    "agent": "shell",
                    "named_agent": "alpha",
                }
            )
            assert ("error", "bad_request") == (reply["type"], reply["code"]), reply
            assert "named agent" in reply["message"]
            assert [] == c.request({"type": "list_sessions"})["sessions"]
            assert "pong" == c.request({"type": "ping"})["type"]
        finally:
            c.close()
    assert [] == launches(record)


def test_without_an_agents_file_default_is_the_servers_settings(tmp_path: Path) -> None:
    """A server without a file offers ``default``: naming it starts what naming none does."""
    with serve(tmp_path, script(text_turn("one"))) as url:
        c = connect(url)
        try:
            ack = c.request({"type": "create_session", "named_agent": "default"})
            assert "ack" == ack["type"], ack
            assert str(tmp_path / "work") == ack["session"]["cwd"]
            # No agents file, no named agent: the session does not claim one.
            assert "named_agent" not in ack["session"]
            reply = c.request({"type": "create_session", "named_agent": "alpha"})
            assert ("error", "unknown_agent") == (reply["type"], reply["code"])
        finally:
            c.close()


# ------------------------------------------------------------------ properties

_NAME = re.compile(AGENT_NAME_PATTERN)
_names = st.one_of(
    st.sampled_from(["alpha", "beta", "default", "gamma"]),
    st.from_regex(_NAME, fullmatch=True),
    st.text(max_size=80),
    st.text(alphabet="ab-_\n\x00/. ", max_size=70),
)


@given(_names)
def test_a_name_decodes_exactly_when_it_is_one(name: str) -> None:
    """decode_client_frame takes a named_agent that is an agent name (the agents file's
    rule) and answers anything else with invalid_frame naming the field; never raises."""
    frame = decode_client_frame(json.dumps({"type": "create_session", "named_agent": name}))
    if _NAME.fullmatch(name):
        assert isinstance(frame, CreateSession) and name == frame.named_agent
    else:
        assert isinstance(frame, Error) and "invalid_frame" == frame.code
        assert "named_agent" in frame.message


@pytest.fixture(scope="module")
def agents_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp_path = tmp_path_factory.mktemp("ws-agents")
    record = tmp_path / "argv.jsonl"
    with serve(tmp_path, script(record_path=str(record)), agents=agents_in(tmp_path)) as url:
        yield url, record


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=_names)
def test_any_name_gets_one_typed_answer(agents_server: tuple[str, Path], name: str) -> None:
    """Over the wire: an offered name starts a session of that agent (its cwd), a well-formed
    other one is unknown_agent, anything else invalid_frame; never an internal error."""
    url, _ = agents_server
    c = connect(url)
    try:
        reply = c.request({"type": "create_session", "named_agent": name})
        if name in ("alpha", "beta"):
            assert "ack" == reply["type"], reply
            assert reply["session"]["cwd"].endswith("/" + name)
            closed = c.request({"type": "close_session", "session_id": reply["session_id"]})
            assert "ack" == closed["type"], closed
        elif _NAME.fullmatch(name):
            assert ("error", "unknown_agent") == (reply["type"], reply["code"]), reply
        else:
            assert ("error", "invalid_frame") == (reply["type"], reply["code"]), reply
    finally:
        c.close()
