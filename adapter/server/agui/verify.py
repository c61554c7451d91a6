"""The ordering rules ``@ag-ui/client``'s ``verifyEvents`` enforces, as a pure checker.

:func:`verify_events` walks a stream of AG-UI events (JSON objects, as on the wire) and
returns what a real client would reject, plus what it lets through but a conforming server
must still get right (a run that never ends, tool arguments that are not JSON, a result for
a call nobody started, run ids that do not match the request). It serves the bridge's own
tests and anyone who wants to check an AG-UI stream without Node.

Rules (the same in ``@ag-ui/client`` 1.0.0 and 0.0.59): the first event is ``RUN_STARTED``
(or ``RUN_ERROR``); after ``RUN_FINISHED`` only ``RUN_ERROR`` or a new ``RUN_STARTED``; after
``RUN_ERROR`` only a new ``RUN_STARTED``; no ``RUN_STARTED`` inside a run; text messages,
reasoning messages and spans, tool calls and steps open and close by id (no duplicate open,
no content or end without an open one); nothing open at ``RUN_FINISHED``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = ("REQUIRED_FIELDS", "verify_events")

_OPEN_CLOSE = {
    "TEXT_MESSAGE_START": ("text message", "messageId", "open"),
    "TEXT_MESSAGE_CONTENT": ("text message", "messageId", "use"),
    "TEXT_MESSAGE_END": ("text message", "messageId", "close"),
    "TOOL_CALL_START": ("tool call", "toolCallId", "open"),
    "TOOL_CALL_ARGS": ("tool call", "toolCallId", "use"),
    "TOOL_CALL_END": ("tool call", "toolCallId", "close"),
    "REASONING_START": ("reasoning", "messageId", "open"),
    "REASONING_END": ("reasoning", "messageId", "close"),
    "REASONING_MESSAGE_START": ("reasoning message", "messageId", "open"),
    "REASONING_MESSAGE_CONTENT": ("reasoning message", "messageId", "use"),
    "REASONING_MESSAGE_END": ("reasoning message", "messageId", "close"),
    "STEP_STARTED": ("step", "stepName", "open"),
    "STEP_FINISHED": ("step", "stepName", "close"),
}


#: Fields each event type must carry (``@ag-ui/core`` 1.0.0 and 0.0.59 zod schemas).
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "RUN_STARTED": ("threadId", "runId"),
    "RUN_FINISHED": ("threadId", "runId"),
    "RUN_ERROR": ("message",),
    "STEP_STARTED": ("stepName",),
    "STEP_FINISHED": ("stepName",),
    "TEXT_MESSAGE_START": ("messageId",),
    "TEXT_MESSAGE_CONTENT": ("messageId", "delta"),
    "TEXT_MESSAGE_END": ("messageId",),
    "TOOL_CALL_START": ("toolCallId", "toolCallName"),
    "TOOL_CALL_ARGS": ("toolCallId", "delta"),
    "TOOL_CALL_END": ("toolCallId",),
    "TOOL_CALL_RESULT": ("messageId", "toolCallId", "content"),
    "STATE_SNAPSHOT": ("snapshot",),
    "STATE_DELTA": ("delta",),
    "MESSAGES_SNAPSHOT": ("messages",),
    "CUSTOM": ("name",),
    "REASONING_START": ("messageId",),
    "REASONING_MESSAGE_START": ("messageId", "role"),
    "REASONING_MESSAGE_CONTENT": ("messageId", "delta"),
    "REASONING_MESSAGE_END": ("messageId",),
    "REASONING_END": ("messageId",),
}


def verify_events(
    events: Iterable[dict[str, Any]],
    *,
    thread_id: str | None = None,
    run_id: str | None = None,
    require_end: bool = True,
    known_tool_calls: Iterable[str] = (),
) -> list[str]:
    """Every rule the stream breaks, in order (empty when it is valid).

    ``thread_id`` / ``run_id``: the request's ids, which ``RUN_STARTED`` and ``RUN_FINISHED``
    must echo. ``require_end``: the stream must end with a terminal event.
    ``known_tool_calls``: calls the thread's earlier runs started (results may refer to them).
    """
    problems: list[str] = []
    state = "idle"  # idle | running | finished | errored
    open_: dict[tuple[str, str], int] = {}
    tool_calls: set[str] = set(known_tool_calls)
    args: dict[str, list[str]] = {}
    for index, event in enumerate(events):
        where = f"event {index}"
        kind = event.get("type")
        if not isinstance(kind, str):
            problems.append(f"{where}: no string 'type'")
            continue
        missing = [f for f in REQUIRED_FIELDS.get(kind, ()) if f not in event]
        if missing:
            problems.append(f"{where} ({kind}): missing {missing}")
        if None in event.values():
            nulls = sorted(k for k, v in event.items() if v is None)
            problems.append(f"{where} ({kind}): null fields {nulls}")
        if "timestamp" in event and not isinstance(event["timestamp"], int):
            problems.append(f"{where} ({kind}): timestamp is not an integer")
        if state == "idle" and kind not in ("RUN_STARTED", "RUN_ERROR"):
            problems.append(f"{where}: first event must be 'RUN_STARTED', got {kind}")
            state = "running"
        if state == "finished" and kind not in ("RUN_ERROR", "RUN_STARTED"):
            problems.append(f"{where}: {kind} after 'RUN_FINISHED'")
            continue
        if state == "errored" and kind != "RUN_STARTED":
            problems.append(f"{where}: {kind} after 'RUN_ERROR'")
            continue
        if kind == "RUN_STARTED":
            if state == "running":
                problems.append(f"{where}: 'RUN_STARTED' while a run is active")
            state = "running"
            open_.clear()
            problems += _ids(where, event, thread_id, run_id)
            continue
        if kind == "RUN_FINISHED":
            still_open = sorted(f"{what} {key!r}" for what, key in open_)
            if still_open:
                problems.append(f"{where}: 'RUN_FINISHED' with open {', '.join(still_open)}")
            problems += _ids(where, event, thread_id, run_id)
            state = "finished"
            continue
        if kind == "RUN_ERROR":
            if not isinstance(event.get("message"), str):
                problems.append(f"{where}: RUN_ERROR without a message")
            state = "errored"
            continue
        rule = _OPEN_CLOSE.get(kind)
        if rule is not None:
            what, field, action = rule
            key = event.get(field)
            if not isinstance(key, str):
                problems.append(f"{where} ({kind}): '{field}' missing")
                continue
            slot = (what, key)
            if action == "open":
                if slot in open_:
                    problems.append(f"{where}: {what} {key!r} started twice")
                open_[slot] = index
                if what == "tool call":
                    tool_calls.add(key)
                    args[key] = []
            elif slot not in open_:
                problems.append(f"{where}: {kind} for {what} {key!r} that is not open")
            elif action == "close":
                del open_[slot]
                if what == "tool call":
                    text = "".join(args.pop(key, []))
                    if text and not _json_ok(text):
                        problems.append(f"{where}: tool call {key!r} arguments are not JSON")
            elif what == "tool call":
                args.setdefault(key, []).append(str(event.get("delta", "")))
            continue
        if kind == "TOOL_CALL_RESULT":
            call = event.get("toolCallId")
            if call not in tool_calls:
                problems.append(f"{where}: TOOL_CALL_RESULT for unknown call {call!r}")
            if not isinstance(event.get("content"), str):
                problems.append(f"{where}: TOOL_CALL_RESULT content is not a string")
    if require_end and state == "running":
        problems.append("the stream ended without 'RUN_FINISHED' or 'RUN_ERROR'")
    return problems


def _ids(where: str, event: dict[str, Any], thread_id: str | None, run_id: str | None) -> list[str]:
    out = []
    if thread_id is not None and event.get("threadId") != thread_id:
        out.append(f"{where}: threadId {event.get('threadId')!r} != {thread_id!r}")
    if run_id is not None and event.get("runId") != run_id:
        out.append(f"{where}: runId {event.get('runId')!r} != {run_id!r}")
    return out


def _json_ok(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
