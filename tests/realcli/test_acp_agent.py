"""``claudecode-bridge acp`` driven by the official ACP client (@agentclientprotocol/sdk),
with the real CLI behind it talking to the fake Messages API.

Every message on the wire, both ways, is checked against the ACP JSON Schema.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.acp_client import drive, text_of, updates_of

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import Text, ToolUse, Turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.node, pytest.mark.slow]


BETA_TO_GAMMA = {"old_string": "beta", "new_string": "gamma"}
NO_SUCH_SESSION = "00000000-0000-4000-8000-000000000000"
INITIALIZE: dict[str, Any] = {"op": "initialize"}
END: dict[str, Any] = {"op": "end"}  # the client closes stdin


@dataclass
class Acp:
    """Runs ``claudecode-bridge acp`` on the real CLI, driven by the official client."""

    cli_command: str
    cli_env: CLIEnv
    tmp_path: Path

    @property
    def cwd(self) -> str:
        """The project directory the sessions run in."""
        return str(self.cli_env.cwd)

    def run(self, *steps: dict[str, Any]) -> dict[str, Any]:
        """One agent process through ``steps``; the client's report."""
        env = self.cli_env()
        env["PYTHONUNBUFFERED"] = "1"
        return drive(
            [sys.executable, "-m", "adapter", "acp", "--cli", self.cli_command],
            list(steps),
            self.tmp_path / f"acp-{len(list(self.tmp_path.glob('acp-*')))}",
            env=env,
            cwd=self.cli_env.cwd,
        )

    def in_session(self, *steps: dict[str, Any]) -> dict[str, Any]:
        """``initialize``, a new session ``a`` in the project, ``steps``, then the client
        closes stdin: the results start with those of initialize and session/new."""
        return self.run(INITIALIZE, self.new("a"), *steps, END)

    def new(self, name: str) -> dict[str, Any]:
        """session/new in the project, called ``name`` in the report."""
        return {"op": "new", "name": name, "cwd": self.cwd}


@pytest.fixture
def acp(cli_command: str, cli_env: CLIEnv, tmp_path: Path) -> Acp:
    return Acp(cli_command, cli_env, tmp_path)


def prompt(text: Any, session: str = "a", **extra: Any) -> dict[str, Any]:
    """A session/prompt step (``extra``: the client's answers, when to cancel)."""
    return {"op": "prompt", "session": session, "prompt": text, **extra}


def test_text_prompt_and_permissions(acp: Acp, cli_env: CLIEnv, fake_api: FakeAnthropicAPI) -> None:
    """initialize, session/new, a text turn; a Bash call allowed, one rejected; an Edit
    that arrives as a diff; the client closing stdin ends the agent cleanly."""
    notes = cli_env.cwd / "notes.txt"
    notes.write_text("alpha\nbeta\n")
    fake_api.add_main(
        text_turn("Hello from the bridge.", chunk=5),
        tool_turn("Bash", {"command": "touch allowed.txt", "description": "make a file"}),
        tool_turn("Bash", {"command": "touch rejected.txt", "description": "another file"}),
        Turn(blocks=[ToolUse("Edit", {"file_path": str(notes), **BETA_TO_GAMMA})]),
        Turn(blocks=[Text("All done.")]),
    )
    report = acp.in_session(
        prompt("say hello"),
        prompt(
            "make two files and edit notes",
            permissions=["allow_once", "reject_once", "allow_once"],
        ),
    )
    init, new, first, second = report["results"]
    assert 1 == init["protocolVersion"]
    assert init["agentCapabilities"]["loadSession"] is True
    assert "default" == new["modes"]["currentModeId"]
    assert {"end_turn"} == {first["stopReason"], second["stopReason"]}, report["results"]
    assert "Hello from the bridge." in text_of(report, "a")
    assert updates_of(report, "a", "available_commands_update")

    # Permissions: asked three times with the four ACP options; the answers took effect.
    asked = report["permissions"]["a"]
    assert 3 == len(asked)
    kinds = [o["kind"] for o in asked[0]["options"]]
    assert ["allow_once", "allow_always", "reject_once", "reject_always"] == kinds
    assert ["execute", "execute", "edit"] == [p["toolCall"]["kind"] for p in asked]
    assert (cli_env.cwd / "allowed.txt").exists()
    assert not (cli_env.cwd / "rejected.txt").exists()
    assert "alpha\ngamma\n" == notes.read_text()

    calls = updates_of(report, "a", "tool_call")
    finals = {
        u["toolCallId"]: u
        for u in updates_of(report, "a", "tool_call_update")
        if u.get("status") in ("completed", "failed")
    }
    by_kind = [(c["kind"], finals[c["toolCallId"]]["status"]) for c in calls]
    assert [("execute", "completed"), ("execute", "failed"), ("edit", "completed")] == by_kind
    edit = calls[2]
    assert {"path": str(notes), "line": 2} in finals[edit["toolCallId"]]["locations"] or {
        "path": str(notes)
    } in edit["locations"]
    diff = next(c for c in edit["content"] if c["type"] == "diff")
    assert (str(notes), "beta", "gamma") == (diff["path"], diff["oldText"], diff["newText"])
    assert 0 == report["exit"]["code"], report["stderr"][-2000:]


def test_cancel_mid_turn_and_a_pending_permission(
    acp: Acp, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """session/cancel while a permission request is open: the client answers it `cancelled`,
    the prompt ends `cancelled`, the command never runs; the next prompt works."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "touch never.txt", "description": "make a file"}),
        text_turn("Still here."),
    )
    report = acp.in_session(prompt("make a file", permissions=["cancel"]), prompt("are you there?"))
    _, _, cancelled, after = report["results"]
    assert "cancelled" == cancelled["stopReason"], report["results"]
    assert "end_turn" == after["stopReason"], report["results"]
    assert not (cli_env.cwd / "never.txt").exists()
    assert "Still here." in text_of(report, "a")
    assert 0 == report["exit"]["code"]


def test_cancel_while_streaming(acp: Acp, fake_api: FakeAnthropicAPI) -> None:
    """session/cancel while the answer streams: the prompt answers `cancelled`."""
    fake_api.add_main(
        Turn(blocks=[Text("This answer streams slowly. " * 20)], chunk=4, delay=0.05),
        text_turn("Short."),
    )
    report = acp.in_session(prompt("a long story", cancelOn="first_chunk"), prompt("short please"))
    _, _, cancelled, after = report["results"]
    assert "cancelled" == cancelled["stopReason"], report["results"]
    assert "end_turn" == after["stopReason"]
    assert text_of(report, "a").endswith("Short.")


def test_load_a_past_session_and_two_sessions_in_one_agent(
    acp: Acp, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """A session from one agent process is loaded in a second one: its history is replayed as
    session/update notifications (user, agent text, the tool call) and it goes on with its
    context; two sessions run side by side in that second process."""
    fake_api.add_main(
        tool_turn("Bash", {"command": "echo remembered", "description": "say it"}),
        text_turn("The word is remembered."),
    )
    cwd = acp.cwd
    first = acp.in_session(prompt("remember a word", permissions=["allow_once"]))
    assert "end_turn" == first["results"][2]["stopReason"], first["results"]
    session_id = first["sessions"]["a"]
    history = list((cli_env.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    assert history, "the ACP session id is the CLI's session id"

    before = len(fake_api.main_requests())
    fake_api.add_main(text_turn("Yes: remembered."), text_turn("A new session."))
    second = acp.run(
        INITIALIZE,
        {"op": "list", "cwd": cwd},
        {"op": "load", "name": "old", "sessionId": session_id, "cwd": cwd},
        acp.new("b"),
        {
            "op": "parallel",
            "steps": [prompt("what was the word?", session="old"), prompt("hello", session="b")],
        },
        END,
    )
    _, listed, loaded, _, both = second["results"]
    [stored] = [s for s in listed["sessions"] if s["sessionId"] == session_id]
    assert (cwd, "remember a word") == (stored["cwd"], stored["title"])
    assert stored["updatedAt"].endswith("Z")
    assert "error" not in loaded, loaded
    assert [{"stopReason": "end_turn"}] * 2 == both, second["results"]
    replayed = second["updates"]["old"]
    kinds = [u["sessionUpdate"] for u in replayed]
    user = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert ["remember a word"] == user[:1]
    assert "tool_call" in kinds
    assert "The word is remembered." in text_of(second, "old")
    # The loaded session kept its context: its CLI sent the earlier turns to the API.
    later = fake_api.main_requests()[before:]
    assert 2 == len(later)
    assert any("remember a word" in json.dumps(r.body.get("messages")) for r in later)
    # Which session got which scripted answer depends on who asked first.
    live = {text_of(second, "old").removeprefix("The word is remembered."), text_of(second, "b")}
    assert {"Yes: remembered.", "A new session."} == live
    assert 0 == second["exit"]["code"]


def test_unknown_session_and_bad_params_get_errors(acp: Acp, fake_api: FakeAnthropicAPI) -> None:
    """A bad mode: -32602, a good one is applied by the CLI (current_mode_update); loading a
    session that has no history: -32002; the agent keeps serving and exits 0 when stdin
    closes."""
    fake_api.add_main(text_turn("fine"))
    report = acp.in_session(
        {"op": "set_mode", "session": "a", "modeId": "nonsense"},
        {"op": "set_mode", "session": "a", "modeId": "acceptEdits"},
        {"op": "load", "name": "x", "sessionId": NO_SUCH_SESSION, "cwd": acp.cwd},
        prompt("still fine?"),
    )
    _, _, bad_mode, mode, missing, ok = report["results"]
    assert -32602 == bad_mode["error"]["code"]
    assert {} == mode
    assert [{"sessionUpdate": "current_mode_update", "currentModeId": "acceptEdits"}] == [
        u for u in report["updates"]["a"] if u["sessionUpdate"] == "current_mode_update"
    ]
    assert -32002 == missing["error"]["code"]
    assert {"stopReason": "end_turn"} == ok


# A 1x1 PNG.
_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)


def test_prompt_content_reaches_the_model(
    acp: Acp, cli_env: CLIEnv, fake_api: FakeAnthropicAPI
) -> None:
    """An image, an embedded (unsaved) buffer and a file link in one prompt: the model gets
    the image block, the buffer's text and the @-mention."""
    fake_api.add_main(text_turn("I see it."))
    cwd = acp.cwd
    (cli_env.cwd / "main.py").write_text("print('on disk')\n")
    content = [
        {"type": "text", "text": "What is in these?"},
        {"type": "image", "mimeType": "image/png", "data": _PNG},
        {
            "type": "resource",
            "resource": {"uri": f"file://{cwd}/draft.py", "text": "unsaved = 42"},
        },
        {"type": "resource_link", "uri": f"file://{cwd}/main.py", "name": "main.py"},
    ]
    report = acp.in_session(prompt(content))
    assert {"stopReason": "end_turn"} == report["results"][2], report["results"]
    [request] = fake_api.main_requests()
    blocks = [
        block
        for message in request.body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
    ]
    assert "image" in [block["type"] for block in blocks]
    text = "\n".join(block.get("text", "") for block in blocks if block["type"] == "text")
    assert "unsaved = 42" in text and f'<context ref="file://{cwd}/draft.py">' in text
    assert f"@{cwd}/main.py" in text
    # The CLI resolved the @-mention itself: the model saw the file as it is on disk.
    assert "print('on disk')" in json.dumps(request.body["messages"])


QUESTIONS = {
    "questions": [
        {
            "question": "Which greeting style should I use?",
            "header": "Style",
            "options": [
                {"label": "Formal", "description": "Good day."},
                {"label": "Casual", "description": "Hey!"},
            ],
            "multiSelect": False,
        },
        {
            "question": "Which languages?",
            "header": "Languages",
            "options": [
                {"label": "English", "description": "en"},
                {"label": "French", "description": "fr"},
                {"label": "German", "description": "de"},
            ],
            "multiSelect": True,
        },
    ]
}


def _question_turns(fake_api: FakeAnthropicAPI) -> None:
    fake_api.add_main(tool_turn("AskUserQuestion", QUESTIONS), text_turn("Thanks."))


def _model_read(fake_api: FakeAnthropicAPI) -> str:
    from ._assertions import api_tool_results, result_text

    [result] = api_tool_results(fake_api.main_requests()[1].body)
    return result_text(result)


def test_questions_by_form_elicitation(acp: Acp, fake_api: FakeAnthropicAPI) -> None:
    """A client that advertises form elicitation gets one form (a field per question, a
    multi-select as an array, a free-text field beside each); what it accepts reaches the
    model through the real CLI, the free text joining the multi-select's picks."""
    _question_turns(fake_api)
    content = {
        "question_0": "Casual",
        "question_1": ["English", "French"],
        "question_1_custom": "Latin",
    }
    report = acp.run(
        {"op": "initialize", "elicitation": True},
        acp.new("a"),
        prompt("ask me", elicitations=[{"action": "accept", "content": content}]),
        END,
    )
    assert {"stopReason": "end_turn"} == report["results"][2], report["stderr"][-3000:]
    [form] = report["elicitations"]["a"]
    props = form["requestedSchema"]["properties"]
    assert "array" == props["question_1"]["type"]
    assert ["English", "French", "German"] == [
        o["const"] for o in props["question_1"]["items"]["anyOf"]
    ]
    assert "Good day." == props["question_0"]["oneOf"][0]["description"]
    assert form["toolCallId"]
    read = _model_read(fake_api)
    assert '"Which greeting style should I use?"="Casual"' in read, read
    assert '"Which languages?"="English, French, Latin"' in read, read
    assert "permissions" not in report or not report["permissions"].get("a")


def test_questions_by_permission_requests_and_a_decline(
    acp: Acp, fake_api: FakeAnthropicAPI
) -> None:
    """Without elicitation each question is a permission request whose options are its
    answers; declining the second declines the whole request, and the model reads why."""
    _question_turns(fake_api)
    report = acp.in_session(prompt("ask me", permissions=["answer_0", "decline"]))
    assert {"stopReason": "end_turn"} == report["results"][2], report["stderr"][-3000:]
    first, second = report["permissions"]["a"]
    assert ["Formal", "Casual", "Decline to answer"] == [o["name"] for o in first["options"]]
    assert "Languages: Which languages?" == second["toolCall"]["title"]
    assert "declined to answer" in _model_read(fake_api)


def test_resume_delete_and_additional_directories(
    acp: Acp, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    """A session in the project and an extra directory; its first prompt titles it; closed,
    it is resumed without a replay and the model still has the first turn; closed again, it
    is deleted and no longer listed."""
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "notes.md").write_text("remember the extra directory\n")
    fake_api.add_main(
        tool_turn("Read", {"file_path": str(extra / "notes.md")}),
        text_turn("Read it."),
        text_turn("Still here."),
    )
    new = {**acp.new("a"), "additionalDirectories": [str(extra)]}
    resume = {"op": "resume", "name": "b", "from": "a", "cwd": acp.cwd}
    report = acp.run(
        INITIALIZE,
        new,
        prompt("Read the notes\nplease"),
        {"op": "close", "session": "a"},
        resume,
        prompt("and now?", session="b"),
        {"op": "close", "session": "b"},
        {"op": "list", "cwd": acp.cwd},
        {"op": "delete", "session": "b"},
        {"op": "list", "cwd": acp.cwd},
        END,
    )
    init, _, first, _, resumed, second, _, listed, deleted, after = report["results"]
    assert {"resume", "delete", "additionalDirectories"} <= set(
        init["agentCapabilities"]["sessionCapabilities"]
    )
    assert {"stopReason": "end_turn"} == first, report["stderr"][-3000:]
    assert "modes" in resumed and {"stopReason": "end_turn"} == second, resumed
    assert [{"sessionUpdate": "session_info_update", "title": "Read the notes"}] == updates_of(
        report, "a", "session_info_update"
    )
    assert not updates_of(report, "b", "user_message_chunk"), "resume replays nothing"
    [read] = [
        c for c in updates_of(report, "a", "tool_call_update") if c.get("status") == "completed"
    ]
    assert "remember the extra directory" in json.dumps(read)
    last = fake_api.main_requests()[-1].body
    assert "Read the notes" in json.dumps(last["messages"]), "the resumed CLI has the first turn"
    assert [report["sessions"]["b"]] == [s["sessionId"] for s in listed["sessions"]]
    assert {} == deleted
    assert [] == after["sessions"]


def test_fork_continues_a_conversation_under_a_new_id(acp: Acp, fake_api: FakeAnthropicAPI) -> None:
    """session/fork (unstable) of a session with a turn: a new session id, whose next turn
    the model sees with the first one; both are listed, the original unchanged."""
    fake_api.add_main(text_turn("Noted: apple."), text_turn("It was apple."))
    fork = {"op": "fork", "name": "b", "from": "a", "cwd": acp.cwd}
    report = acp.in_session(
        prompt("Remember the word apple"),
        fork,
        prompt("Which word?", session="b"),
        {"op": "list", "cwd": acp.cwd},
    )
    _, new, first, forked, second, listed = report["results"]
    assert {"stopReason": "end_turn"} == first, report["stderr"][-3000:]
    assert forked["sessionId"] != new["sessionId"] and "modes" in forked, forked
    assert {"stopReason": "end_turn"} == second, report["stderr"][-3000:]
    last = json.dumps(fake_api.main_requests()[-1].body["messages"])
    assert "Remember the word apple" in last and "Which word?" in last
    ids = {s["sessionId"] for s in listed["sessions"]}
    assert {new["sessionId"], forked["sessionId"]} <= ids


def test_the_model_option_lists_the_clis_own_models(acp: Acp, fake_api: FakeAnthropicAPI) -> None:
    """Once the CLI answered initialize, a config_option_update offers the models it lists
    (with their display names), not a fixed set of aliases; selecting one still works."""
    fake_api.add_main(text_turn("hi"))
    report = acp.in_session(prompt("hello"), {"op": "set_model", "session": "a", "value": "sonnet"})
    assert {"stopReason": "end_turn"} == report["results"][2], report["stderr"][-3000:]
    [update] = updates_of(report, "a", "config_option_update")
    option, _effort = update["configOptions"]
    values = [o["value"] for o in option["options"]]
    assert "default" == values[0] and len(values) >= 2, values
    # The pinned CLI (2.1.332) lists a model that is none of the aliases offered before.
    assert "fable" in values and "Fable" == option["options"][values.index("fable")]["name"]
    assert "sonnet" == report["results"][3]["configOptions"][0]["currentValue"]


def test_the_effort_option_sets_the_clis_effort_mid_session(
    acp: Acp, fake_api: FakeAnthropicAPI
) -> None:
    """The effort option (category thought_level) offers the levels the CLI lists for the
    model; choosing one changes the effort of the next model request (apply_flag_settings,
    no restart: one CLI, one conversation), ``default`` returns to the model's own; a level
    it does not offer is refused with invalid params and changes nothing."""
    fake_api.add_main(text_turn("one"), text_turn("two"), text_turn("three"))
    effort = {"op": "set_config", "session": "a", "configId": "effort"}
    report = acp.in_session(
        prompt("first"),
        {**effort, "value": "low"},
        prompt("second"),
        {**effort, "value": "extreme"},
        {**effort, "value": "default"},
        prompt("third"),
    )
    _, new, first, low, second, refused, default, third = report["results"]
    for answer in (first, second, third):
        assert {"stopReason": "end_turn"} == answer, report["stderr"][-3000:]
    [before] = [o for o in new["configOptions"] if o["id"] == "effort"]
    assert ("thought_level", "default") == (before["category"], before["currentValue"])
    [update] = updates_of(report, "a", "config_option_update")
    [listed] = [o for o in update["configOptions"] if o["id"] == "effort"]
    values = [o["value"] for o in listed["options"]]
    assert ["default", "low", "medium", "high", "xhigh", "max"] == values
    assert "low" == low["configOptions"][1]["currentValue"]
    assert -32602 == refused["error"]["code"] and "extreme" in refused["error"]["message"]
    assert "default" == default["configOptions"][1]["currentValue"]
    efforts = [r.body["output_config"]["effort"] for r in fake_api.main_requests()]
    assert ["medium", "low", "medium"] == efforts
    messages = json.dumps(fake_api.main_requests()[-1].body["messages"])
    assert "first" in messages and "second" in messages, "the same conversation throughout"
