"""The agent's questions over AG-UI and CopilotKit, driven by the real npm clients against
the built-in demo: the question comes as a call of the ``claudecode_question`` frontend tool,
the page's answer (the tool's result) reaches the stand-in CLI, whose next sentence names it.

Every run is checked against verifyEvents' rules; the clients must report no error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapter import PermissionPolicy, SessionConfig
from adapter.commands.demo import DEMO_QUESTION, demo_cli
from adapter.policies import PolicyName
from adapter.server import ServerSettings, create_app
from adapter.server.agui import QUESTION_TOOL
from tests.support.agui_clients import checked_runs, drive, text_of
from tests.support.servers import running

pytestmark = [pytest.mark.node, pytest.mark.server, pytest.mark.slow]


def _bridge(tmp_path: Path, policy: PolicyName = "supervised") -> Any:
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    defaults = SessionConfig(
        cli_path=str(demo_cli(tmp_path / "cli")),
        cwd=work,
        policy=PermissionPolicy(policy),
    )
    settings = ServerSettings(session_defaults=defaults, state_dir=tmp_path / "state")
    return create_app(settings=settings)


def _question_calls(step: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        e
        for e in step["events"]
        if e["type"] == "TOOL_CALL_START" and e["toolCallName"] == QUESTION_TOOL
    ]


@pytest.mark.parametrize("client", ["1.0.0", "0.0.59"])
def test_an_agui_client_answers_the_demo_question(tmp_path: Path, client: str) -> None:
    with running(_bridge(tmp_path)) as base:
        result = drive(
            base,
            [
                {
                    "op": "run",
                    "client": client,
                    "path": "/agui",
                    "threadId": "t1",
                    "text": "show me around",
                    "approve": "allow",
                    "answer": {"answers": {DEMO_QUESTION: ["Casual"]}},
                }
            ],
            tmp_path / "drive",
        )
    [step] = result["steps"]
    runs = checked_runs(step)
    assert 1 == len(_question_calls(step))
    [args] = step["questionArgs"]
    assert ["Formal", "Casual"] == [o["label"] for o in args["questions"][0]["options"]]
    assert args["pendingId"] and args["sessionId"]
    # The run that asked ended waiting for the page's answer; the next carried it.
    asked = next(
        i for i, run in enumerate(runs) if any(e.get("toolCallName") == QUESTION_TOOL for e in run)
    )
    assert {"awaiting": [f"question-{args['pendingId']}"]} == runs[asked][-1]["result"]
    assert "You chose Casual" in text_of(step)
    assert [] == result["warnings"]


def test_copilotkit_answers_with_its_human_in_the_loop_tool(tmp_path: Path) -> None:
    with running(_bridge(tmp_path)) as base:
        result = drive(
            base,
            [
                {
                    "op": "copilotkit",
                    "transport": "auto",
                    "path": "/copilotkit",
                    "threadId": "t2",
                    "text": "show me around",
                    "approve": "allow",
                    "answer": {"answers": {DEMO_QUESTION: ["Formal"]}},
                }
            ],
            tmp_path / "drive",
        )
    [step] = result["steps"]
    assert [] == step["errors"], step
    [args] = step["questionArgs"]
    assert DEMO_QUESTION == args["questions"][0]["question"]
    assert "You chose Formal" in text_of(step)


def test_a_declined_question_and_the_autonomous_policy(tmp_path: Path) -> None:
    """The page may decline; under the autonomous policy the page is never asked."""
    with running(_bridge(tmp_path)) as base:
        declined = drive(
            base,
            [
                {
                    "op": "run",
                    "client": "1.0.0",
                    "path": "/agui",
                    "threadId": "t3",
                    "text": "show me around",
                    "approve": "allow",
                    "answer": {"decline": True, "message": "surprise me"},
                }
            ],
            tmp_path / "declined",
        )["steps"][0]
    checked_runs(declined)
    assert "No greeting style was chosen" in text_of(declined)
    with running(_bridge(tmp_path / "auto", "autonomous")) as base:
        auto = drive(
            base,
            [{"op": "run", "client": "1.0.0", "path": "/agui", "threadId": "t4", "text": "go"}],
            tmp_path / "auto-drive",
        )["steps"][0]
    checked_runs(auto)
    assert [] == _question_calls(auto)
    resolved = [
        e["value"]
        for e in auto["events"]
        if e["type"] == "CUSTOM" and e["name"] == "claudecode.permission_resolved"
    ]
    assert [("declined", "policy")] == [(r["decision"], r["by"]) for r in resolved]
    assert "No greeting style was chosen" in text_of(auto)


def test_an_agui_1_0_client_takes_interrupts_and_resumes(tmp_path: Path) -> None:
    """A 1.0 client that asks for interrupts (forwardedProps.claudecode.interrupts) gets
    each approval and the question as RUN_FINISHED outcome interrupt, no tool call, and
    answers through `resume`; the turn goes on to the end, naming the answer."""
    with running(_bridge(tmp_path)) as base:
        result = drive(
            base,
            [
                {
                    "op": "run",
                    "client": "1.0.0",
                    "path": "/agui",
                    "threadId": "t5",
                    "text": "show me around",
                    "approve": "allow",
                    "answer": {"answers": {DEMO_QUESTION: ["Casual"]}},
                    "interrupts": True,
                }
            ],
            tmp_path / "drive",
        )
    [step] = result["steps"]
    runs = checked_runs(step)
    assert [] == _question_calls(step)
    assert not [e for e in step["events"] if e.get("toolCallName") == "claudecode_approval"]
    reasons = [i["reason"] for i in step["interrupts"]]
    assert "claudecode.question" in reasons and "claudecode.approval" in reasons
    [question] = [i for i in step["interrupts"] if i["reason"] == "claudecode.question"]
    assert DEMO_QUESTION == question["message"]
    assert question["id"].startswith("question-") and question["toolCallId"]
    assert ["Formal", "Casual"] == [
        o["label"] for o in question["metadata"]["claudecode"]["questions"][0]["options"]
    ]
    ends = [run[-1] for run in runs]
    assert all(e["outcome"]["type"] == "interrupt" for e in ends[:-1]), ends
    assert "outcome" not in ends[-1]
    assert "You chose Casual" in text_of(step)
    assert [] == result["warnings"]
