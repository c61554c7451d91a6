"""The chat view of recorded runs (``tests/fixtures/compact``, ``tests/fixtures/local_commands``):
replaying a kept run's protocol log as the live session published it (:func:`live_events`) and
the view as a UI shows it (:func:`shown`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from adapter.chat import ChatView
from adapter.events import Event, UserMessage
from adapter.translate import Translator
from claudecode import decode_line


def shown(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The chat view's entries as a UI shows them: without their ids (live ones are named
    after event seqs, stored ones after their position) and without the message id of a
    command's output (live: the CLI's synthetic message, which the transcript does not keep;
    stored: the output line's own uuid)."""
    view = ChatView()
    view.apply(list(events))
    out: list[dict[str, Any]] = []
    for entry in view.entries:
        data = msgspec.to_builtins(entry)
        del data["id"]
        if out and out[-1]["kind"] == "command" and data["kind"] == "text":
            del data["message_id"]
        out.append(data)
    return out


def live_events(protocol: Path) -> list[Event]:
    """What the session published during a kept run (its protocol log): each prompt as a
    user message before it is sent, then the events of the CLI's lines."""
    translator = Translator()
    events: list[Event] = []
    for raw in protocol.read_bytes().splitlines():
        record = json.loads(raw)
        if record["dir"] == "to_cli":
            events.append(UserMessage(text=record["prompt"], images=record.get("images", 0)))
        else:
            events += translator.feed_many([decode_line(json.dumps(record["msg"]).encode())])
    return events
