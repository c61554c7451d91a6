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
from pathlib import Path

import pytest

from adapter.chat import ChatView, CommandEntry, NoticeEntry, UserEntry
from adapter.events import CompactBoundary
from tests.support.chat import shown

from .chat_recording import record_run
from .cli import CLIEnv
from .fake_api import FakeAnthropicAPI
from .script import Rule, text_turn

pytestmark = [pytest.mark.realcli, pytest.mark.anyio]

SUMMARY = "The user asked me to remember the word teapot; I said I would."
#: What every compaction request of the CLI 2.1.332 ends with.
COMPACTION_REQUEST = "followed by a <summary> block"


async def test_compact_live_and_from_history(
    cli_command: str, cli_env: CLIEnv, fake_api: FakeAnthropicAPI, tmp_path: Path
) -> None:
    summarize = Rule(
        COMPACTION_REQUEST,
        text_turn(f"<analysis>One word to keep.</analysis>\n<summary>{SUMMARY}</summary>"),
    )
    fake_api.add_rule(summarize)
    fake_api.add_main(text_turn("Noted: teapot."), text_turn("The word was teapot."))
    run = await record_run(
        ("remember the word teapot", "/compact", "what was the word?"),
        cli_command=cli_command,
        cli_env=cli_env,
        tmp_path=tmp_path,
        keep_in="CLAUDECODE_BRIDGE_RECORD_COMPACT",
        stem="compact",
    )
    seen = run.events
    [boundary] = [e for e in seen if isinstance(e, CompactBoundary)]
    assert "manual" == boundary.trigger
    # The model answered the compaction request, and the next turn ran on the summary.
    assert summarize.hits >= 1
    last = json.dumps(fake_api.main_requests()[-1].body["messages"])
    assert SUMMARY in last

    live = ChatView()
    live.apply(seen)
    entries = live.entries
    kinds = [type(e) for e in entries]
    compact_at = next(i for i, e in enumerate(entries) if isinstance(e, CommandEntry))
    assert "compact" == entries[compact_at].name  # type: ignore[union-attr]
    notice = entries[compact_at + 1]
    assert isinstance(notice, NoticeEntry) and "compact" == notice.notice_kind
    assert 2 == kinds.count(UserEntry)
    assert all(SUMMARY not in e.text for e in entries if isinstance(e, UserEntry))
    assert shown(seen) == shown(run.stored)
