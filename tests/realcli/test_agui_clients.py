"""The bridge's AG-UI endpoint and CopilotKit runtime driven by the real npm clients —
@ag-ui/client 1.0.0 and 0.0.59 (CopilotKit's pin) and headless @copilotkit/core — with the
real Claude Code CLI behind it talking to the fake Messages API.

Every run the clients receive is also checked against verifyEvents' rules, and the clients
must report no error and no warning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapter.server import ServerSettings, create_app
from adapter.server.agui import APPROVAL_TOOL
from tests.support.agui_clients import checked_runs, drive, text_of
from tests.support.configs import real_cli_config
from tests.support.servers import running

from ._assertions import api_tool_results, result_text
from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import Rule, error_turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.node, pytest.mark.server, pytest.mark.slow]


def bridge(cli_command: str, cli_env: CLIEnv, state: Path) -> Any:
    defaults = real_cli_config(cli_command, cli_env, client={"close_grace": 10.0})
    settings = ServerSettings(session_defaults=defaults, state_dir=state, keepalive_seconds=5)
    return create_app(settings=settings)


def payloads(step: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        e["value"]
        for e in step["events"]
        if e["type"] == "CUSTOM" and e["name"] == "claudecode.tool_payload"
    ]


def test_the_real_clients_against_the_real_cli(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """Text; a Bash approval allowed (0.0.59) and one denied (1.0.0); a file edit; connect
    after a run replays it; CopilotKit's core approves from its human-in-the-loop tool;
    stop mid-run; an API error; two threads at once."""
    work = cli_env.cwd
    (work / "notes.txt").write_text("alpha\nbeta\n")
    fake_api.add_main(
        text_turn("Hello from the bridge.", chunk=4),
        tool_turn("Bash", {"command": "touch allowed.txt", "description": "Make a file"}),
        text_turn("Made allowed.txt."),
        tool_turn("Bash", {"command": "touch denied.txt", "description": "Make another"}),
        text_turn("Understood, I did not run it."),
        tool_turn(
            "Edit",
            {"file_path": str(work / "notes.txt"), "old_string": "beta", "new_string": "gamma"},
        ),
        text_turn("Edited notes.txt."),
        tool_turn("Bash", {"command": "touch from-copilotkit.txt", "description": "Make"}),
        text_turn("CopilotKit approved it."),
    )
    # Answered by prompt text, whatever the order the requests arrive in.
    fake_api.add_rule(Rule("talk a lot", text_turn("word " * 200, chunk=5, delay=0.02), times=1))
    fake_api.add_rule(Rule("fail please", error_turn(400, "the fake API refuses this")))
    fake_api.add_rule(Rule("parallel-", text_turn("parallel answer")))
    steps = [
        {"op": "run", "client": "1.0.0", "path": "/agui", "threadId": "text", "text": "hi"},
        {
            "op": "run",
            "client": "0.0.59",
            "path": "/agui",
            "threadId": "allow",
            "text": "make it",
            "approve": '{"behavior": "allow"}',
        },
        {
            "op": "run",
            "client": "1.0.0",
            "path": "/agui",
            "threadId": "deny",
            "text": "make another",
            "approve": "deny",
        },
        {
            "op": "run",
            "client": "1.0.0",
            "path": "/copilotkit/agent/default/run",
            "threadId": "edit",
            "text": "edit it",
            "approve": "allow",
        },
        {"op": "connect", "client": "1.0.0", "path": "/agui/connect", "threadId": "text"},
        {
            "op": "copilotkit",
            "transport": "auto",
            "path": "/copilotkit",
            "threadId": "ck",
            "text": "make a file",
            "approve": "allow",
        },
        {
            "op": "run",
            "client": "1.0.0",
            "path": "/agui",
            "threadId": "stop",
            "text": "talk a lot",
            "stopAfterText": True,
        },
        {
            "op": "run",
            "client": "0.0.59",
            "path": "/agui",
            "threadId": "error",
            "text": "fail please",
        },
        {
            "op": "parallel",
            "steps": [
                {
                    "op": "run",
                    "client": "1.0.0",
                    "path": "/agui",
                    "threadId": "p1",
                    "text": "parallel-1",
                },
                {
                    "op": "run",
                    "client": "0.0.59",
                    "path": "/agui",
                    "threadId": "p2",
                    "text": "parallel-2",
                },
            ],
        },
    ]
    with running(bridge(cli_command, cli_env, tmp_path / "state")) as base:
        result = drive(base, steps, tmp_path / "drive")
    assert [] == result["warnings"]
    text, allow, deny, edit, connect, copilotkit, stop, error, both = result["steps"]

    checked_runs(text)
    assert "Hello from the bridge." == text_of(text)

    allow_runs = checked_runs(allow)
    assert 2 == len(allow_runs) and 1 == allow["approvals"]
    assert any(e.get("toolCallName") == APPROVAL_TOOL for e in allow_runs[0])
    assert (work / "allowed.txt").exists()
    assert "Made allowed.txt." in text_of(allow)
    assert "complete" == payloads(allow)[-1]["status"]

    checked_runs(deny)
    assert not (work / "denied.txt").exists()
    assert "error" == payloads(deny)[-1]["status"]
    assert "did not run it" in text_of(deny)

    checked_runs(edit)
    assert "alpha\ngamma\n" == (work / "notes.txt").read_text()
    (modify,) = [p for p in payloads(edit) if p["status"] == "complete"]
    assert "modify_file" == modify["normalized"]["kind"]
    assert "+gamma" in modify["normalized"]["mutations"][0]["diff"]

    checked_runs(connect)
    roles = [(m["role"], m.get("content")) for m in connect["messages"]]
    assert ("user", "hi") == roles[0] and ("assistant", "Hello from the bridge.") in roles

    assert [] == copilotkit["errors"] and [] == copilotkit["coreErrors"]
    assert "rest" == copilotkit["transport"]  # /info answered: CopilotKit switched to REST
    assert "Bash" == copilotkit["approvalArgs"]["toolName"]
    assert (work / "from-copilotkit.txt").exists()
    assert "CopilotKit approved it." in text_of(copilotkit)

    (stopped,) = checked_runs(stop)
    assert "RUN_FINISHED" == stopped[-1]["type"]
    assert [True] == [s["stopped"] for s in stop["stops"]]
    assert 0 < len(text_of(stop)) < len("word " * 200)

    (failed,) = checked_runs(error, errors_ok=True)
    assert "RUN_ERROR" == failed[-1]["type"] and failed[-1].get("code")
    assert 1 == len(error["runErrors"])

    for inner in both["parallel"]:
        checked_runs(inner)
        assert "parallel answer" == text_of(inner)


def test_a_thread_resumes_after_a_server_restart(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """The thread's CLI session id is saved: after a restart, a run on the same thread
    resumes the CLI session (the model sees the earlier exchange) and connect replays it."""
    fake_api.add_main(text_turn("The secret word is PAPAYA."), text_turn("You said PAPAYA."))
    state = tmp_path / "state"
    first = [
        {
            "op": "run",
            "client": "1.0.0",
            "path": "/agui",
            "threadId": "keep",
            "text": "remember papaya",
        }
    ]
    with running(bridge(cli_command, cli_env, state)) as base:
        checked_runs(drive(base, first, tmp_path / "one")["steps"][0])
    again = [
        {"op": "connect", "client": "0.0.59", "path": "/agui/connect", "threadId": "keep"},
        {
            "op": "run",
            "client": "0.0.59",
            "path": "/agui",
            "threadId": "keep",
            "text": "what was it?",
        },
    ]
    with running(bridge(cli_command, cli_env, state)) as base:
        result = drive(base, again, tmp_path / "two")
    assert [] == result["warnings"]
    connect, run = result["steps"]
    assert ["remember papaya", "The secret word is PAPAYA."] == [
        m.get("content") for m in connect["messages"]
    ]
    checked_runs(run)
    assert "You said PAPAYA." == text_of(run)
    last = fake_api.requests()[-1].body
    said = json.dumps(last["messages"])
    assert "remember papaya" in said and "what was it?" in said


def test_frontend_actions_run_in_the_page_and_claude_uses_their_result(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """The page's tools (CopilotKit actions, AG-UI ``tools``) are offered to Claude as an
    in-process MCP server; when Claude calls one, the run ends with the call, the page runs
    it, the next run carries the result, and the same turn goes on with it — through
    @ag-ui/client 1.0.0 and through CopilotKit's core, which runs the action itself."""
    fake_api.add_rule(Rule("secret via http", tool_turn("mcp__frontend__getSecret", {}), times=1))
    fake_api.add_rule(
        Rule("secret via copilotkit", tool_turn("mcp__frontend__getSecret", {}), times=1)
    )
    fake_api.add_main(text_turn("The page says it."), text_turn("The page says it."))
    steps = [
        {
            "op": "run",
            "client": "1.0.0",
            "path": "/agui",
            "threadId": "fe-http",
            "text": "secret via http",
            "toolResults": {"getSecret": "PINEAPPLE-42"},
        },
        {
            "op": "copilotkit",
            "transport": "single",
            "path": "/copilotkit",
            "threadId": "fe-ck",
            "text": "secret via copilotkit",
            "toolResults": {"getSecret": "MANGO-7"},
        },
    ]
    with running(bridge(cli_command, cli_env, tmp_path / "state")) as base:
        result = drive(base, steps, tmp_path / "drive")
    assert [] == result["warnings"]
    http, copilotkit = result["steps"]

    runs = checked_runs(http)
    assert 2 == len(runs)
    (call,) = [e for e in runs[0] if e["type"] == "TOOL_CALL_START"]
    assert "getSecret" == call["toolCallName"]
    assert "The page says it." == text_of(http)
    assert [] == copilotkit["errors"] and [] == copilotkit["coreErrors"]
    assert "single" == copilotkit["transport"]
    assert [{"name": "getSecret", "args": {}}] == copilotkit["toolCalls"]
    assert "The page says it." in text_of(copilotkit)
    # Claude got the page's real results as the tool results.
    bodies = json.dumps([r.body for r in fake_api.requests() if r.kind == "main"])
    assert "PINEAPPLE-42" in bodies and "MANGO-7" in bodies


def test_questions_reach_the_real_cli_from_the_page_and_as_interrupts(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """The agent's question answered by CopilotKit's core (its question tool), and by a 1.0
    client through an interrupt and resume: the model reads each answer in its tool result."""
    question = "Which greeting style should I use?"
    ask = {
        "questions": [
            {
                "question": question,
                "header": "Style",
                "options": [
                    {"label": "Formal", "description": "Good day."},
                    {"label": "Casual", "description": "Hey!"},
                ],
                "multiSelect": False,
            }
        ]
    }
    fake_api.add_main(
        tool_turn("AskUserQuestion", ask),
        text_turn("Formal it is."),
        tool_turn("AskUserQuestion", ask),
        text_turn("Casual it is."),
    )
    steps = [
        {
            "op": "copilotkit",
            "transport": "auto",
            "path": "/copilotkit",
            "threadId": "q1",
            "text": "greet me",
            "answer": {"answers": {question: ["Formal"]}},
        },
        {
            "op": "run",
            "client": "1.0.0",
            "path": "/agui",
            "threadId": "q2",
            "text": "greet me again",
            "answer": {"answers": {question: ["Casual"]}},
            "interrupts": True,
        },
    ]
    with running(bridge(cli_command, cli_env, tmp_path / "state")) as base:
        result = drive(base, steps, tmp_path / "drive")
    kit, interrupted = result["steps"]
    assert [] == kit["errors"], kit
    checked_runs(interrupted)
    assert "Formal it is." in text_of(kit) and "Casual it is." in text_of(interrupted)
    [first, second] = [
        r for request in fake_api.main_requests() for r in api_tool_results(request.body)
    ]
    assert f'"{question}"="Formal"' in result_text(first), first
    assert f'"{question}"="Casual"' in result_text(second), second
