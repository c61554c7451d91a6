"""The *_via_store mutations: rename, tag, delete and fork sessions kept in a store.

Ported from claude-agent-sdk 0.2.189, ``_internal/session_mutations.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

import json
import uuid as uuid_mod
from typing import Any, cast

from .._types_sessions import SessionKey, SessionStore, SessionStoreEntry
from .mutations import (
    _TRANSCRIPT_TYPES,
    ForkSessionResult,
    _build_fork_lines,
    _derive_title_from_entries,
    _iso_now,
    _sanitize_unicode,
)
from .paths import _validate_uuid
from .subagents import project_key_for_directory
from .validation import _store_implements


async def rename_session_via_store(
    session_store: SessionStore,
    session_id: str,
    title: str,
    directory: str | None = None,
) -> None:
    """Rename a session by appending a custom-title entry to a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    stripped = title.strip()
    if not stripped:
        raise ValueError("title must be non-empty")
    project_key = project_key_for_directory(directory)
    key: SessionKey = {"project_key": project_key, "session_id": session_id}
    entry: dict[str, Any] = {
        "type": "custom-title",
        "customTitle": stripped,
        "sessionId": session_id,
        "uuid": str(uuid_mod.uuid4()),
        "timestamp": _iso_now(),
    }
    # SessionStoreEntry is a structural supertype ({type: str, ...}); the
    # extra fields are opaque pass-through for adapters.
    await session_store.append(key, [cast(SessionStoreEntry, entry)])


async def tag_session_via_store(
    session_store: SessionStore,
    session_id: str,
    tag: str | None,
    directory: str | None = None,
) -> None:
    """Tag a session by appending a tag entry to a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if tag is not None:
        sanitized = _sanitize_unicode(tag).strip()
        if not sanitized:
            raise ValueError("tag must be non-empty (use None to clear)")
        tag = sanitized
    project_key = project_key_for_directory(directory)
    key: SessionKey = {"project_key": project_key, "session_id": session_id}
    entry: dict[str, Any] = {
        "type": "tag",
        "tag": tag if tag is not None else "",
        "sessionId": session_id,
        "uuid": str(uuid_mod.uuid4()),
        "timestamp": _iso_now(),
    }
    await session_store.append(key, [cast(SessionStoreEntry, entry)])


async def delete_session_via_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
) -> None:
    """Delete a session from a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if not _store_implements(session_store, "delete"):
        return
    project_key = project_key_for_directory(directory)
    key: SessionKey = {"project_key": project_key, "session_id": session_id}
    await session_store.delete(key)


async def fork_session_via_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
) -> ForkSessionResult:
    """Fork a session into a new branch with fresh UUIDs via a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if up_to_message_id and not _validate_uuid(up_to_message_id):
        raise ValueError(f"Invalid up_to_message_id: {up_to_message_id}")
    project_key = project_key_for_directory(directory)
    src_key: SessionKey = {"project_key": project_key, "session_id": session_id}
    loaded = await session_store.load(src_key)
    if not loaded:
        raise FileNotFoundError(f"Session {session_id} not found")

    # Partition into transcript entries (with uuid) and content-replacement
    # records, mirroring _parse_fork_transcript for the already-parsed path.
    # SessionStoreEntry is a minimal structural supertype — widen to a plain
    # dict for field access.
    raw: list[dict[str, Any]] = cast("list[dict[str, Any]]", loaded)
    transcript: list[dict[str, Any]] = []
    content_replacements: list[Any] = []
    for entry in raw:
        entry_type = entry.get("type")
        if entry_type in _TRANSCRIPT_TYPES and isinstance(entry.get("uuid"), str):
            transcript.append(entry)
        elif (
            entry_type == "content-replacement"
            and entry.get("sessionId") == session_id
            and isinstance(entry.get("replacements"), list)
        ):
            content_replacements.extend(entry["replacements"])

    forked_session_id, lines = _build_fork_lines(
        transcript,
        content_replacements,
        session_id,
        up_to_message_id,
        title,
        lambda: _derive_title_from_entries(raw),
    )

    dst_key: SessionKey = {"project_key": project_key, "session_id": forked_session_id}
    # _build_fork_lines emits compact JSON strings; re-parse to objects so the
    # store receives the same shape it would from the mirror path. All entries
    # satisfy the SessionStoreEntry structural supertype ({type: str, ...}).
    await session_store.append(dst_key, [json.loads(line) for line in lines])
    return ForkSessionResult(session_id=forked_session_id)
