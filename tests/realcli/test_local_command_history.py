"""Commands the CLI answers itself (``/context``, ``/model`` without an argument, ``/cost``)
through the real CLI: the chat view built live from the session's events and the one built
from the transcript the CLI wrote show the same conversation — each command as it was
typed, then its output as the assistant text the CLI sent live.

Set ``CLAUDECODE_BRIDGE_RECORD_LOCAL_COMMANDS=<dir>`` to copy the session's stream-json
lines (``local_commands.protocol.jsonl``, as ``debug_dir`` records them) and the CLI's
transcript (``local_commands.transcript.jsonl``) there: that is how
``tests/fixtures/local_commands/`` was made.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from adapter.chat import AssistantText, ChatView, CommandEntry, load_events
from adapter.cluster.transcripts import find_transcript
from adapter.config import SessionConfig
from adapter.events import Event
from adapter.policies import PermissionPolicy
from adapter.session import AgentSession

from .chat_recording import keep_recording, run_turn, shown
from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

WAIT = 120
PROMPTS = ("remember the word teapot", "/context", "/model", "/cost", "what was the word?")


async def test_local_commands_live_and_from_history(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    fake_api.add_main(text_turn("Noted: teapot."), text_turn("The word was teapot."))
    config = SessionConfig(
        cli_path=cli_command,
        cwd=cli_env.cwd,
        env=cli_env(),
        policy=PermissionPolicy("autonomous"),
        debug_dir=tmp_path / "debug",
        client_options={"inherit_env": False, "control_timeout": 60.0, "spawn_timeout": 60.0},
    )
    seen: list[Event] = []
    with anyio.fail_after(WAIT):
        async with AgentSession(config) as session:
            with session.subscribe() as events:
                for prompt in PROMPTS:
                    await run_turn(session, events, prompt, seen)
            sid = session.cli_session_id
            session_id = session.id
    assert sid
    # The commands were answered by the CLI itself: two model turns only.
    assert 2 == len(fake_api.main_requests())

    transcript = find_transcript(Path(cli_env.home) / ".claude", sid)
    assert transcript is not None
    keep_recording(
        "CLAUDECODE_BRIDGE_RECORD_LOCAL_COMMANDS",
        "local_commands",
        tmp_path / "debug" / f"{session_id}.protocol.jsonl",
        transcript,
    )
    live = ChatView()
    live.apply(seen)
    stored = ChatView()
    stored.apply(load_events(transcript))
    entries = live.entries
    commands = [(i, e) for i, e in enumerate(entries) if isinstance(e, CommandEntry)]
    assert ["context", "model", "cost"] == [e.name for _, e in commands]
    for i, _ in commands:  # each answered: its output right after it
        output = entries[i + 1]
        assert isinstance(output, AssistantText) and output.text.strip()
    assert shown(live) == shown(stored)
