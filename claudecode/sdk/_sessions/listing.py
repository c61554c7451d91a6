"""list_sessions and get_session_info: session metadata from stat and head / tail reads.

Ported from claude-agent-sdk 0.2.189, ``_internal/sessions.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from .._types_sessions import SDKSessionInfo
from .paths import (
    MAX_SANITIZED_LENGTH,
    _canonicalize_path,
    _extract_first_prompt_from_head,
    _extract_json_string_field,
    _extract_last_json_string_field,
    _find_project_dir,
    _get_projects_dir,
    _get_worktree_paths,
    _LiteSessionFile,
    _read_session_lite,
    _sanitize_path,
    _validate_uuid,
)


def _parse_session_info_from_lite(
    session_id: str,
    lite: _LiteSessionFile,
    project_path: str | None = None,
) -> SDKSessionInfo | None:
    """Parses SDKSessionInfo fields from a lite session read (head/tail/stat)."""
    head, tail, mtime, size = lite.head, lite.tail, lite.mtime, lite.size

    # Check first line for sidechain sessions
    first_newline = head.find("\n")
    first_line = head[:first_newline] if first_newline >= 0 else head
    if '"isSidechain":true' in first_line or '"isSidechain": true' in first_line:
        return None

    # User-set title (customTitle) wins over AI-generated title (aiTitle).
    # Head fallback covers short sessions where the title entry may not be in tail.
    custom_title = (
        _extract_last_json_string_field(tail, "customTitle")
        or _extract_last_json_string_field(head, "customTitle")
        or _extract_last_json_string_field(tail, "aiTitle")
        or _extract_last_json_string_field(head, "aiTitle")
        or None
    )
    first_prompt = _extract_first_prompt_from_head(head) or None
    # lastPrompt tail entry shows what the user was most recently doing.
    summary = (
        custom_title
        or _extract_last_json_string_field(tail, "lastPrompt")
        or _extract_last_json_string_field(tail, "summary")
        or first_prompt
    )

    # Skip metadata-only sessions (no title, no summary, no prompt)
    if not summary:
        return None

    git_branch = (
        _extract_last_json_string_field(tail, "gitBranch")
        or _extract_json_string_field(head, "gitBranch")
        or None
    )
    session_cwd = _extract_json_string_field(head, "cwd") or project_path or None
    # Scope tag extraction to {"type":"tag"} lines — a bare tail scan for
    # "tag" would match tool_use inputs (git tag, Docker tags, cloud resource
    # tags).
    tag_line = next(
        (ln for ln in reversed(tail.split("\n")) if ln.startswith('{"type":"tag"')),
        None,
    )
    tag = (_extract_last_json_string_field(tag_line, "tag") or None) if tag_line else None

    # created_at from the first ISO timestamp found in the head (epoch ms).
    # More reliable than stat().birthtime which is unsupported on some
    # filesystems. Scans the whole head rather than only first_line because
    # the first record may be a metadata-only entry (e.g. permission-mode)
    # with no timestamp field; the first user/assistant record that follows
    # does carry one.
    created_at: int | None = None
    first_timestamp = _extract_json_string_field(head, "timestamp")
    if first_timestamp:
        try:
            # Python 3.10's fromisoformat doesn't support trailing 'Z'
            ts = (
                first_timestamp.replace("Z", "+00:00")
                if first_timestamp.endswith("Z")
                else first_timestamp
            )
            created_at = int(datetime.fromisoformat(ts).timestamp() * 1000)
        except ValueError:
            pass

    return SDKSessionInfo(
        session_id=session_id,
        summary=summary,
        last_modified=mtime,
        file_size=size,
        custom_title=custom_title,
        first_prompt=first_prompt,
        git_branch=git_branch,
        cwd=session_cwd,
        tag=tag,
        created_at=created_at,
    )


def _read_sessions_from_dir(
    project_dir: Path, project_path: str | None = None
) -> list[SDKSessionInfo]:
    """Reads session files from a single project directory."""
    try:
        entries = list(project_dir.iterdir())
    except OSError:
        return []

    results: list[SDKSessionInfo] = []

    for entry in entries:
        name = entry.name
        if not name.endswith(".jsonl"):
            continue
        session_id = _validate_uuid(name[:-6])
        if not session_id:
            continue

        lite = _read_session_lite(entry)
        if lite is None:
            continue

        info = _parse_session_info_from_lite(session_id, lite, project_path)
        if info is not None:
            results.append(info)

    return results


def _deduplicate_by_session_id(
    sessions: list[SDKSessionInfo],
) -> list[SDKSessionInfo]:
    """Deduplicates by session_id, keeping the newest last_modified."""
    by_id: dict[str, SDKSessionInfo] = {}
    for s in sessions:
        existing = by_id.get(s.session_id)
        if existing is None or s.last_modified > existing.last_modified:
            by_id[s.session_id] = s
    return list(by_id.values())


def _apply_sort_limit_offset(
    sessions: list[SDKSessionInfo],
    limit: int | None,
    offset: int = 0,
) -> list[SDKSessionInfo]:
    """Sorts sessions by last_modified descending and applies offset + limit."""
    sessions.sort(key=lambda s: s.last_modified, reverse=True)
    if offset > 0:
        sessions = sessions[offset:]
    if limit is not None and limit > 0:
        sessions = sessions[:limit]
    return sessions


def _list_sessions_for_project(
    directory: str,
    limit: int | None,
    offset: int,
    include_worktrees: bool,
) -> list[SDKSessionInfo]:
    """Lists sessions for a specific project directory (and its worktrees)."""
    canonical_dir = _canonicalize_path(directory)

    if include_worktrees:
        try:
            worktree_paths = _get_worktree_paths(canonical_dir)
        except Exception:
            worktree_paths = []
    else:
        worktree_paths = []

    # No worktrees (or git not available / scanning disabled) —
    # just scan the single project dir
    if len(worktree_paths) <= 1:
        project_dir = _find_project_dir(canonical_dir)
        if project_dir is None:
            return []
        sessions = _read_sessions_from_dir(project_dir, canonical_dir)
        return _apply_sort_limit_offset(sessions, limit, offset)

    # Worktree-aware scanning: find all project dirs matching any worktree
    projects_dir = _get_projects_dir()
    case_insensitive = sys.platform == "win32"

    # Sort worktree paths by sanitized prefix length (longest first) so
    # more specific matches take priority over shorter ones
    indexed = []
    for wt in worktree_paths:
        sanitized = _sanitize_path(wt)
        prefix = sanitized.lower() if case_insensitive else sanitized
        indexed.append((wt, prefix))
    indexed.sort(key=lambda x: len(x[1]), reverse=True)

    try:
        all_dirents = [e for e in projects_dir.iterdir() if e.is_dir()]
    except OSError:
        # Fall back to single project dir
        project_dir = _find_project_dir(canonical_dir)
        if project_dir is None:
            return _apply_sort_limit_offset([], limit, offset)
        sessions = _read_sessions_from_dir(project_dir, canonical_dir)
        return _apply_sort_limit_offset(sessions, limit, offset)

    all_sessions: list[SDKSessionInfo] = []
    seen_dirs: set[str] = set()

    # Always include the user's actual directory (handles subdirectories
    # like /repo/packages/my-app that won't match worktree root prefixes)
    canonical_project_dir = _find_project_dir(canonical_dir)
    if canonical_project_dir is not None:
        dir_base = canonical_project_dir.name
        seen_dirs.add(dir_base.lower() if case_insensitive else dir_base)
        sessions = _read_sessions_from_dir(canonical_project_dir, canonical_dir)
        all_sessions.extend(sessions)

    for entry in all_dirents:
        dir_name = entry.name.lower() if case_insensitive else entry.name
        if dir_name in seen_dirs:
            continue

        for wt_path, prefix in indexed:
            # Only use startswith for truncated paths (>MAX_SANITIZED_LENGTH)
            # where a hash suffix follows. For short paths, require exact match
            # to avoid /root/project matching /root/project-foo.
            is_match = dir_name == prefix or (
                len(prefix) >= MAX_SANITIZED_LENGTH and dir_name.startswith(prefix + "-")
            )
            if is_match:
                seen_dirs.add(dir_name)
                sessions = _read_sessions_from_dir(entry, wt_path)
                all_sessions.extend(sessions)
                break

    deduped = _deduplicate_by_session_id(all_sessions)
    return _apply_sort_limit_offset(deduped, limit, offset)


def _list_all_sessions(limit: int | None, offset: int) -> list[SDKSessionInfo]:
    """Lists sessions across all project directories."""
    projects_dir = _get_projects_dir()

    try:
        project_dirs = [e for e in projects_dir.iterdir() if e.is_dir()]
    except OSError:
        return []

    all_sessions: list[SDKSessionInfo] = []
    for project_dir in project_dirs:
        all_sessions.extend(_read_sessions_from_dir(project_dir))

    deduped = _deduplicate_by_session_id(all_sessions)
    return _apply_sort_limit_offset(deduped, limit, offset)


def list_sessions(
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    include_worktrees: bool = True,
) -> list[SDKSessionInfo]:
    """Lists sessions with metadata extracted from stat + head/tail reads."""
    if directory:
        return _list_sessions_for_project(directory, limit, offset, include_worktrees)
    return _list_all_sessions(limit, offset)


def get_session_info(
    session_id: str,
    directory: str | None = None,
) -> SDKSessionInfo | None:
    """Reads metadata for a single session by ID."""
    uuid = _validate_uuid(session_id)
    if not uuid:
        return None
    file_name = f"{uuid}.jsonl"

    if directory:
        canonical = _canonicalize_path(directory)
        project_dir = _find_project_dir(canonical)
        if project_dir is not None:
            lite = _read_session_lite(project_dir / file_name)
            if lite is not None:
                return _parse_session_info_from_lite(uuid, lite, canonical)

        # Worktree fallback — matches get_session_messages semantics.
        # Sessions may live under a different worktree root.
        try:
            worktree_paths = _get_worktree_paths(canonical)
        except Exception:
            worktree_paths = []
        for wt in worktree_paths:
            if wt == canonical:
                continue
            wt_project_dir = _find_project_dir(wt)
            if wt_project_dir is not None:
                lite = _read_session_lite(wt_project_dir / file_name)
                if lite is not None:
                    return _parse_session_info_from_lite(uuid, lite, wt)

        return None

    # No directory — search all project directories for the session file.
    projects_dir = _get_projects_dir()
    try:
        dirents = [e for e in projects_dir.iterdir() if e.is_dir()]
    except OSError:
        return None
    for entry in dirents:
        lite = _read_session_lite(entry / file_name)
        if lite is not None:
            return _parse_session_info_from_lite(uuid, lite)
    return None
