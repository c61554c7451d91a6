"""Recorded transcripts replayed through the translator (the translator and chat tests).

A transcript may record several CLI processes (``exit_code`` spawns three); each process gets
its own :class:`~adapter.translate.Translator`, as each real session would. Lines go in the
order the CLI printed them, and the replay does what the session does: ``can_use_tool``
requests go through :meth:`Translator.permission_request`, the answer to our ``initialize``
goes through :meth:`Translator.initialized`, other control requests and responses are the
session's business and are skipped, everything else is fed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from adapter.events import (
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    Reasoning,
    ToolCall,
    ToolUpdate,
    decode_event,
    encode_event,
)
from adapter.translate import Translator
from claudecode._codec import decode_line
from claudecode.content import TextBlock, ThinkingBlock
from claudecode.control import InitializeResult, parse_result
from claudecode.messages import (
    AssistantMessage,
    CanUseToolRequest,
    ControlSuccess,
    InboundControlRequest,
    InboundControlResponse,
    InboundMessage,
    MalformedLine,
    ResultMessage,
    StreamEvent,
    UnknownMessage,
)
from claudecode.stream_events import ContentBlockDelta, MessageStart, TextDelta, ThinkingDelta

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
PATHS = sorted(
    p
    for p in [*TRANSCRIPTS.glob("*.jsonl"), *TRANSCRIPTS.glob("v2.1.197/*.jsonl")]
    if not p.name.endswith(".api.jsonl")
)
NAMES = [str(p.relative_to(TRANSCRIPTS)) for p in PATHS]


@dataclass
class Process:
    """One CLI process of a transcript: what it printed, and our initialize request ids."""

    messages: list[InboundMessage] = field(default_factory=list)
    initialize_ids: set[str] = field(default_factory=set)
    #: The same lines as plain JSON objects.
    raw: list[dict[str, Any]] = field(default_factory=list)


def processes(name: str) -> list[Process]:
    """The CLI processes recorded in transcript ``name`` (e.g. ``"basic.jsonl"``)."""
    out: list[Process] = []
    current = Process()
    number = 0
    for text in (TRANSCRIPTS / name).read_text().splitlines():
        record = json.loads(text)
        if record["dir"] == "note" and str(record.get("note", "")).startswith("spawn"):
            if current.messages or current.initialize_ids:
                out.append(current)
            current = Process()
        elif record["dir"] == "to_cli":
            msg = record["msg"]
            if msg.get("type") == "control_request" and msg["request"]["subtype"] == "initialize":
                current.initialize_ids.add(msg["request_id"])
        elif record["dir"] == "from_cli":
            number += 1
            current.messages.append(decode_line(json.dumps(record["msg"]).encode(), number))
            current.raw.append(record["msg"])
    if current.messages:
        out.append(current)
    return out


def step(translator: Translator, message: InboundMessage, initialize_ids: set[str]) -> list[Event]:
    """Give one message to the translator the way the session does."""
    if isinstance(message, InboundControlRequest):
        if isinstance(message.request, CanUseToolRequest):
            return [translator.permission_request(message)]
        return []
    if isinstance(message, InboundControlResponse):
        body = message.response
        if isinstance(body, ControlSuccess) and body.request_id in initialize_ids:
            return translator.initialized(parse_result(InitializeResult, body.response))
        return []
    return translator.feed(message)


def replay(process: Process, translator: Translator | None = None) -> list[Event]:
    """Every event of one process, in order."""
    translator = translator or Translator()
    events: list[Event] = []
    for message in process.messages:
        events += step(translator, message, process.initialize_ids)
    return events


def replay_all(name: str) -> list[list[Event]]:
    """The events of every process of transcript ``name``."""
    return [replay(p) for p in processes(name)]


# ----------------------------------------------------------------------- expectations


def assistant_texts(messages: list[InboundMessage]) -> dict[tuple[str, str], str]:
    """``(message id, kind) -> text`` as the ``assistant`` lines tell it (kind text/thinking)."""
    texts: dict[tuple[str, str], str] = defaultdict(str)
    for msg in messages:
        if isinstance(msg, AssistantMessage):
            for block in msg.message.content:
                if isinstance(block, TextBlock):
                    texts[msg.message.id, "text"] += block.text
                elif isinstance(block, ThinkingBlock):
                    texts[msg.message.id, "thinking"] += block.thinking
    return dict(texts)


def emitted_texts(events: list[Event]) -> dict[tuple[str, str], str]:
    """``(message id, kind) -> text`` as the events tell it."""
    texts: dict[tuple[str, str], str] = defaultdict(str)
    for event in events:
        if isinstance(event, MessageChunk):
            texts[event.message_id, "text"] += event.text
        elif isinstance(event, Reasoning):
            texts[event.message_id, "thinking"] += event.text
    return dict(texts)


def text_bounds(messages: list[InboundMessage]) -> dict[tuple[str, str], int]:
    """The most text each ``(message id, kind)`` can rightly show: its longest account.

    Counts every distinct line (by ``uuid``) once, and every ``stream_event`` line each time
    (the translator does not check those for duplicates): the streamed deltas of the
    message, or its ``assistant`` blocks, whichever is longer; a result's own text under
    ``result:<uuid>``.
    """
    streamed: dict[tuple[str, str], int] = defaultdict(int)
    delivered: dict[tuple[str, str], int] = defaultdict(int)
    seen: set[str] = set()
    current: dict[str | None, str] = {}
    for msg in messages:
        uuid = getattr(msg, "uuid", None)
        if uuid is not None and not isinstance(msg, StreamEvent):
            if uuid in seen:
                continue
            seen.add(uuid)
        if isinstance(msg, StreamEvent):
            event = msg.event
            if isinstance(event, MessageStart):
                current[msg.parent_tool_use_id] = event.message.id or msg.api_message_id or ""
                continue
            if isinstance(event, ContentBlockDelta):
                mid = msg.api_message_id or current.get(msg.parent_tool_use_id, "")
                if isinstance(event.delta, TextDelta):
                    streamed[mid, "text"] += len(event.delta.text)
                elif isinstance(event.delta, ThinkingDelta):
                    streamed[mid, "thinking"] += len(event.delta.thinking)
        elif isinstance(msg, AssistantMessage):
            for block in msg.message.content:
                if isinstance(block, TextBlock):
                    delivered[msg.message.id, "text"] += len(block.text)
                elif isinstance(block, ThinkingBlock):
                    delivered[msg.message.id, "thinking"] += len(block.thinking)
        elif isinstance(msg, ResultMessage) and msg.result:
            delivered[f"result:{msg.uuid}", "text"] += len(msg.result)
    keys = set(streamed) | set(delivered)
    return {k: max(streamed.get(k, 0), delivered.get(k, 0)) for k in keys}


def check_tool_lifecycle(events: list[Event]) -> None:
    """Each ToolCall once, then exactly one ToolUpdate; none open at any Complete."""
    called: set[str] = set()
    updated: set[str] = set()
    for event in events:
        if isinstance(event, ToolCall):
            assert event.tool_call_id not in called, f"second ToolCall {event.tool_call_id}"
            assert event.tool_call_id not in updated, f"ToolCall after update {event.tool_call_id}"
            called.add(event.tool_call_id)
        elif isinstance(event, ToolUpdate):
            assert event.tool_call_id not in updated, f"second ToolUpdate {event.tool_call_id}"
            updated.add(event.tool_call_id)
        elif isinstance(event, Complete):
            assert called <= updated, f"open at Complete: {sorted(called - updated)}"


def check_round_trip(events: list[Event]) -> None:
    """Every event survives the public JSON form unchanged."""
    for event in events:
        assert decode_event(encode_event(event)) == event


def turns(events: list[Event]) -> list[list[Event]]:
    """Events split into turns: each ends with its Complete (and the ErrorEvent right after).

    A trailing part without a Complete is dropped.
    """
    out: list[list[Event]] = []
    current: list[Event] = []
    for event in events:
        after_complete = bool(current) and isinstance(current[-1], Complete)
        if after_complete and not isinstance(event, ErrorEvent):
            out.append(current)
            current = []
        current.append(event)
        if after_complete and isinstance(event, ErrorEvent):
            out.append(current)
            current = []
    if current and any(isinstance(e, Complete) for e in current):
        out.append(current)
    return out


def main_text(events: list[Event]) -> str:
    """The main-chain (not sub-agent) assistant text among ``events``."""
    return "".join(
        e.text for e in events if isinstance(e, MessageChunk) and e.parent_tool_call_id is None
    )


def of_type(events: list[Event], cls: type[Any]) -> list[Any]:
    """The events of class ``cls``."""
    return [e for e in events if isinstance(e, cls)]


# ----------------------------------------------------------- hand-built wire messages

_ids = count(1)


def line(obj: dict[str, Any]) -> InboundMessage:
    """Decode one wire object; a fresh ``uuid`` unless the object has one (or ``uuid=None``)."""
    obj = dict(obj)
    if "uuid" not in obj:
        obj["uuid"] = f"u-{next(_ids)}"
    elif obj["uuid"] is None:
        del obj["uuid"]
    msg = decode_line(json.dumps(obj).encode())
    assert not isinstance(msg, MalformedLine | UnknownMessage), msg
    return msg


def feed(t: Translator, *objs: dict[str, Any]) -> list[Event]:
    out: list[Event] = []
    for obj in objs:
        out += t.feed(line(obj))
    return out


def init(model: str = "claude-opus-5-5", mode: str = "default", sid: str = "S") -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "init",
        "session_id": sid,
        "cwd": "/w",
        "model": model,
        "permissionMode": mode,
        "tools": ["Bash"],
        "mcp_servers": [{"name": "fe", "status": "connected", "source": "sdk"}],
        "claude_code_version": "2.1.332",
    }


def assistant(
    mid: str, *blocks: dict[str, Any], parent: str | None = None, **kw: Any
) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    return {
        "type": "assistant",
        "message": {"id": mid, "model": "claude-opus-5-5", "content": list(blocks), "usage": usage},
        "parent_tool_use_id": parent,
        **kw,
    }


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(tid: str, name: str = "Bash", **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp or {"command": "ls"}}


def tool_result(tid: str, content: Any = "ok", is_error: bool = False, **kw: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": is_error}
    return {"type": "user", "message": {"role": "user", "content": [block]}, **kw}


def stream(
    event: dict[str, Any], mid: str | None = None, parent: str | None = None
) -> dict[str, Any]:
    obj: dict[str, Any] = {"type": "stream_event", "event": event, "parent_tool_use_id": parent}
    if mid is not None:
        obj["api_message_id"] = mid
    return obj


def start(mid: str, input_tokens: int = 100, model: str = "claude-opus-5-5") -> dict[str, Any]:
    usage = {"input_tokens": input_tokens, "output_tokens": 1}
    return stream(
        {
            "type": "message_start",
            "message": {"id": mid, "model": model, "content": [], "usage": usage},
        }
    )


def text_delta(t: str, mid: str | None = None, index: int = 0) -> dict[str, Any]:
    return stream(
        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": t}},
        mid,
    )


def result(**kw: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "done",
    }
    obj.update(kw)
    return obj


def can_use_tool(rid: str, **body: Any) -> InboundControlRequest:
    request = {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "rm x"}, **body}
    msg = line({"type": "control_request", "request_id": rid, "request": request, "uuid": None})
    assert isinstance(msg, InboundControlRequest)
    return msg
