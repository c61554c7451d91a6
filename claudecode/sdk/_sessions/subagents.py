"""list_subagents and get_subagent_messages: the transcripts of a session's sub-agents.

Ported from claude-agent-sdk 0.2.189, ``_internal/sessions.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._types_sessions import SessionMessage
from .chain import _parse_transcript_entries, _to_session_message, _TranscriptEntry
from .paths import (
    _canonicalize_path,
    _find_project_dir,
    _get_projects_dir,
    _get_worktree_paths,
    _sanitize_path,
    _validate_uuid,
)


def _resolve_session_file_path(session_id: str, directory: str | None) -> Path | None:
    """Resolves the on-disk path of a session JSONL file."""
    file_name = f"{session_id}.jsonl"

    def _stat_candidate(project_dir: Path) -> Path | None:
        candidate = project_dir / file_name
        try:
            if candidate.stat().st_size > 0:
                return candidate
        except OSError:
            pass
        return None

    if directory:
        canonical_dir = _canonicalize_path(directory)

        project_dir = _find_project_dir(canonical_dir)
        if project_dir is not None:
            found = _stat_candidate(project_dir)
            if found is not None:
                return found

        try:
            worktree_paths = _get_worktree_paths(canonical_dir)
        except Exception:
            worktree_paths = []

        for wt in worktree_paths:
            if wt == canonical_dir:
                continue
            wt_project_dir = _find_project_dir(wt)
            if wt_project_dir is not None:
                found = _stat_candidate(wt_project_dir)
                if found is not None:
                    return found

        return None

    projects_dir = _get_projects_dir()
    try:
        dirents = list(projects_dir.iterdir())
    except OSError:
        return None

    for entry in dirents:
        if not entry.is_dir():
            continue
        found = _stat_candidate(entry)
        if found is not None:
            return found

    return None


def _resolve_subagents_dir(session_id: str, directory: str | None) -> Path | None:
    """Resolves the subagents directory for a given session."""
    resolved = _resolve_session_file_path(session_id, directory)
    if resolved is None:
        return None
    # Strip the .jsonl suffix to derive the session directory.
    session_dir = resolved.with_suffix("")
    return session_dir / "subagents"


def _collect_agent_files(base_dir: Path) -> list[tuple[str, Path]]:
    """Recursively collects ``agent-*.jsonl`` files from a directory tree."""
    results: list[tuple[str, Path]] = []

    def _walk(current_dir: Path) -> None:
        try:
            dirents = sorted(current_dir.iterdir(), key=lambda p: p.name)
        except OSError:
            return
        for entry in dirents:
            name = entry.name
            if entry.is_file() and name.startswith("agent-") and name.endswith(".jsonl"):
                agent_id = name[len("agent-") : -len(".jsonl")]
                results.append((agent_id, entry))
            elif entry.is_dir():
                _walk(entry)

    _walk(base_dir)
    return results


def _build_subagent_chain(entries: list[_TranscriptEntry]) -> list[_TranscriptEntry]:
    """Builds the conversation chain for a subagent transcript."""
    if not entries:
        return []

    by_uuid: dict[str, _TranscriptEntry] = {}
    for entry in entries:
        by_uuid[entry["uuid"]] = entry

    # Subagent transcripts are linear — the last user/assistant entry is
    # the leaf.
    leaf: _TranscriptEntry | None = None
    for entry in reversed(entries):
        if entry.get("type") in ("user", "assistant"):
            leaf = entry
            break
    if leaf is None:
        return []

    chain: list[_TranscriptEntry] = []
    seen: set[str] = set()
    current: _TranscriptEntry | None = leaf
    while current is not None:
        uid = current["uuid"]
        if uid in seen:
            break
        seen.add(uid)
        chain.append(current)
        parent = current.get("parentUuid")
        current = by_uuid.get(parent) if parent else None

    chain.reverse()
    return chain


def list_subagents(
    session_id: str,
    directory: str | None = None,
) -> list[str]:
    """Lists subagent IDs for a given session by scanning the subagents directory."""
    if not _validate_uuid(session_id):
        return []

    subagents_dir = _resolve_subagents_dir(session_id, directory)
    if subagents_dir is None:
        return []

    return [agent_id for agent_id, _ in _collect_agent_files(subagents_dir)]


def get_subagent_messages(
    session_id: str,
    agent_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """Reads a subagent's conversation messages from its JSONL transcript file."""
    if not _validate_uuid(session_id):
        return []
    if not agent_id:
        return []

    subagents_dir = _resolve_subagents_dir(session_id, directory)
    if subagents_dir is None:
        return []

    # The agent file may be directly in subagents/ or in a nested
    # subdirectory — scan to find it.
    match: Path | None = None
    for found_id, file_path in _collect_agent_files(subagents_dir):
        if found_id == agent_id:
            match = file_path
            break
    if match is None:
        return []

    try:
        content = match.read_text(encoding="utf-8")
    except OSError:
        return []
    if not content:
        return []

    # The .meta.json sidecar next to the transcript records which Agent
    # tool_use spawned this subagent (and, for nested subagents, the parent
    # agent id). Like the transcript read above, any failure to read it
    # (missing, unreadable, corrupt) degrades to "no metadata" rather than
    # raising from this best-effort read helper.
    try:
        meta = _read_agent_metadata_sidecar(match)
    except OSError:
        meta = None
    parent_tool_use_id, parent_agent_id = _parent_ids_from_agent_metadata(meta)

    entries = _parse_transcript_entries(content)
    return _entries_to_subagent_messages(
        entries, limit, offset, parent_tool_use_id, parent_agent_id
    )


def _agent_metadata_sidecar_path(transcript_path: Path) -> Path:
    """``agent-<id>.jsonl`` -> ``agent-<id>.meta.json`` (same directory)."""
    return transcript_path.with_name(transcript_path.name[: -len(".jsonl")] + ".meta.json")


def _read_agent_metadata_sidecar(transcript_path: Path) -> dict[str, Any] | None:
    """Read the ``.meta.json`` sidecar beside a subagent transcript."""
    try:
        meta = json.loads(_agent_metadata_sidecar_path(transcript_path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def _split_agent_metadata(
    entries: list[Any],
) -> tuple[dict[str, Any] | None, list[Any]]:
    """Separate the synthetic ``agent_metadata`` entry from transcript lines."""
    metadata: dict[str, Any] | None = None
    transcript: list[Any] = []
    for e in entries:
        if isinstance(e, dict) and e.get("type") == "agent_metadata":
            metadata = dict(e)
        else:
            transcript.append(e)
    return metadata, transcript


def _parent_ids_from_agent_metadata(
    meta: dict[str, Any] | None,
) -> tuple[str | None, str | None]:
    """Extract ``(toolUseId, parentAgentId)`` from an agent metadata dict."""
    if not meta:
        return None, None
    tool_use_id = meta.get("toolUseId")
    parent_agent_id = meta.get("parentAgentId")
    return (
        tool_use_id if isinstance(tool_use_id, str) else None,
        parent_agent_id if isinstance(parent_agent_id, str) else None,
    )


def _entries_to_subagent_messages(
    entries: list[_TranscriptEntry],
    limit: int | None,
    offset: int,
    parent_tool_use_id: str | None = None,
    parent_agent_id: str | None = None,
) -> list[SessionMessage]:
    """Builds the subagent chain from parsed entries and applies paging."""
    chain = _build_subagent_chain(entries)
    messages = [
        _to_session_message(e, parent_tool_use_id, parent_agent_id)
        for e in chain
        if e.get("type") in ("user", "assistant")
    ]

    if limit is not None and limit > 0:
        return messages[offset : offset + limit]
    if offset > 0:
        return messages[offset:]
    return messages


def project_key_for_directory(directory: str | Path | None = None) -> str:
    """Derive the :class:`SessionStore` ``project_key`` for a directory."""
    abs_path = _canonicalize_path(str(directory) if directory is not None else ".")
    return _sanitize_path(abs_path)
