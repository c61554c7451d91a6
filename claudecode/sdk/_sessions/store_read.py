"""The *_from_store readers: listing and messages of sessions kept in a SessionStore.

Ported from claude-agent-sdk 0.2.189, ``_internal/sessions.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

import anyio

from ..._log import get_logger
from .._types_sessions import SDKSessionInfo, SessionKey, SessionMessage, SessionStore
from .chain import _TRANSCRIPT_ENTRY_TYPES, _entries_to_session_messages, _TranscriptEntry
from .listing import _apply_sort_limit_offset, _parse_session_info_from_lite
from .paths import (
    _STORE_LIST_LOAD_CONCURRENCY,
    LITE_READ_BUF_SIZE,
    _canonicalize_path,
    _LiteSessionFile,
    _sanitize_path,
    _validate_uuid,
)
from .subagents import (
    _entries_to_subagent_messages,
    _parent_ids_from_agent_metadata,
    _split_agent_metadata,
    project_key_for_directory,
)
from .summary import summary_entry_to_sdk_info
from .validation import _store_implements

_log = get_logger("claudecode.sdk")


def _entries_to_jsonl(entries: list[Any]) -> str:
    """Serialize store entries to a JSONL string (one ``json.dumps`` per line)."""

    def _type_first(e: Any) -> Any:
        if isinstance(e, dict) and "type" in e:
            return {"type": e["type"], **e}
        return e

    return "\n".join(json.dumps(_type_first(e), separators=(",", ":")) for e in entries) + "\n"


def _jsonl_to_lite(jsonl: str, mtime: int) -> _LiteSessionFile:
    """Build the head/tail/size lite shape from an in-memory JSONL string."""
    buf = jsonl.encode("utf-8")
    size = len(buf)
    head = buf[:LITE_READ_BUF_SIZE].decode("utf-8", errors="replace")
    tail = (
        buf[max(0, size - LITE_READ_BUF_SIZE) :].decode("utf-8", errors="replace")
        if size > LITE_READ_BUF_SIZE
        else head
    )
    return _LiteSessionFile(mtime=mtime, size=size, head=head, tail=tail)


def _mtime_from_jsonl_tail(jsonl: str) -> int:
    """Best-effort mtime: parse the last entry's ``timestamp`` field."""
    trimmed = jsonl.rstrip()
    last_line = trimmed[trimmed.rfind("\n") + 1 :]
    try:
        obj = json.loads(last_line)
    except (json.JSONDecodeError, ValueError):
        obj = None
    if isinstance(obj, dict):
        ts = obj.get("timestamp")
        if isinstance(ts, str):
            try:
                norm = ts.replace("Z", "+00:00") if ts.endswith("Z") else ts
                return int(datetime.fromisoformat(norm).timestamp() * 1000)
            except ValueError:
                pass
    return int(time.time() * 1000)


def _filter_transcript_entries(entries: list[Any]) -> list[_TranscriptEntry]:
    """Filter store-loaded entries to transcript message types with a ``uuid``."""
    result: list[_TranscriptEntry] = []
    for e in entries:
        if (
            isinstance(e, dict)
            and e.get("type") in _TRANSCRIPT_ENTRY_TYPES
            and isinstance(e.get("uuid"), str)
        ):
            result.append(e)
    return result


async def _load_store_entries_as_jsonl(
    store: SessionStore, session_id: str, directory: str | None
) -> str | None:
    """Load entries from a SessionStore and serialize to a JSONL string."""
    project_key = project_key_for_directory(directory)
    key: SessionKey = {"project_key": project_key, "session_id": session_id}
    entries = await store.load(key)
    if not entries:
        return None
    return _entries_to_jsonl(entries)


async def _derive_infos_via_load(
    session_store: SessionStore,
    listing: list[Any],
    directory: str | None,
    project_path: str,
) -> list[SDKSessionInfo]:
    """``SDKSessionInfo`` for each ``listing`` entry, from ``store.load()`` + a lite parse."""
    limiter = anyio.CapacityLimiter(_STORE_LIST_LOAD_CONCURRENCY)
    settled: list[str | Exception | None] = [None] * len(listing)

    async def _bounded_load(i: int, sid: str) -> None:
        async with limiter:
            try:
                settled[i] = await _load_store_entries_as_jsonl(session_store, sid, directory)
            except Exception as e:
                settled[i] = e

    async with anyio.create_task_group() as tg:
        for i, e in enumerate(listing):
            tg.start_soon(_bounded_load, i, e["session_id"])

    results: list[SDKSessionInfo] = []
    for entry, outcome in zip(listing, settled, strict=True):
        sid = entry["session_id"]
        mtime = entry["mtime"]
        if isinstance(outcome, BaseException):
            results.append(SDKSessionInfo(session_id=sid, summary="", last_modified=mtime))
            continue
        if outcome is None:
            continue
        parsed = _parse_session_info_from_lite(sid, _jsonl_to_lite(outcome, mtime), project_path)
        if parsed is None:
            # Sidechain or no extractable summary — drop, matching the
            # filesystem path.
            continue
        parsed.last_modified = mtime
        results.append(parsed)
    return results


async def list_sessions_from_store(
    session_store: SessionStore,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SDKSessionInfo]:
    """List sessions from a :class:`SessionStore`."""
    project_path = _canonicalize_path(str(directory) if directory is not None else ".")
    project_key = _sanitize_path(project_path)
    has_list_sessions = _store_implements(session_store, "list_sessions")

    # Fast path: if the store maintains incremental summaries, fetch them in
    # one call instead of N per-session load()s.
    if _store_implements(session_store, "list_session_summaries"):
        try:
            summaries = await session_store.list_session_summaries(project_key)
        except NotImplementedError:
            pass
        else:
            # Build a unified slot list. Fresh summaries (mtime >= the
            # session's current mtime from list_sessions) get their info up
            # front; sessions present in list_sessions() but missing OR with a
            # stale sidecar (summary.mtime < known mtime) get a placeholder
            # slot routed through the same gap-fill path so the fold is
            # recomputed from source entries.
            # Summary-backed sidechain/empty sessions are dropped here (free —
            # already determined) so they don't consume offset/limit positions,
            # matching the disk and slow-path filter-then-paginate semantics.
            if has_list_sessions:
                listing = list(await session_store.list_sessions(project_key))
                known_mtimes = {e["session_id"]: e["mtime"] for e in listing}
            else:
                listing = []
                known_mtimes = {}
                # Without list_sessions, sessions lacking a summary sidecar are omitted.
                _log.debug("sdk.store_summaries_without_listing")

            slots: list[dict[str, Any]] = []
            fresh_summary_ids: set[str] = set()
            for s in summaries:
                sid = s["session_id"]
                if has_list_sessions:
                    known = known_mtimes.get(sid)
                    if known is None:
                        # Summary for a session list_sessions() no longer
                        # reports — drop it.
                        continue
                    if s["mtime"] < known:
                        # Stale sidecar — let gap-fill re-fold from source.
                        continue
                info = summary_entry_to_sdk_info(s, project_path)
                if info is None:
                    fresh_summary_ids.add(sid)
                    continue
                slots.append({"mtime": s["mtime"], "info": info})
                fresh_summary_ids.add(sid)
            if has_list_sessions:
                slots.extend(
                    {"mtime": e["mtime"], "session_id": e["session_id"], "info": None}
                    for e in listing
                    if e["session_id"] not in fresh_summary_ids
                )

            # Paginate BEFORE per-session load so gap-fill load() count is
            # bounded by page size, not total missing — 500 sessions lacking
            # sidecars with limit=10 issues at most 10 load()s, not 500.
            slots.sort(key=lambda sl: sl["mtime"], reverse=True)
            # Mirror _apply_sort_limit_offset's guards so negative/zero
            # offset and non-positive limit behave identically to the slow
            # and disk paths.
            page = slots[offset:] if offset > 0 else slots
            if limit is not None and limit > 0:
                page = page[:limit]

            to_fill = [sl for sl in page if sl["info"] is None]
            if to_fill:
                filled = await _derive_infos_via_load(
                    session_store, to_fill, directory, project_path
                )
                by_sid = {f.session_id: f for f in filled}
                for sl in to_fill:
                    sl["info"] = by_sid.get(sl["session_id"])

            # Gap-fill placeholders that resolved to None (sidechain / no
            # extractable summary after load) are dropped here, AFTER
            # pagination — that case alone can short-page. Summary-backed
            # slots were already pre-filtered above, so a store with complete
            # and fresh sidecars never short-pages; a present-but-stale
            # sidecar is routed through gap-fill (same as a missing one) and
            # can short-page if load() yields no extractable summary.
            return [sl["info"] for sl in page if sl["info"] is not None]

    if not has_list_sessions:
        raise ValueError(
            "session_store implements neither list_session_summaries() nor "
            "list_sessions() -- cannot list sessions. Provide a store with at "
            "least one of those methods."
        )
    # Copy — store.list_sessions() may return a reference to internal state.
    listing = list(await session_store.list_sessions(project_key))
    # Derive a real summary per session by loading its entries and reusing
    # the filesystem path's lite-parse. Filtering (sidechain/empty drop)
    # happens before pagination so ``limit``/``offset`` index the same
    # filtered set as the disk path.
    results = await _derive_infos_via_load(session_store, listing, directory, project_path)
    return _apply_sort_limit_offset(results, limit, offset)


async def get_session_info_from_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
) -> SDKSessionInfo | None:
    """Read metadata for a single session from a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        return None
    jsonl = await _load_store_entries_as_jsonl(session_store, session_id, directory)
    if jsonl is None:
        return None
    lite = _jsonl_to_lite(jsonl, _mtime_from_jsonl_tail(jsonl))
    project_path = _canonicalize_path(str(directory) if directory is not None else ".")
    return _parse_session_info_from_lite(session_id, lite, project_path)


async def get_session_messages_from_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """Read a session's conversation messages from a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        return []
    project_key = project_key_for_directory(directory)
    key: SessionKey = {"project_key": project_key, "session_id": session_id}
    entries = await session_store.load(key)
    if not entries:
        return []
    return _entries_to_session_messages(_filter_transcript_entries(entries), limit, offset)


async def list_subagents_from_store(
    session_store: SessionStore,
    session_id: str,
    directory: str | None = None,
) -> list[str]:
    """List subagent IDs for a session from a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        return []
    if not _store_implements(session_store, "list_subkeys"):
        raise ValueError(
            "session_store does not implement list_subkeys() -- cannot list "
            "subagents. Provide a store with a list_subkeys() method."
        )
    project_key = project_key_for_directory(directory)
    subkeys = await session_store.list_subkeys(
        {"project_key": project_key, "session_id": session_id}
    )
    seen: set[str] = set()
    ids: list[str] = []
    for subpath in subkeys:
        if not subpath.startswith("subagents/"):
            continue
        last = subpath.rsplit("/", 1)[-1]
        if last.startswith("agent-"):
            agent_id = last[len("agent-") :]
            if agent_id not in seen:
                seen.add(agent_id)
                ids.append(agent_id)
    return ids


async def get_subagent_messages_from_store(
    session_store: SessionStore,
    session_id: str,
    agent_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """Read a subagent's conversation messages from a :class:`SessionStore`."""
    if not _validate_uuid(session_id):
        return []
    if not agent_id:
        return []
    project_key = project_key_for_directory(directory)

    subpath = f"subagents/agent-{agent_id}"
    if _store_implements(session_store, "list_subkeys"):
        subkeys = await session_store.list_subkeys(
            {"project_key": project_key, "session_id": session_id}
        )
        target = f"agent-{agent_id}"
        match = next(
            (
                sk
                for sk in subkeys
                if sk.startswith("subagents/") and sk.rsplit("/", 1)[-1] == target
            ),
            None,
        )
        if match is None:
            return []
        subpath = match

    key: SessionKey = {
        "project_key": project_key,
        "session_id": session_id,
        "subpath": subpath,
    }
    entries = await session_store.load(key)
    if not entries:
        return []

    # The synthetic agent_metadata entry (the store's copy of the .meta.json
    # sidecar) records which Agent tool_use spawned this subagent. Recover
    # the parent ids from it — last one wins, since the metadata is
    # rewritten on resume — then drop it: it is not a transcript line.
    meta_entry, transcript = _split_agent_metadata(entries)
    if not transcript:
        return []
    parent_tool_use_id, parent_agent_id = _parent_ids_from_agent_metadata(meta_entry)

    return _entries_to_subagent_messages(
        _filter_transcript_entries(transcript),
        limit,
        offset,
        parent_tool_use_id,
        parent_agent_id,
    )
