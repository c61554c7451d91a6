"""Recorded real-CLI runs whose chat view is compared live against stored
(``tests/fixtures/compact``, ``tests/fixtures/local_commands``): running one through the real
CLI (:func:`record_run`, which can also keep it as fixtures); replaying a kept one and the view
as a UI shows it are in :mod:`tests.support.chat`."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import anyio

from adapter.cluster.transcripts import find_transcript
from adapter.events import Complete, Event
from adapter.history import load_events
from adapter.session import AgentSession
from tests.support.configs import real_cli_config
from tests.support.timeouts import NODE_GUARD

from .cli import CLIEnv


@dataclass
class RecordedRun:
    """One run through the real CLI: what the session published and what the CLI stored."""

    events: list[Event]
    stored: list[Event]


async def record_run(
    prompts: Iterable[str],
    *,
    cli_command: str,
    cli_env: CLIEnv,
    tmp_path: Path,
    keep_in: str,
    stem: str,
) -> RecordedRun:
    """Send ``prompts`` one turn at a time through an autonomous session on the real CLI and
    read back the transcript it wrote. When the environment variable ``keep_in`` names a
    directory, the run's protocol log and transcript are copied there as
    ``<stem>.protocol.jsonl`` and ``<stem>.transcript.jsonl`` (how the fixtures are made)."""
    config = real_cli_config(
        cli_command, cli_env, policy="autonomous", debug_dir=tmp_path / "debug"
    )
    seen: list[Event] = []
    with anyio.fail_after(NODE_GUARD):
        async with AgentSession(config) as session:
            with session.subscribe() as events:
                for prompt in prompts:
                    await session.prompt(prompt)
                    async for event in events:
                        seen.append(event)
                        if isinstance(event, Complete):
                            break
                    else:
                        raise AssertionError("the events ended before the turn completed")
            sid = session.cli_session_id
            protocol = tmp_path / "debug" / f"{session.id}.protocol.jsonl"
    assert sid
    transcript = find_transcript(Path(cli_env.home) / ".claude", sid)
    assert transcript is not None
    _keep(keep_in, stem, protocol, transcript)
    return RecordedRun(events=seen, stored=load_events(transcript))


def _keep(variable: str, stem: str, protocol: Path, transcript: Path) -> None:
    """Copy the run's files to the directory named by ``$variable``, when it is set."""
    target = os.environ.get(variable)
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(protocol, Path(target) / f"{stem}.protocol.jsonl")
        shutil.copy(transcript, Path(target) / f"{stem}.transcript.jsonl")
