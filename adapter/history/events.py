"""A stored session loaded as the adapter's events: :func:`load_events` (and the images its
prompts carried: :func:`load_prompt_images`, since events only count them).

User messages, text, reasoning, tool calls and their results (through :mod:`normalize`),
compactions, local commands and the errors of failed API calls, so
:class:`~adapter.chat.ChatView` shows a stored session exactly like a live one (see
:mod:`adapter.history.transcripts` for how compactions and local commands are stored and
shown).
"""

from __future__ import annotations

import os
import re
from collections import deque
from pathlib import Path
from typing import Any

import msgspec

from .._tools import ToolCalls
from ..events import (
    CompactBoundary,
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    Reasoning,
    SessionStatus,
    UserMessage,
)
from ..images import Image
from ._lines import Line, Message, is_boundary, is_local_command, iter_lines
from .usertext import parse_user_text

__all__ = ("load_events", "load_prompt_images")

_COMMAND_OUTPUT = re.compile(
    r"<local-command-(?:stdout|stderr)>(.*?)</local-command-(?:stdout|stderr)>", re.S
)


def _local_command_output(line: Line, n: int) -> list[Event]:
    """A local command's output line as the assistant text it was live (the CLI sends the
    output as a ``<synthetic>`` assistant message), named after the line."""
    if not isinstance(line.content, str):
        return []
    # The live message has no trailing blank lines; the stored output may have some.
    text = "\n".join(_COMMAND_OUTPUT.findall(line.content)).rstrip()
    if not text:
        return []
    return [MessageChunk(message_id=line.uuid or f"local-command-{n}", text=text)]


def _boundary(line: Line) -> CompactBoundary:
    meta = line.compact_metadata if isinstance(line.compact_metadata, dict) else {}
    trigger = meta.get("trigger")
    tokens = meta.get("preTokens")
    return CompactBoundary(
        trigger=trigger if isinstance(trigger, str) else None,
        pre_tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
    )


def _user_text(message: Message) -> str | None:
    """The text of a user message that is text only (a prompt, a command), else None."""
    content = message.content
    if isinstance(content, str):
        return content
    if all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n".join(b["text"] for b in content if isinstance(b.get("text"), str))
    return None


def _is_compact_command(message: Message) -> bool:
    text = _user_text(message)
    if text is None:
        return False
    parsed = parse_user_text(text)
    return parsed.kind == "command" and parsed.name == "compact"


def _is_command_output(message: Message) -> bool:
    text = _user_text(message)
    return text is not None and parse_user_text(text).kind == "command_output"


def load_events(
    path: str | os.PathLike[str], *, until: str | None = None, turn_ends: bool = False
) -> list[Event]:
    """The main thread of a stored session as events (for :class:`~adapter.chat.ChatView`).

    Starts with a :class:`~adapter.events.SessionStatus` (``resumed``: the CLI session id,
    model and cwd as recorded). Events carry no ``seq``. Sub-agent transcripts (kept in
    separate files by the CLI) and usage totals are not part of it.

    ``until`` names a message uuid (the CLI's ``--resume-session-at``): the conversation
    ends with that line, as a session resumed at it sees it. ``turn_ends`` marks where each
    stored turn ended (before the next prompt, and at the end) with a synthetic
    :class:`~adapter.events.Complete` that carries only the turn's last assistant message
    uuid, so a view can offer to resume or fork there as after a live turn.
    """
    path = Path(path)
    calls = ToolCalls()
    events: list[Event] = []
    cwd = model = session_id = None
    # A compaction waiting for the line after it: the /compact it belongs to goes first.
    boundary: CompactBoundary | None = None
    # The /compact line just shown: its output line (the compaction's echo) is not.
    after_compact = False
    # The prompts as sent, in the CLI's queue order; ``typed``: the one it took last.
    queued: deque[str | None] = deque()
    typed: str | None = None
    # The last assistant message of the turn being read (where it ended, for ``turn_ends``).
    answered: str | None = None
    reached = False
    for line in iter_lines(path):
        if reached:
            break
        reached = until is not None and line.uuid == until
        if line.type == "queue-operation":
            content = line.content if isinstance(line.content, str) else None
            if line.operation == "enqueue":
                queued.append(content)
            elif line.operation == "dequeue":
                typed = queued.popleft() if queued else None
            elif line.operation == "remove" and content in queued:
                queued.remove(content)
            continue
        if line.is_sidechain or line.is_meta or line.is_compact_summary:
            continue
        cwd = cwd or line.cwd
        session_id = session_id or line.session_id
        if is_boundary(line):
            if boundary is not None:
                events.append(boundary)
            boundary, after_compact = _boundary(line), False
            continue
        if is_local_command(line):
            if after_compact:  # the /compact's own output: not shown live either
                after_compact = False
                continue
            if boundary is not None:
                events.append(boundary)
                boundary = None
            events += _local_command_output(line, len(events))
            continue
        message = line.message
        assert message is not None
        if after_compact:
            after_compact = False
            if line.type == "user" and _is_command_output(message):
                continue
        if boundary is not None:
            if line.type == "user" and _is_compact_command(message):
                events += _user_events(line, message, calls)
                events.append(boundary)
                boundary, after_compact = None, True
                continue
            events.append(boundary)
            boundary = None
        if line.type == "assistant":
            typed = None  # a prompt's answer: the prompt taken last was shown already
            if message.model and message.model != "<synthetic>":
                model = message.model
            events += _assistant_events(message, calls)
            events += _api_error(line, message)
            answered = line.uuid or answered
        elif line.type == "user":
            shown = _as_typed(_user_events(line, message, calls), typed)
            if turn_ends and answered and any(isinstance(e, UserMessage) for e in shown):
                events.append(Complete(last_message_uuid=answered, synthetic=True))
                answered = None
            events += shown
            typed = None
    if boundary is not None:
        events.append(boundary)
    if turn_ends and answered:
        events.append(Complete(last_message_uuid=answered, synthetic=True))
    status = SessionStatus(status="resumed", cli_session_id=session_id, model=model, cwd=cwd)
    return [status, *events]


def load_prompt_images(path: str | os.PathLike[str]) -> list[tuple[Image, ...]]:
    """The images of each prompt of the main thread that carried any, in order: one tuple
    per prompt :func:`load_events` shows with an image count (a prompt shown as a slash
    command is not one). An image block that is not padded base64 is left out of its tuple."""
    found: list[tuple[Image, ...]] = []
    for line in iter_lines(Path(path)):
        if line.type != "user" or line.is_sidechain or line.is_meta or line.is_compact_summary:
            continue
        message = line.message
        if message is None or isinstance(message.content, str):
            continue
        blocks = [b for b in message.content if isinstance(b, dict)]
        if any(b.get("type") == "tool_result" for b in blocks):
            continue
        texts = [b.get("text") for b in blocks if b.get("type") == "text"]
        text = "\n".join(t for t in texts if isinstance(t, str))
        if parse_user_text(text).kind not in ("text", "hidden"):
            continue  # shown as a command, not as a prompt
        images: list[Image] = []
        count = 0
        for block in blocks:
            source = block.get("source")
            if block.get("type") != "image":
                continue
            count += 1
            if not isinstance(source, dict):
                continue
            media_type, data = source.get("media_type"), source.get("data")
            if isinstance(media_type, str) and isinstance(data, str):
                try:
                    images.append(Image.from_base64(media_type, data))
                except ValueError:
                    continue
        if count:
            found.append(tuple(images))
    return found


def _as_typed(events: list[Event], typed: str | None) -> list[Event]:
    """A command shown as the person typed it: the CLI stores an alias (``/cost``) under
    the command's own name (``/usage``), and its queue keeps the prompt as it was sent."""
    if typed is None or len(events) != 1 or not isinstance(events[0], UserMessage):
        return events
    stored, sent = parse_user_text(events[0].text), parse_user_text(typed)
    if (
        stored.kind == "command"
        and sent.kind == "command"
        and stored.name != sent.name
        and stored.args == sent.args
    ):
        return [UserMessage(text=typed)]
    return events


def _api_error(line: Line, message: Message) -> list[Event]:
    """The CLI's synthetic message for a failed API call (``API Error: 529 ...``) is the
    turn's error too, as live, where the failed ``result`` (not stored) says it: the chat
    view shows the two as one error entry with the status."""
    if line.is_api_error_message is not True:
        return []
    if isinstance(message.content, str):
        text = message.content
    else:
        texts = [b.get("text") for b in message.content if isinstance(b, dict)]
        text = "".join(t for t in texts if isinstance(t, str))
    if not text:
        return []
    status = line.api_error_status
    valid = isinstance(status, int) and not isinstance(status, bool)
    request = line.request_id if isinstance(line.request_id, str) and line.request_id else None
    return [
        ErrorEvent(
            message=text,
            kind="api_error",
            status=status if valid else None,
            request_id=request,
        )
    ]


def _assistant_events(message: Message, calls: ToolCalls) -> list[Event]:
    events: list[Event] = []
    message_id = message.id or ""
    if isinstance(message.content, str):
        if message.content:
            events.append(MessageChunk(message_id=message_id, text=message.content))
        return events
    for block in message.content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
            events.append(MessageChunk(message_id=message_id, text=block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"]:
            events.append(Reasoning(message_id=message_id, text=block["thinking"]))
        elif kind in ("tool_use", "server_tool_use") and isinstance(block.get("id"), str):
            name = block.get("name")
            events += calls.announce(
                block["id"], name if isinstance(name, str) else "", block.get("input"), None
            )
    return events


def _user_events(line: Line, message: Message, calls: ToolCalls) -> list[Event]:
    content = message.content
    if isinstance(content, str):
        return [UserMessage(text=content)] if content else []
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        structured: Any = None
        if len(results) == 1 and line.tool_use_result:
            try:
                structured = msgspec.json.decode(line.tool_use_result)
            except msgspec.DecodeError:
                structured = None
        events: list[Event] = []
        for block in results:
            tool_id = block.get("tool_use_id")
            if isinstance(tool_id, str):
                events += calls.result(
                    tool_id, block.get("content"), block.get("is_error") is True, structured, None
                )
        return events
    texts = [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    images = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")
    if not texts and not images:
        return []
    return [UserMessage(text="\n".join(texts), images=images)]
