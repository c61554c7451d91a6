"""``claudecode-bridge acp --demo`` end to end with the official ACP client: the scripted
stand-in thinks, talks, asks to run a command, asks which greeting style to use (a form
elicitation for a client that advertises it, else a permission request whose options are the
answers) and names the answer, keeps a todo list, writes and edits a file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.acp_client import drive, text_of, updates_of

pytestmark = [pytest.mark.node, pytest.mark.slow]


@pytest.mark.parametrize("elicitation", [True, False], ids=["elicitation", "permission"])
def test_demo_end_to_end(tmp_path: Path, elicitation: bool) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    if elicitation:  # the form's answer, then the command, the write and the edit
        answers = {
            "elicitations": [{"action": "accept", "content": {"question_0": "Casual"}}],
            "permissions": ["allow_once", "allow_once", "reject_once"],
        }
    else:  # the question's options come as permission options: answer_1 is Casual
        answers = {"permissions": ["allow_once", "answer_1", "allow_once", "reject_once"]}
    report = drive(
        [sys.executable, "-m", "adapter", "acp", "--demo"],
        [
            {"op": "initialize", "elicitation": elicitation},
            {"op": "new", "name": "a", "cwd": str(work)},
            {"op": "prompt", "session": "a", "prompt": "show me around", **answers},
            {"op": "set_mode", "session": "a", "modeId": "plan"},
            {"op": "set_model", "session": "a", "value": "haiku"},
            {"op": "set_config", "session": "a", "configId": "effort", "value": "high"},
            {"op": "end"},
        ],
        tmp_path / "acp",
        env=env,
        cwd=work,
    )
    _, new, prompt, mode, model, effort = report["results"]
    assert {"stopReason": "end_turn"} == prompt, report["stderr"][-3000:]
    assert {} == mode
    assert "haiku" == model["configOptions"][0]["currentValue"]
    assert "model" == new["configOptions"][0]["category"]
    assert ("thought_level", "default") == (
        new["configOptions"][1]["category"],
        new["configOptions"][1]["currentValue"],
    )
    assert "high" == effort["configOptions"][1]["currentValue"], effort
    assert "f-string" in text_of(report, "a")
    assert "You chose Casual" in text_of(report, "a")
    if elicitation:
        [form] = report["elicitations"]["a"]
        assert "Which greeting style should I use?" == form["message"]
        field = form["requestedSchema"]["properties"]["question_0"]
        assert ["Formal", "Casual"] == [o["const"] for o in field["oneOf"]]
    else:
        asked = report["permissions"]["a"][1]
        assert ["Formal", "Casual", "Decline to answer"] == [o["name"] for o in asked["options"]]
    assert text_of(report, "a", "agent_thought_chunk")
    [plan] = updates_of(report, "a", "plan")
    assert 3 == len(plan["entries"])
    kinds = [c["kind"] for c in updates_of(report, "a", "tool_call")]
    assert ["execute", "other", "edit", "edit"] == kinds
    finals = [
        u["status"]
        for u in updates_of(report, "a", "tool_call_update")
        if u.get("status") in ("completed", "failed")
    ]
    assert ["completed", "completed", "completed", "failed"] == finals
    edit = updates_of(report, "a", "tool_call")[3]
    [diff] = [c for c in edit["content"] if c["type"] == "diff"]
    assert str(work / "greeting.py") == diff["path"]
    assert 'f"Hello, {name}!"' in diff["newText"]
    # Logs never reach stdout: every line the agent wrote was a valid ACP message (checked by
    # drive), and it exited cleanly when the client closed stdin.
    assert 0 == report["exit"]["code"]
