"""What the AG-UI endpoint tests share: the app over the fake CLI, a client, and the
checks of a run's events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from adapter import PermissionPolicy
from adapter.server import ServerSettings, create_app
from adapter.server.agui import verify_events
from tests.support.configs import fake_session_config


def app_for(tmp_path: Path, body: Any, **settings_kw: Any) -> Any:
    defaults = fake_session_config(tmp_path, body, policy=PermissionPolicy("supervised"))
    settings_kw.setdefault("state_dir", tmp_path / "state")
    return create_app(settings=ServerSettings(session_defaults=defaults, **settings_kw))


def client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60)


def valid(
    events: list[dict[str, Any]], body: dict[str, Any], before: list[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The run obeys every rule (calls of the thread's earlier runs ``before`` are known)."""
    known = [e["toolCallId"] for e in before if e["type"] == "TOOL_CALL_START"]
    problems = verify_events(
        events, thread_id=body["threadId"], run_id=body["runId"], known_tool_calls=known
    )
    assert [] == problems
    return events


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
