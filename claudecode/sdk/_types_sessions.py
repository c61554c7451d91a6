"""Session listing and session-store shapes of ``claude-agent-sdk``.

Declarations only, mirrored from claude-agent-sdk 0.2.189 (MIT licence, Copyright (c)
2025 Anthropic, PBC; see ``LICENSE-claude-agent-sdk`` beside this file) so that programs
which annotate with these names import them from ``claudecode.sdk.types`` unchanged.
tests/claudecode/test_sdk_surface.py compares them with the installed SDK.
"""

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Protocol, Required, TypedDict


class SessionKey(TypedDict):
    """Identifies a session transcript or subagent transcript in a store."""

    project_key: str
    session_id: str
    subpath: NotRequired[str]


class SessionStoreEntry(TypedDict, total=False):
    """One JSONL transcript line as observed by a :class:`SessionStore` adapter."""

    type: Required[str]
    uuid: str
    timestamp: str


class SessionStoreListEntry(TypedDict):
    """Entry returned by :meth:`SessionStore.list_sessions`."""

    session_id: str
    mtime: int


class SessionSummaryEntry(TypedDict):
    """Incrementally-maintained session summary."""

    session_id: str
    mtime: int
    data: dict[str, Any]


class SessionListSubkeysKey(TypedDict):
    """Key argument to :meth:`SessionStore.list_subkeys` (no ``subpath``)."""

    project_key: str
    session_id: str


SessionStoreFlushMode = Literal["batched", "eager"]


class SessionStore(Protocol):
    """Adapter for mirroring session transcripts to external storage."""

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None: ...

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None: ...

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        raise NotImplementedError

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        raise NotImplementedError

    async def delete(self, key: SessionKey) -> None:
        raise NotImplementedError

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        raise NotImplementedError


@dataclass
class SDKSessionInfo:
    """Session metadata returned by ``list_sessions()``."""

    session_id: str
    summary: str
    last_modified: int
    file_size: int | None = None
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None


@dataclass
class SessionMessage:
    """A user or assistant message from a session transcript."""

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: Any
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None
