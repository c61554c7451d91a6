"""get_session_messages: a transcript's conversation chain as SessionMessage objects.

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
from .paths import (
    _canonicalize_path,
    _find_project_dir,
    _get_projects_dir,
    _get_worktree_paths,
    _validate_uuid,
)

# Transcript entry types that carry uuid + parentUuid chain links.
_TRANSCRIPT_ENTRY_TYPES = frozenset({"user", "assistant", "progress", "system", "attachment"})


# Internal type for parsed JSONL transcript entries — mirrors the TS
# TranscriptEntry type but as a loose dict (fields: type, uuid, parentUuid,
# sessionId, message, isSidechain, isMeta, isCompactSummary, teamName).
_TranscriptEntry = dict[str, Any]


def _try_read_session_file(project_dir: Path, file_name: str) -> str | None:
    """Tries to read a session JSONL file from a project directory."""
    try:
        return (project_dir / file_name).read_text(encoding="utf-8")
    except OSError:
        return None


def _read_session_file(session_id: str, directory: str | None) -> str | None:
    """Finds and reads the session JSONL file."""
    file_name = f"{session_id}.jsonl"

    if directory:
        canonical_dir = _canonicalize_path(directory)

        # Try the exact/prefix-matched project directory first
        project_dir = _find_project_dir(canonical_dir)
        if project_dir is not None:
            content = _try_read_session_file(project_dir, file_name)
            if content:
                return content

        # Try worktree paths — sessions may live under a different worktree root
        try:
            worktree_paths = _get_worktree_paths(canonical_dir)
        except Exception:
            worktree_paths = []

        for wt in worktree_paths:
            if wt == canonical_dir:
                continue  # already tried above
            wt_project_dir = _find_project_dir(wt)
            if wt_project_dir is not None:
                content = _try_read_session_file(wt_project_dir, file_name)
                if content:
                    return content

        return None

    # No directory provided — search all project directories
    projects_dir = _get_projects_dir()
    try:
        dirents = list(projects_dir.iterdir())
    except OSError:
        return None

    for entry in dirents:
        content = _try_read_session_file(entry, file_name)
        if content:
            return content

    return None


def _parse_transcript_entries(content: str) -> list[_TranscriptEntry]:
    """Parses JSONL content into transcript entries."""
    entries: list[_TranscriptEntry] = []
    start = 0
    length = len(content)

    while start < length:
        end = content.find("\n", start)
        if end == -1:
            end = length

        line = content[start:end].strip()
        start = end + 1
        if not line:
            continue

        try:
            entry = json.loads(line)
        except (json.JSONDecodeError, ValueError):
            continue

        if not isinstance(entry, dict):
            continue
        entry_type = entry.get("type")
        if entry_type in _TRANSCRIPT_ENTRY_TYPES and isinstance(entry.get("uuid"), str):
            entries.append(entry)

    return entries


def _build_conversation_chain(
    entries: list[_TranscriptEntry],
) -> list[_TranscriptEntry]:
    """Builds the conversation chain by finding the leaf and walking parentUuid."""
    if not entries:
        return []

    # Index by uuid for O(1) parent lookup
    by_uuid: dict[str, _TranscriptEntry] = {}
    for entry in entries:
        by_uuid[entry["uuid"]] = entry

    # Build index of entry positions (file order) for tie-breaking
    entry_index: dict[str, int] = {}
    for i, entry in enumerate(entries):
        entry_index[entry["uuid"]] = i

    # Find terminal messages (no children point to them via parentUuid)
    parent_uuids: set[str] = set()
    for entry in entries:
        parent = entry.get("parentUuid")
        if parent:
            parent_uuids.add(parent)

    terminals = [e for e in entries if e["uuid"] not in parent_uuids]

    # From each terminal, walk back to find the nearest user/assistant leaf
    leaves: list[_TranscriptEntry] = []
    for terminal in terminals:
        walk_cur: _TranscriptEntry | None = terminal
        walk_seen: set[str] = set()
        while walk_cur is not None:
            uid = walk_cur["uuid"]
            if uid in walk_seen:
                break
            walk_seen.add(uid)
            if walk_cur.get("type") in ("user", "assistant"):
                leaves.append(walk_cur)
                break
            parent = walk_cur.get("parentUuid")
            walk_cur = by_uuid.get(parent) if parent else None

    if not leaves:
        return []

    # Pick the leaf from the main chain (not sidechain/team/meta), preferring
    # the highest position in the entries array (most recent in file)
    main_leaves = [
        leaf
        for leaf in leaves
        if not leaf.get("isSidechain") and not leaf.get("teamName") and not leaf.get("isMeta")
    ]

    def _pick_best(candidates: list[_TranscriptEntry]) -> _TranscriptEntry:
        best = candidates[0]
        best_idx = entry_index.get(best["uuid"], -1)
        for cur in candidates[1:]:
            cur_idx = entry_index.get(cur["uuid"], -1)
            if cur_idx > best_idx:
                best = cur
                best_idx = cur_idx
        return best

    leaf = _pick_best(main_leaves) if main_leaves else _pick_best(leaves)

    # Walk from leaf to root via parentUuid
    chain: list[_TranscriptEntry] = []
    chain_seen: set[str] = set()
    chain_cur: _TranscriptEntry | None = leaf
    while chain_cur is not None:
        uid = chain_cur["uuid"]
        if uid in chain_seen:
            break
        chain_seen.add(uid)
        chain.append(chain_cur)
        parent = chain_cur.get("parentUuid")
        chain_cur = by_uuid.get(parent) if parent else None

    chain.reverse()
    return _recover_orphaned_parallel_tool_results(by_uuid, chain, chain_seen)


def _assistant_message_id(entry: _TranscriptEntry) -> str | None:
    """Returns the API ``message.id`` of an assistant entry, if it has one."""
    if entry.get("type") != "assistant":
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    message_id = message.get("id")
    return message_id if isinstance(message_id, str) and message_id else None


def _content_block_ids(entry: _TranscriptEntry, block_type: str, id_field: str) -> list[str]:
    """Returns ``id_field`` of each ``block_type`` content block in an entry."""
    message = entry.get("message")
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == block_type:
            block_id = block.get(id_field)
            if isinstance(block_id, str):
                ids.append(block_id)
    return ids


def _is_tool_result_entry(entry: _TranscriptEntry) -> bool:
    """Returns True for a user entry with a parent that carries a tool_result."""
    if entry.get("type") != "user":
        return False
    parent = entry.get("parentUuid")
    if not isinstance(parent, str) or not parent:
        return False
    message = entry.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if not isinstance(content, list):
        return False
    return any(isinstance(block, dict) and block.get("type") == "tool_result" for block in content)


def _same_writer(a: _TranscriptEntry, b: _TranscriptEntry) -> bool:
    """Returns True if two entries were written by the same (sub)agent."""
    return bool(a.get("isSidechain")) == bool(b.get("isSidechain")) and a.get("agentId") == b.get(
        "agentId"
    )


def _timestamp_sort_key(entry: _TranscriptEntry) -> str:
    timestamp = entry.get("timestamp")
    return timestamp if isinstance(timestamp, str) else ""


def _recover_orphaned_parallel_tool_results(
    by_uuid: dict[str, _TranscriptEntry],
    chain: list[_TranscriptEntry],
    seen: set[str],
) -> list[_TranscriptEntry]:
    """Puts back the tool calls and results a parallel turn left off the chain."""
    chain_assistants = [e for e in chain if e.get("type") == "assistant"]
    if not chain_assistants:
        return chain

    # Anchor = the last on-chain entry of each response. chain_assistants is
    # in chain order, so later entries overwrite earlier ones.
    anchor_by_message_id: dict[str, _TranscriptEntry] = {}
    for entry in chain_assistants:
        message_id = _assistant_message_id(entry)
        if message_id:
            anchor_by_message_id[message_id] = entry
    if not anchor_by_message_id:
        return chain

    # Group every assistant entry by response, and record which entry made
    # each tool call. A tool_use id claimed by two different responses is
    # ambiguous (None) and is never used to place a result.
    siblings_by_message_id: dict[str, list[_TranscriptEntry]] = {}
    call_owner: dict[str, _TranscriptEntry | None] = {}
    tool_result_entries: list[_TranscriptEntry] = []
    for entry in by_uuid.values():
        message_id = _assistant_message_id(entry)
        if message_id:
            siblings_by_message_id.setdefault(message_id, []).append(entry)
            for call_id in _content_block_ids(entry, "tool_use", "id"):
                if call_id not in call_owner:
                    call_owner[call_id] = entry
                    continue
                owner = call_owner[call_id]
                same_response = owner is not None and _assistant_message_id(owner) == message_id
                call_owner[call_id] = entry if same_response else None
        elif _is_tool_result_entry(entry):
            tool_result_entries.append(entry)

    # Index each tool result under the assistant entries it may belong to:
    # its parent, its sourceToolAssistantUUID, and the owner of each call it
    # answers. The last two only count when written by the same agent.
    results_by_assistant: dict[str, list[_TranscriptEntry]] = {}
    for result in tool_result_entries:
        results_by_assistant.setdefault(result["parentUuid"], []).append(result)
        source = result.get("sourceToolAssistantUUID")
        if isinstance(source, str):
            source_entry = by_uuid.get(source)
            if source_entry is not None and _same_writer(result, source_entry):
                results_by_assistant.setdefault(source, []).append(result)
        for call_id in _content_block_ids(result, "tool_result", "tool_use_id"):
            owner = call_owner.get(call_id)
            if owner is not None and _same_writer(result, owner):
                results_by_assistant.setdefault(owner["uuid"], []).append(result)

    # Only needed to place strays, which are rare: built on first use.
    answered_on_chain: set[str] | None = None
    file_position: dict[str, int] | None = None

    processed: set[str] = set()
    inserts: dict[str, list[_TranscriptEntry]] = {}
    for assistant in chain_assistants:
        message_id = _assistant_message_id(assistant)
        if not message_id or message_id in processed:
            continue
        processed.add(message_id)

        group = siblings_by_message_id.get(message_id, [assistant])
        member_uuids = {member["uuid"] for member in group}
        orphaned_siblings = [m for m in group if m["uuid"] not in seen]
        orphaned_results: list[_TranscriptEntry] = []
        # Results indexed under this response whose parent is not one of its
        # entries: recovered only if they answer a still-unanswered call.
        strays: list[_TranscriptEntry] = []
        collected: set[str] = set()
        for member in group:
            for result in results_by_assistant.get(member["uuid"], ()):
                if result["uuid"] in seen or result["uuid"] in collected:
                    continue
                collected.add(result["uuid"])
                if result["parentUuid"] in member_uuids:
                    orphaned_results.append(result)
                else:
                    strays.append(result)

        if strays:
            if answered_on_chain is None or file_position is None:
                answered_on_chain = {
                    call_id
                    for entry in chain
                    for call_id in _content_block_ids(entry, "tool_result", "tool_use_id")
                }
                file_position = {uid: i for i, uid in enumerate(by_uuid)}
            answered = set(answered_on_chain)
            for result in orphaned_results:
                answered.update(_content_block_ids(result, "tool_result", "tool_use_id"))
            positions = file_position
            strays.sort(key=lambda e: positions[e["uuid"]])
            for result in strays:
                call_ids = _content_block_ids(result, "tool_result", "tool_use_id")
                answers_open_call = False
                for call_id in call_ids:
                    owner = call_owner.get(call_id)
                    if (
                        call_id not in answered
                        and owner is not None
                        and owner["uuid"] in member_uuids
                    ):
                        answers_open_call = True
                        break
                if not answers_open_call:
                    continue
                answered.update(call_ids)
                orphaned_results.append(result)

        if not orphaned_siblings and not orphaned_results:
            continue

        # Timestamp order keeps content-block and completion order. The sort
        # is stable, so on a tie siblings keep file order and results keep
        # the order of the calls they answer.
        orphaned_siblings.sort(key=_timestamp_sort_key)
        orphaned_results.sort(key=_timestamp_sort_key)
        recovered = orphaned_siblings + orphaned_results
        for entry in recovered:
            seen.add(entry["uuid"])
        inserts[anchor_by_message_id[message_id]["uuid"]] = recovered

    if not inserts:
        return chain

    result_chain: list[_TranscriptEntry] = []
    for entry in chain:
        result_chain.append(entry)
        result_chain.extend(inserts.get(entry["uuid"], ()))
    return result_chain


def _is_visible_message(entry: _TranscriptEntry) -> bool:
    """Returns True if the entry should be included in the returned messages."""
    entry_type = entry.get("type")
    if entry_type != "user" and entry_type != "assistant":
        return False
    if entry.get("isMeta"):
        return False
    if entry.get("isSidechain"):
        return False
    # Note: isCompactSummary messages are intentionally included. They contain
    # the summarized content from compacted conversations and are the only
    # representation of that content post-compaction. This matches VS Code IDE
    # behavior (transcriptToSessionMessage does not filter them).
    return not entry.get("teamName")


def _to_session_message(
    entry: _TranscriptEntry,
    parent_tool_use_id: str | None = None,
    parent_agent_id: str | None = None,
) -> SessionMessage:
    """Converts a transcript entry dict into a SessionMessage."""
    entry_type = entry.get("type")
    # Narrow to the Literal type — _is_visible_message already guarantees
    # this is "user" or "assistant".
    msg_type: str = "user" if entry_type == "user" else "assistant"
    return SessionMessage(
        type=msg_type,  # type: ignore[arg-type]
        uuid=entry.get("uuid", ""),
        session_id=entry.get("sessionId", ""),
        message=entry.get("message"),
        parent_tool_use_id=parent_tool_use_id,
        parent_agent_id=parent_agent_id,
    )


def get_session_messages(
    session_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """Reads a session's conversation messages from its JSONL transcript file."""
    if not _validate_uuid(session_id):
        return []

    content = _read_session_file(session_id, directory)
    if not content:
        return []

    entries = _parse_transcript_entries(content)
    return _entries_to_session_messages(entries, limit, offset)


def _entries_to_session_messages(
    entries: list[_TranscriptEntry],
    limit: int | None,
    offset: int,
) -> list[SessionMessage]:
    """Builds the conversation chain from parsed entries and applies paging."""
    chain = _build_conversation_chain(entries)
    visible = [e for e in chain if _is_visible_message(e)]
    messages = [_to_session_message(e) for e in visible]

    # Apply offset and limit
    if limit is not None and limit > 0:
        return messages[offset : offset + limit]
    if offset > 0:
        return messages[offset:]
    return messages
