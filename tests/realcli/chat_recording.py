"""Shared by the real-CLI tests that compare the chat view built live from a session's events
with the one built from the transcript the CLI wrote, and that can keep the run as fixtures
(``tests/fixtures/compact``, ``tests/fixtures/local_commands``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import msgspec

from adapter.chat import ChatView
from adapter.events import Complete, Event
from adapter.session import AgentSession


def shown(view: ChatView) -> list[dict[str, Any]]:
    """The entries as a UI shows them: without their ids (live ones are named after event
    seqs, stored ones after their position), and without the message id of a command's
    output (live: the CLI's synthetic message, which its transcript does not keep)."""
    out: list[dict[str, Any]] = []
    for entry in view.entries:
        data = msgspec.to_builtins(entry)
        del data["id"]
        if out and out[-1]["kind"] == "command" and data["kind"] == "text":
            del data["message_id"]
        out.append(data)
    return out


def keep_recording(variable: str, stem: str, protocol: Path, transcript: Path) -> None:
    """Copy the run's protocol log and transcript to the directory named by the environment
    variable ``variable``, as ``<stem>.protocol.jsonl`` and ``<stem>.transcript.jsonl``,
    when it is set (how the fixtures are recorded again)."""
    target = os.environ.get(variable)
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(protocol, Path(target) / f"{stem}.protocol.jsonl")
        shutil.copy(transcript, Path(target) / f"{stem}.transcript.jsonl")


async def run_turn(session: AgentSession, events: Any, prompt: str, seen: list[Event]) -> None:
    """Send ``prompt`` and collect the events into ``seen`` until the turn completes."""
    await session.prompt(prompt)
    async for event in events:
        seen.append(event)
        if isinstance(event, Complete):
            return
    raise AssertionError("the events ended before the turn completed")
