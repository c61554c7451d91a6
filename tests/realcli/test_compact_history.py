"""``/compact`` through the real CLI: the chat view built live from the session's events and
the one built from the transcript the CLI wrote show the same conversation — the
"Conversation compacted" notice after the ``/compact`` command, the compaction summary not
as a user message.

The fake Messages API answers the CLI's compaction request (it asks for an ``<analysis>``
and a ``<summary>`` block) with a summary. Set ``CLAUDECODE_BRIDGE_RECORD_COMPACT=<dir>`` to
copy the session's stream-json lines (``compact.protocol.jsonl``, as ``debug_dir`` records
them) and the CLI's transcript (``compact.transcript.jsonl``) there: that is how
``tests/fixtures/compact/`` was made.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from adapter.chat import ChatView, CommandEntry, NoticeEntry, UserEntry, load_events
from adapter.cluster.transcripts import find_transcript
from adapter.config import SessionConfig
from adapter.events import CompactBoundary, Complete, Event
from adapter.policies import PermissionPolicy
from adapter.session import AgentSession

from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import Rule, text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

WAIT = 120
SUMMARY = "The user asked me to remember the word teapot; I said I would."
#: What every compaction request of the CLI 2.1.332 ends with.
COMPACTION_REQUEST = "followed by a <summary> block"


def shown(view: ChatView) -> list[dict[str, Any]]:
    """The entries as a UI shows them: without their ids (live ones are named after event
    seqs, stored ones after their position)."""
    out = []
    for entry in view.entries:
        data = msgspec.to_builtins(entry)
        del data["id"]
        out.append(data)
    return out


def _record(protocol: Path, transcript: Path) -> None:
    """Copy the run's files to ``$CLAUDECODE_BRIDGE_RECORD_COMPACT`` when it is set."""
    target = os.environ.get("CLAUDECODE_BRIDGE_RECORD_COMPACT")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(protocol, Path(target) / "compact.protocol.jsonl")
        shutil.copy(transcript, Path(target) / "compact.transcript.jsonl")


async def _turn(session: AgentSession, events: Any, prompt: str, seen: list[Event]) -> None:
    await session.prompt(prompt)
    async for event in events:
        seen.append(event)
        if isinstance(event, Complete):
            return
    raise AssertionError("the events ended before the turn completed")


async def test_compact_live_and_from_history(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    summarize = Rule(
        COMPACTION_REQUEST,
        text_turn(f"<analysis>One word to keep.</analysis>\n<summary>{SUMMARY}</summary>"),
    )
    fake_api.add_rule(summarize)
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
                for prompt in ("remember the word teapot", "/compact", "what was the word?"):
                    await _turn(session, events, prompt, seen)
            sid = session.cli_session_id
            session_id = session.id
    assert sid
    [boundary] = [e for e in seen if isinstance(e, CompactBoundary)]
    assert "manual" == boundary.trigger
    # The model answered the compaction request, and the next turn ran on the summary.
    assert summarize.hits >= 1
    last = json.dumps(fake_api.main_requests()[-1].body["messages"])
    assert SUMMARY in last

    transcript = find_transcript(Path(cli_env.home) / ".claude", sid)
    assert transcript is not None
    _record(tmp_path / "debug" / f"{session_id}.protocol.jsonl", transcript)
    live = ChatView()
    live.apply(seen)
    stored = ChatView()
    stored.apply(load_events(transcript))
    entries = live.entries
    kinds = [type(e) for e in entries]
    compact_at = next(i for i, e in enumerate(entries) if isinstance(e, CommandEntry))
    assert "compact" == entries[compact_at].name  # type: ignore[union-attr]
    notice = entries[compact_at + 1]
    assert isinstance(notice, NoticeEntry) and "compact" == notice.notice_kind
    assert 2 == kinds.count(UserEntry)
    assert all(SUMMARY not in e.text for e in entries if isinstance(e, UserEntry))
    assert shown(live) == shown(stored)
