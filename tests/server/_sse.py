"""Reading AG-UI SSE streams the way @ag-ui/client does (frames split on LF LF only)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx


def parse(raw: bytes) -> list[dict[str, Any]]:
    """The events of a complete SSE body; comment frames are skipped."""
    assert b"\r" not in raw, "frames must be LF-only"
    events = []
    for frame in raw.split(b"\n\n"):
        if not frame.strip() or frame.startswith(b":"):
            continue
        assert frame.startswith(b"data: "), frame
        event = json.loads(frame[len(b"data: ") :])
        assert isinstance(event, dict) and isinstance(event.get("type"), str)
        events.append(event)
    return events


def run_input(
    thread_id: str, messages: list[dict[str, Any]], run_id: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A RunAgentInput as HttpAgent 1.0 sends it."""
    return {
        "threadId": thread_id,
        "runId": run_id or uuid.uuid4().hex,
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "state": {},
        **extra,
    }


def user(text: str, message_id: str | None = None) -> dict[str, Any]:
    return {"id": message_id or uuid.uuid4().hex, "role": "user", "content": text}


def post_stream(
    http: httpx.Client, path: str, body: Any, **kwargs: Any
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    """POST and read the whole SSE answer."""
    with http.stream(
        "POST", path, json=body, headers={"Accept": "text/event-stream"}, **kwargs
    ) as response:
        raw = response.read()
    if response.status_code != 200:
        return response, []
    assert response.headers["content-type"].startswith("text/event-stream")
    return response, parse(raw)
