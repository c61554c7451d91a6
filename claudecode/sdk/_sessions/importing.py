"""import_session_to_store: copy a local session (and its sub-agents) into a store.

Ported from claude-agent-sdk 0.2.189, ``_internal/session_import.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from .._types_sessions import SessionKey, SessionStore, SessionStoreEntry
from .paths import _validate_uuid
from .subagents import _read_agent_metadata_sidecar, _resolve_session_file_path

__all__ = ["import_session_to_store"]

# As many entries / bytes as one mirror batch holds: one append() per batch.
MAX_PENDING_ENTRIES = 500
MAX_PENDING_BYTES = 1 << 20


async def import_session_to_store(
    session_id: str,
    store: SessionStore,
    *,
    directory: str | None = None,
    include_subagents: bool = True,
    batch_size: int = MAX_PENDING_ENTRIES,
) -> None:
    """Replay a local session transcript into a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")

    resolved = _resolve_session_file_path(session_id, directory)
    if resolved is None:
        raise FileNotFoundError(f"Session {session_id} not found")

    # Key under the on-disk project directory name — matches
    # file_path_to_session_key() / TranscriptMirrorBatcher even when the
    # resolver's search (directory=None) or worktree fallback found the file
    # somewhere other than `directory`.
    project_key = resolved.parent.name
    if batch_size <= 0:
        batch_size = MAX_PENDING_ENTRIES

    main_key: SessionKey = {"project_key": project_key, "session_id": session_id}
    await _append_jsonl_file_in_batches(resolved, main_key, store, batch_size)

    if not include_subagents:
        return

    # Subagent transcripts live at <projectDir>/<sessionId>/subagents/**.
    session_dir = resolved.with_suffix("")
    subagents_dir = session_dir / "subagents"
    for file_path in _collect_jsonl_files(subagents_dir):
        # subpath is the path relative to session_dir, '/'-joined, sans .jsonl —
        # e.g. subagents/agent-abc or subagents/workflows/run-1/agent-def.
        # Matches file_path_to_session_key() so list_subkeys() and
        # get_subagent_messages_from_store() round-trip.
        rel_parts = list(file_path.relative_to(session_dir).parts)
        rel_parts[-1] = rel_parts[-1][: -len(".jsonl")]
        sub_key: SessionKey = {
            "project_key": project_key,
            "session_id": session_id,
            "subpath": "/".join(rel_parts),
        }
        await _append_jsonl_file_in_batches(file_path, sub_key, store, batch_size)

        # The on-disk .jsonl does NOT contain agent_metadata entries — those
        # are only sent to live mirrors and persisted in the .meta.json
        # sidecar. Import the sidecar so materialize_resume_session() can
        # recreate it and resumed subagents keep their agentType/worktreePath.
        # A missing, corrupt, or non-object sidecar is treated as absent (the
        # transcript is still imported); other read errors propagate.
        meta = _read_agent_metadata_sidecar(file_path)
        if meta is not None:
            # Synthetic discriminator last so a stray "type" key in the
            # CLI-owned sidecar can never shadow it.
            meta_entry = cast(SessionStoreEntry, {**meta, "type": "agent_metadata"})
            await store.append(sub_key, [meta_entry])


async def _append_jsonl_file_in_batches(
    file_path: Path,
    key: SessionKey,
    store: SessionStore,
    batch_size: int,
) -> None:
    """Stream a JSONL file into ``store.append()`` in batches (blank lines skipped)."""
    batch: list[SessionStoreEntry] = []
    nbytes = 0
    with file_path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            batch.append(json.loads(line))
            nbytes += len(line)
            if len(batch) >= batch_size or nbytes >= MAX_PENDING_BYTES:
                await store.append(key, batch)
                batch = []
                nbytes = 0
    if batch:
        await store.append(key, batch)


def _collect_jsonl_files(base_dir: Path) -> Iterator[Path]:
    """Recursively yield all ``*.jsonl`` file paths under ``base_dir``."""
    try:
        dirents = sorted(base_dir.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for entry in dirents:
        if entry.is_dir():
            yield from _collect_jsonl_files(entry)
        elif entry.is_file() and entry.name.endswith(".jsonl"):
            yield entry
