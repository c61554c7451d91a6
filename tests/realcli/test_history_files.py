"""Real CLI: the session history files it writes under ``~/.claude/projects``, listed,
loaded and resumed with :mod:`adapter.history.transcripts`.

Set ``CLAUDECODE_BRIDGE_RECORD_HISTORY=<dir>`` to copy the recorded files there (that is how
``tests/fixtures/history/`` was made).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from adapter.chat import AssistantText, ChatView, ErrorEntry, ToolEntry
from adapter.events import UserMessage
from adapter.history import find_session_file, list_sessions, load_events, resume_spec
from adapter.translate import Translator
from claudecode import messages as m
from claudecode.control import OutboundControlResponse
from claudecode.options import ClaudeCodeOptions
from normalize import ShellExec

from ._assertions import open_recorded, run_turn
from .fake_api import FakeAnthropicAPI
from .script import Rule, Text, Thinking, Turn, error_turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]


async def _allow(req: m.InboundControlRequest) -> OutboundControlResponse:
    return req.allow()


def _script(fake_api: FakeAnthropicAPI) -> None:
    fake_api.add_main(
        Turn(blocks=(Thinking("Let me think about files."), Text("Hello! I can help."))),
        tool_turn("Bash", {"command": "echo hi", "description": "Say hi"}),
        tool_turn("Read", {"file_path": "NOTES"}),
        tool_turn("Read", {"file_path": "NOTES2"}),
        tool_turn("Edit", {"file_path": "NOTES", "old_string": "a", "new_string": "A"}),
        tool_turn(
            "TodoWrite",
            {
                "todos": [
                    {"content": "Write notes", "status": "completed", "activeForm": "Writing"},
                    {"content": "Ship", "status": "in_progress", "activeForm": "Shipping"},
                ]
            },
        ),
        text_turn("All done."),
    )


async def test_history_files_are_written(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    _script(fake_api)
    (cli_env.cwd / "NOTES").write_text("a\nb\n")
    (cli_env.cwd / "NOTES2").write_text("second\n")
    options: ClaudeCodeOptions = cli_options()
    session, _stdout = open_recorded(options, can_use_tool=_allow)
    with anyio.fail_after(180):
        async with session:
            await run_turn(session, "say hello")
            await run_turn(session, "do the work")
        await _check_history(session, cli_env, cli_options, fake_api)


async def _check_history(session: Any, cli_env: Any, cli_options: Any, fake_api: Any) -> None:
    sid = session.session_id
    assert sid is not None
    config = Path(cli_env.home) / ".claude"
    projects = config / "projects"
    files = sorted(projects.rglob("*.jsonl"))
    assert files

    # listed from the CLI's own files, by working directory
    [listed] = list_sessions(cli_env.cwd, config=config)
    assert (sid, "say hello", "HEAD") == (listed.session_id, listed.title, listed.git_branch)
    assert listed.model and listed.message_count >= 10
    view = ChatView()
    view.apply(load_events(find_session_file(sid, cli_env.cwd, config=config)))
    texts = [e.text for e in view.entries if isinstance(e, AssistantText)]
    assert ["Hello! I can help.", "All done."] == texts
    [bash] = [e for e in view.entries if isinstance(e, ToolEntry) and e.tool_name == "Bash"]
    assert isinstance(bash.normalized, ShellExec) and bash.normalized.output is not None
    assert "hi" == bash.normalized.output.stdout

    # resume it: the CLI confirms the same session id; forked, a new one
    spec = resume_spec(sid, config=config)
    assert str(cli_env.cwd) == spec.cwd
    fake_api.add_main(text_turn("resumed answer"), text_turn("forked answer"))
    resumed, _ = open_recorded(cli_options(resume=spec.resume))
    async with resumed:
        await run_turn(resumed, "again")
    assert sid == resumed.session_id
    forked, _ = open_recorded(cli_options(resume=sid, fork_session=True))
    async with forked:
        await run_turn(forked, "fork it")
    assert forked.session_id and sid != forked.session_id
    assert {sid, forked.session_id} == {s.session_id for s in list_sessions(config=config)}
    target = os.environ.get("CLAUDECODE_BRIDGE_RECORD_HISTORY")
    if target:
        for f in files:
            dest = Path(target) / f.relative_to(projects)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, dest)


async def test_a_failed_turn_shows_the_same_stored_and_live(
    cli_options: Any, fake_api: FakeAnthropicAPI, cli_env: Any
) -> None:
    """A 500 on every retry, then a turn that works: the live events and the stored
    transcript (where the CLI keeps its "API Error" message, not the failed result) give the
    same chat, the failure once, as an error with its status and the CLI's text."""
    rule = Rule("break it", error_turn(500, "fake server error"))
    fake_api.add_rule(rule)
    fake_api.add_main(text_turn("recovered"))
    session, _ = open_recorded(cli_options(env_overrides={"CLAUDE_CODE_MAX_RETRIES": "1"}))
    translator = Translator()
    live = ChatView()
    with anyio.fail_after(180):
        async with session:
            for text in ("break it", "try again"):
                live.apply([UserMessage(text=text)])
                live.apply(translator.feed_many(await run_turn(session, text)))
                rule.times = rule.hits  # the failed prompt is merged into the next one
    sid = session.session_id
    assert sid is not None
    config = Path(cli_env.home) / ".claude"
    stored = ChatView()
    stored.apply(load_events(find_session_file(sid, cli_env.cwd, config=config)))

    def shown(view: ChatView) -> list[tuple[str, str, int | None, str | None]]:
        return [
            (type(e).__name__, e.text, None, None)
            if isinstance(e, AssistantText)
            else (type(e).__name__, e.message, e.status, e.request_id)
            for e in view.entries
            if isinstance(e, (AssistantText, ErrorEntry))
        ]

    [(_, raw, _, request), _] = shown(live)
    assert raw.startswith("API Error: 500 fake server error")
    assert request and request.startswith("req_"), "the failed request's id is kept"
    failed = ("ErrorEntry", raw, 500, request)
    assert [failed, ("AssistantText", "recovered", None, None)] == shown(live)
    assert shown(live) == shown(stored)
