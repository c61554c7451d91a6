"""The published JSON Schema of the event stream matches the code."""

from __future__ import annotations

import json
from pathlib import Path

from adapter.events import event_schema

SCHEMA_FILE = Path(__file__).parents[2] / "docs" / "event-schema.json"


def test_published_schema_is_current() -> None:
    """docs/event-schema.json is what adapter.events describes (regenerate it if not)."""
    published = json.loads(SCHEMA_FILE.read_text())
    assert json.loads(json.dumps(event_schema())) == published, (
        "regenerate with: python -m adapter schema > docs/event-schema.json"
    )


def test_schema_names_every_event_type() -> None:
    """Every event type has its definition with its tag."""
    schema = event_schema()
    tags = set(schema["discriminator"]["mapping"])
    assert {"message_chunk", "tool_call", "tool_update", "permission_request", "complete"} <= tags
    assert {"question_request", "permission_resolved"} <= tags
    assert 23 == len(tags)
