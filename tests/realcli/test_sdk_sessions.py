"""Real CLI: the SDK's session functions on transcripts the pinned CLI wrote, the official
SDK and claudecode.sdk side by side.

A few real sessions are recorded once per module (a plain turn, a Bash call, a foreground
sub-agent, a second prompt), then each function's answer is compared between the two
libraries; the mutations (rename, tag, fork, delete) are made by one library and read back
by the other, so both agree on the files they write.
"""

from __future__ import annotations

import dataclasses
import importlib
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import Text, Turn, text_turn, tool_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

OFFICIAL = importlib.import_module("claude_agent_sdk")
OURS = importlib.import_module("claudecode.sdk")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _plain(value: Any) -> Any:
    """Dataclasses of either library as dicts, so their answers compare as data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


class Recorded:
    """Sessions the real CLI wrote under a private config dir."""

    def __init__(self, cli_env: CLIEnv) -> None:
        self.cwd = str(cli_env.cwd)
        self.config = cli_env.home / ".claude"
        self.ids: list[str] = []


async def _run(options: Any, prompt: str) -> str:
    with anyio.fail_after(90):
        async for message in OURS.query(prompt=prompt, options=options):
            if isinstance(message, OURS.ResultMessage):
                session_id: str = message.session_id
    return session_id


@pytest.fixture
async def recorded(
    cli_command: str,
    cli_env: CLIEnv,
    fake_api: FakeAnthropicAPI,
    monkeypatch: pytest.MonkeyPatch,
) -> Recorded:
    fake_api.add_main(
        text_turn("Hello there."),
        tool_turn("Bash", {"command": "echo hi > made.txt", "description": "Make a file"}),
        text_turn("Made it."),
        tool_turn(
            "Agent",
            {
                "description": "Count files",
                "prompt": "Count the files in the cwd and report.",
                "subagent_type": "general-purpose",
                "run_in_background": False,
            },
        ),
        text_turn("The sub-agent counted."),
        text_turn("Second answer."),
    )
    fake_api.add_subagent(
        tool_turn("Bash", {"command": "ls -1 | wc -l", "description": "Count files"}),
        Turn(blocks=[Text("There is 1 file.")]),
    )

    def options(**extra: Any) -> Any:
        return OURS.ClaudeAgentOptions(
            cli_path=cli_command,
            cwd=str(cli_env.cwd),
            env=cli_env(),
            allowed_tools=["Bash", "Agent"],
            **extra,
        )

    out = Recorded(cli_env)
    out.ids.append(await _run(options(), "Say hello"))
    first_tool = await _run(options(), "Make a file")
    out.ids.append(first_tool)
    out.ids.append(await _run(options(), "Use a sub-agent to count files"))
    # A second prompt on the first session: one transcript with two turns.
    await _run(options(resume=out.ids[0]), "Again")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(out.config))
    return out


def _both(call: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    theirs = getattr(OFFICIAL, call)(*args, **kwargs)
    ours = getattr(OURS, call)(*args, **kwargs)
    return _plain(theirs), _plain(ours)


async def test_reading_sessions_matches_the_sdk(recorded: Recorded) -> None:
    """list_sessions, get_session_info, get_session_messages (with paging), list_subagents,
    get_subagent_messages: the same answers from the same files."""
    theirs, ours = _both("list_sessions", directory=recorded.cwd)
    assert theirs == ours and {s["session_id"] for s in ours} == set(recorded.ids)
    assert _both("list_sessions") == _both("list_sessions", limit=10)
    assert (
        _both("list_sessions", limit=1, offset=1)[0] == _both("list_sessions", limit=1, offset=1)[1]
    )
    for session_id in recorded.ids:
        theirs, ours = _both("get_session_info", session_id, directory=recorded.cwd)
        assert theirs == ours and ours is not None
        theirs, ours = _both("get_session_messages", session_id)
        assert theirs == ours and ours
        assert _both("get_session_messages", session_id, limit=2, offset=1)[1] == ours[1:3]
    subagent_session = recorded.ids[2]
    theirs, ours = _both("list_subagents", subagent_session)
    assert theirs == ours and len(ours) == 1
    theirs, ours = _both("get_subagent_messages", subagent_session, ours[0])
    assert theirs == ours and ours
    assert _both("get_session_info", "00000000-0000-0000-0000-000000000000") == (None, None)


@pytest.mark.parametrize(("writer", "reader"), [(OURS, OFFICIAL), (OFFICIAL, OURS)])
async def test_mutations_read_back_by_the_other_library(
    recorded: Recorded, writer: ModuleType, reader: ModuleType
) -> None:
    """rename / tag / fork / delete by one library, read back by the other."""
    first, second = recorded.ids[0], recorded.ids[1]
    writer.rename_session(first, "Renamed here", directory=recorded.cwd)
    writer.tag_session(first, "keep", directory=recorded.cwd)
    info = reader.get_session_info(first, directory=recorded.cwd)
    assert ("Renamed here", "keep", "Renamed here") == (info.custom_title, info.tag, info.summary)
    writer.tag_session(first, None, directory=recorded.cwd)
    assert reader.get_session_info(first, directory=recorded.cwd).tag is None

    forked = writer.fork_session(first, directory=recorded.cwd, title="The fork")
    original = reader.get_session_messages(first, directory=recorded.cwd)
    copy = reader.get_session_messages(forked.session_id, directory=recorded.cwd)
    assert [m.message for m in original] == [m.message for m in copy]
    assert {m.session_id for m in copy} == {forked.session_id}
    assert "The fork" == reader.get_session_info(forked.session_id).custom_title
    upto = original[1].uuid
    partial = writer.fork_session(first, up_to_message_id=upto)
    assert len(reader.get_session_messages(partial.session_id)) == 2

    writer.delete_session(second, directory=recorded.cwd)
    assert reader.get_session_info(second, directory=recorded.cwd) is None
    for module in (OURS, OFFICIAL):
        with pytest.raises(FileNotFoundError, match=second):
            module.rename_session(second, "gone", directory=recorded.cwd)


async def test_stores_match_the_sdk(recorded: Recorded, tmp_path: Path) -> None:
    """import_session_to_store into each library's InMemorySessionStore, then the
    *_from_store readers and *_via_store mutations give the same answers."""
    stores = (OFFICIAL.InMemorySessionStore(), OURS.InMemorySessionStore())
    for module, store in zip((OFFICIAL, OURS), stores, strict=True):
        for session_id in recorded.ids:
            await module.import_session_to_store(session_id, store, directory=recorded.cwd)
    answers: list[list[Any]] = [[], []]
    for index, (module, store) in enumerate(zip((OFFICIAL, OURS), stores, strict=True)):
        answer = answers[index]
        answer.append(await module.list_sessions_from_store(store, directory=recorded.cwd))
        for session_id in recorded.ids:
            answer.append(
                await module.get_session_info_from_store(store, session_id, directory=recorded.cwd)
            )
            answer.append(
                await module.get_session_messages_from_store(
                    store, session_id, directory=recorded.cwd
                )
            )
        subagents = await module.list_subagents_from_store(
            store, recorded.ids[2], directory=recorded.cwd
        )
        answer.append(subagents)
        answer.append(
            await module.get_subagent_messages_from_store(
                store, recorded.ids[2], subagents[0], directory=recorded.cwd
            )
        )
        await module.rename_session_via_store(
            store, recorded.ids[0], "Stored title", directory=recorded.cwd
        )
        await module.tag_session_via_store(store, recorded.ids[0], "t", directory=recorded.cwd)
        answer.append(
            await module.get_session_info_from_store(store, recorded.ids[0], directory=recorded.cwd)
        )
        await module.delete_session_via_store(store, recorded.ids[1], directory=recorded.cwd)
        answer.append(await module.list_sessions_from_store(store, directory=recorded.cwd))
    theirs, ours = _plain(answers[0]), _plain(answers[1])
    for their_answer, our_answer in zip(theirs, ours, strict=True):
        assert their_answer == _drop_mtimes(our_answer, their_answer)
    renamed = ours[-2]
    assert ("Stored title", "t") == (renamed["custom_title"], renamed["tag"])
    assert recorded.ids[1] not in {s["session_id"] for s in ours[-1]}


def _drop_mtimes(ours: Any, theirs: Any) -> Any:
    """Store mtimes are the wall clock of each append: taken from the other side."""
    if isinstance(ours, dict) and isinstance(theirs, dict) and "last_modified" in ours:
        return {**ours, "last_modified": theirs["last_modified"]}
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [_drop_mtimes(a, b) for a, b in zip(ours, theirs, strict=True)]
    return ours


def test_project_key_matches_the_sdk(tmp_path: Path) -> None:
    """The store key of a project directory, long paths (hash suffix) included."""
    long = tmp_path / ("x" * 120) / ("y" * 120)
    for directory in (str(tmp_path), str(long), "/a/b c/ü"):
        assert OFFICIAL.project_key_for_directory(directory) == OURS.project_key_for_directory(
            directory
        )
    assert shutil.which("git") is None or OURS.project_key_for_directory() != ""
