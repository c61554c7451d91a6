"""Rename, tag, delete and fork sessions on disk (appending the CLI metadata entries).

Ported from claude-agent-sdk 0.2.189, ``_internal/session_mutations.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import unicodedata
import uuid as uuid_mod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .paths import (
    LITE_READ_BUF_SIZE,
    _canonicalize_path,
    _extract_first_prompt_from_head,
    _extract_last_json_string_field,
    _find_project_dir,
    _get_projects_dir,
    _get_worktree_paths,
    _validate_uuid,
)


def rename_session(
    session_id: str,
    title: str,
    directory: str | None = None,
) -> None:
    """Rename a session by appending a custom-title entry."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    # Matches CLI guard — empty/whitespace titles are rejected rather than
    # overloaded as "clear title".
    stripped = title.strip()
    if not stripped:
        raise ValueError("title must be non-empty")

    data = (
        json.dumps(
            {
                "type": "custom-title",
                "customTitle": stripped,
                "sessionId": session_id,
            },
            separators=(",", ":"),
        )
        + "\n"
    )

    _append_to_session(session_id, data, directory)


def tag_session(
    session_id: str,
    tag: str | None,
    directory: str | None = None,
) -> None:
    """Tag a session. Pass ``None`` to clear the tag."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if tag is not None:
        sanitized = _sanitize_unicode(tag).strip()
        if not sanitized:
            raise ValueError("tag must be non-empty (use None to clear)")
        tag = sanitized

    data = (
        json.dumps(
            {
                "type": "tag",
                "tag": tag if tag is not None else "",
                "sessionId": session_id,
            },
            separators=(",", ":"),
        )
        + "\n"
    )

    _append_to_session(session_id, data, directory)


def delete_session(
    session_id: str,
    directory: str | None = None,
) -> None:
    """Delete a session by removing its JSONL file and subagent transcripts."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")

    path = _find_session_file(session_id, directory)
    if path is None:
        raise FileNotFoundError(
            f"Session {session_id} not found"
            + (f" in project directory for {directory}" if directory else "")
        )
    try:
        path.unlink()
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(f"Session {session_id} not found") from e
        raise
    # Subagent transcripts live in a sibling {session_id}/ dir; often absent.
    shutil.rmtree(path.parent / session_id, ignore_errors=True)


@dataclass
class ForkSessionResult:
    """Result of a fork operation."""

    session_id: str
    """UUID of the new forked session."""


def fork_session(
    session_id: str,
    directory: str | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
) -> ForkSessionResult:
    """Fork a session into a new branch with fresh UUIDs."""
    if not _validate_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if up_to_message_id and not _validate_uuid(up_to_message_id):
        raise ValueError(f"Invalid up_to_message_id: {up_to_message_id}")

    source = _find_session_file_with_dir(session_id, directory)
    if source is None:
        raise FileNotFoundError(
            f"Session {session_id} not found"
            + (f" in project directory for {directory}" if directory else "")
        )
    file_path, project_dir = source

    content = file_path.read_bytes()
    if not content:
        raise ValueError(f"Session {session_id} has no messages to fork")

    transcript, content_replacements = _parse_fork_transcript(content, session_id)

    def _derive_title() -> str | None:
        buf_len = len(content)
        head = content[: min(buf_len, LITE_READ_BUF_SIZE)].decode("utf-8", errors="replace")
        tail = content[max(0, buf_len - LITE_READ_BUF_SIZE) :].decode("utf-8", errors="replace")
        return (
            _extract_last_json_string_field(tail, "customTitle")
            or _extract_last_json_string_field(head, "customTitle")
            or _extract_last_json_string_field(tail, "aiTitle")
            or _extract_last_json_string_field(head, "aiTitle")
            or _extract_first_prompt_from_head(head)
            or None
        )

    forked_session_id, lines = _build_fork_lines(
        transcript,
        content_replacements,
        session_id,
        up_to_message_id,
        title,
        _derive_title,
    )

    fork_path = project_dir / f"{forked_session_id}.jsonl"
    fd = os.open(fork_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, ("\n".join(lines) + "\n").encode("utf-8"))
    finally:
        os.close(fd)

    return ForkSessionResult(session_id=forked_session_id)


def _build_fork_lines(
    transcript: list[dict[str, Any]],
    content_replacements: list[Any],
    session_id: str,
    up_to_message_id: str | None,
    title: str | None,
    derive_title: Callable[[], str | None],
) -> tuple[str, list[str]]:
    """Core fork transform — remap UUIDs and produce serialized JSONL lines."""
    # Filter out sidechains (subagent sessions with separate parentUuid
    # graphs). Keep isMeta entries — they're interleaved in the main chain.
    transcript = [e for e in transcript if not e.get("isSidechain")]

    if not transcript:
        raise ValueError(f"Session {session_id} has no messages to fork")

    if up_to_message_id:
        cutoff = -1
        for i, entry in enumerate(transcript):
            if entry.get("uuid") == up_to_message_id:
                cutoff = i
                break
        if cutoff == -1:
            raise ValueError(f"Message {up_to_message_id} not found in session {session_id}")
        transcript = transcript[: cutoff + 1]

    # Include progress entries in the mapping — needed for parentUuid chain walk.
    uuid_mapping: dict[str, str] = {}
    for entry in transcript:
        uuid_mapping[entry["uuid"]] = str(uuid_mod.uuid4())

    # Filter out progress messages from written output. They're UI-only
    # chain links; not needed in a fresh fork.
    writable = [e for e in transcript if e.get("type") != "progress"]
    if not writable:
        raise ValueError(f"Session {session_id} has no messages to fork")

    by_uuid: dict[str, dict[str, Any]] = {}
    for entry in transcript:
        by_uuid[entry["uuid"]] = entry

    forked_session_id = str(uuid_mod.uuid4())

    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    lines: list[str] = []

    for i, original in enumerate(writable):
        new_uuid = uuid_mapping[original["uuid"]]

        # Resolve parentUuid, skipping progress ancestors.
        new_parent_uuid: str | None = None
        parent_id: str | None = original.get("parentUuid")
        while parent_id:
            parent = by_uuid.get(parent_id)
            if not parent:
                break
            if parent.get("type") != "progress":
                new_parent_uuid = uuid_mapping.get(parent_id)
                break
            parent_id = parent.get("parentUuid")

        # Only update timestamp on the last message (leaf detection on resume).
        timestamp = now if i == len(writable) - 1 else original.get("timestamp", now)

        # Remap logicalParentUuid (compact-boundary backpointer).
        logical_parent = original.get("logicalParentUuid")
        new_logical_parent = uuid_mapping.get(logical_parent) if logical_parent else logical_parent

        forked = {
            **original,
            "uuid": new_uuid,
            "parentUuid": new_parent_uuid,
            "logicalParentUuid": new_logical_parent,
            "sessionId": forked_session_id,
            "timestamp": timestamp,
            # Clear session-specific fields from the spread
            "isSidechain": False,
            "forkedFrom": {
                "sessionId": session_id,
                "messageUuid": original["uuid"],
            },
        }
        # Remove fields that would leak state from the source session
        for key in ("teamName", "agentName", "slug", "sourceToolAssistantUUID"):
            forked.pop(key, None)

        lines.append(json.dumps(forked, separators=(",", ":")))

    # Append content-replacement entry (if any) with the fork's sessionId.
    if content_replacements:
        lines.append(
            json.dumps(
                {
                    "type": "content-replacement",
                    "sessionId": forked_session_id,
                    "replacements": content_replacements,
                    "uuid": str(uuid_mod.uuid4()),
                    "timestamp": now,
                },
                separators=(",", ":"),
            )
        )

    # Derive title: explicit > original customTitle > original aiTitle > first
    # prompt. Suffix with " (fork)" for derived titles. listSessions reads the
    # LAST custom-title from the tail, so this entry is what surfaces.
    fork_title = title.strip() if title else None
    if not fork_title:
        fork_title = f"{derive_title() or 'Forked session'} (fork)"

    lines.append(
        json.dumps(
            {
                "type": "custom-title",
                "sessionId": forked_session_id,
                "customTitle": fork_title,
                "uuid": str(uuid_mod.uuid4()),
                "timestamp": now,
            },
            separators=(",", ":"),
        )
    )

    return forked_session_id, lines


def _find_session_file(
    session_id: str,
    directory: str | None,
) -> Path | None:
    """Find the path to a session's JSONL file."""
    result = _find_session_file_with_dir(session_id, directory)
    return result[0] if result else None


def _find_session_file_with_dir(
    session_id: str,
    directory: str | None,
) -> tuple[Path, Path] | None:
    """Find a session file and its containing project directory."""
    file_name = f"{session_id}.jsonl"

    def _try_dir(project_dir: Path) -> tuple[Path, Path] | None:
        path = project_dir / file_name
        try:
            st = path.stat()
            if st.st_size > 0:
                return (path, project_dir)
        except OSError:
            pass
        return None

    if directory:
        canonical = _canonicalize_path(directory)
        project_dir = _find_project_dir(canonical)
        if project_dir is not None:
            result = _try_dir(project_dir)
            if result:
                return result

        try:
            worktree_paths = _get_worktree_paths(canonical)
        except Exception:
            worktree_paths = []
        for wt in worktree_paths:
            if wt == canonical:
                continue
            wt_project_dir = _find_project_dir(wt)
            if wt_project_dir is not None:
                result = _try_dir(wt_project_dir)
                if result:
                    return result
        return None

    projects_dir = _get_projects_dir()
    try:
        dirents = list(projects_dir.iterdir())
    except OSError:
        return None
    for entry in dirents:
        result = _try_dir(entry)
        if result:
            return result
    return None


_TRANSCRIPT_TYPES = frozenset({"user", "assistant", "attachment", "system", "progress"})


def _derive_title_from_entries(raw: list[Any]) -> str | None:
    """Mirror the disk path's head/tail title scan over parsed entry objects."""
    custom: str | None = None
    ai: str | None = None
    for e in raw:
        if not isinstance(e, dict):
            continue
        ct = e.get("customTitle")
        if isinstance(ct, str) and ct:
            custom = ct
        at = e.get("aiTitle")
        if isinstance(at, str) and at:
            ai = at
    if custom:
        return custom
    if ai:
        return ai
    # First-prompt fallback — reuse the head extractor over a re-serialized
    # JSONL string so skip-patterns/truncation match the disk path exactly.
    jsonl = "\n".join(json.dumps(e, separators=(",", ":")) for e in raw) + "\n"
    return _extract_first_prompt_from_head(jsonl) or None


def _parse_fork_transcript(
    content: bytes, session_id: str
) -> tuple[list[dict[str, Any]], list[Any]]:
    """Parse JSONL content into transcript entries + content-replacement records."""
    transcript: list[dict[str, Any]] = []
    content_replacements: list[Any] = []

    for line in content.decode("utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            entry = json.loads(line)
        except (json.JSONDecodeError, ValueError):
            continue
        if not isinstance(entry, dict):
            continue
        entry_type = entry.get("type")
        if entry_type in _TRANSCRIPT_TYPES and isinstance(entry.get("uuid"), str):
            transcript.append(entry)
        elif (
            entry_type == "content-replacement"
            and entry.get("sessionId") == session_id
            and isinstance(entry.get("replacements"), list)
        ):
            content_replacements.extend(entry["replacements"])

    return transcript, content_replacements


def _append_to_session(
    session_id: str,
    data: str,
    directory: str | None,
) -> None:
    """Append data to an existing session file."""
    file_name = f"{session_id}.jsonl"

    if directory:
        canonical = _canonicalize_path(directory)

        # Try the exact/prefix-matched project directory first.
        project_dir = _find_project_dir(canonical)
        if project_dir is not None and _try_append(project_dir / file_name, data):
            return

        # Worktree fallback — matches list_sessions/get_session_messages.
        # Sessions may live under a different worktree root.
        try:
            worktree_paths = _get_worktree_paths(canonical)
        except Exception:
            worktree_paths = []
        for wt in worktree_paths:
            if wt == canonical:
                continue  # already tried above
            wt_project_dir = _find_project_dir(wt)
            if wt_project_dir is not None and _try_append(wt_project_dir / file_name, data):
                return

        raise FileNotFoundError(
            f"Session {session_id} not found in project directory for {directory}"
        )

    # No directory — search all project directories by trying each directly.
    projects_dir = _get_projects_dir()
    try:
        dirents = list(projects_dir.iterdir())
    except OSError as e:
        raise FileNotFoundError(f"Session {session_id} not found (no projects directory)") from e
    for entry in dirents:
        if _try_append(entry / file_name, data):
            return
    raise FileNotFoundError(f"Session {session_id} not found in any project directory")


def _try_append(path: Path, data: str) -> bool:
    """Try appending to a path."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return False
        raise
    try:
        stat = os.fstat(fd)
        if stat.st_size == 0:
            return False
        os.write(fd, data.encode("utf-8"))
        return True
    finally:
        os.close(fd)


# Explicit ranges for dangerous Unicode characters. Python's regex supports
# Unicode categories via \p{} only in the third-party `regex` module, so we
# use explicit ranges here (matching the TS fallback paths).
_UNICODE_STRIP_RE = re.compile(
    "["
    "\u200b-\u200f"  # Zero-width spaces, LTR/RTL marks
    "\u202a-\u202e"  # Directional formatting characters
    "\u2066-\u2069"  # Directional isolates
    "\ufeff"  # Byte order mark
    "\ue000-\uf8ff"  # Basic Multilingual Plane private use
    "]"
)


# Format characters (Cf category) — the ones most commonly abused for
# injection. We check this per-character since Python's re module doesn't
# support \p{Cf} without the third-party regex module.
_FORMAT_CATEGORIES = frozenset({"Cf", "Co", "Cn"})


def _sanitize_unicode(value: str) -> str:
    """Sanitize a string by removing dangerous Unicode characters."""
    current = value
    for _ in range(10):
        previous = current
        # Apply NFKC normalization to handle composed character sequences
        current = unicodedata.normalize("NFKC", current)
        # Strip Cf (format), Co (private use), Cn (unassigned) categories
        current = "".join(c for c in current if unicodedata.category(c) not in _FORMAT_CATEGORIES)
        # Explicit ranges (redundant with category check but matches TS)
        current = _UNICODE_STRIP_RE.sub("", current)
        if current == previous:
            break
    return current


def _iso_now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
