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

import pytest

from adapter.chat import AssistantText, ChatView, CommandEntry
from tests.support.chat import shown

from .chat_recording import record_run
from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

PROMPTS = ("remember the word teapot", "/context", "/model", "/cost", "what was the word?")


async def test_local_commands_live_and_from_history(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    fake_api.add_main(text_turn("Noted: teapot."), text_turn("The word was teapot."))
    run = await record_run(
        PROMPTS,
        cli_command=cli_command,
        cli_env=cli_env,
        tmp_path=tmp_path,
        keep_in="CLAUDECODE_BRIDGE_RECORD_LOCAL_COMMANDS",
        stem="local_commands",
    )
    # The commands were answered by the CLI itself: two model turns only.
    assert 2 == len(fake_api.main_requests())

    live = ChatView()
    live.apply(run.events)
    entries = live.entries
    commands = [(i, e) for i, e in enumerate(entries) if isinstance(e, CommandEntry)]
    assert ["context", "model", "cost"] == [e.name for _, e in commands]
    for i, _ in commands:  # each answered: its output right after it
        output = entries[i + 1]
        assert isinstance(output, AssistantText) and output.text.strip()
    assert shown(run.events) == shown(run.stored)
