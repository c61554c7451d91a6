"""adapter.chat: the chat view model and the CLI's stored session history.

Pure and sans-IO (history reads files, nothing else)::

    view = ChatView()
    delta = view.apply(events)          # live events from a subscription ...
    view.apply(load_events(path))       # ... or a stored session
    view.snapshot()                     # everything a UI draws, JSON-serializable

    for s in list_sessions(cwd):        # past sessions, newest first
        print(s.session_id, s.title, s.message_count)
    spec = resume_spec(s.session_id)    # a SessionSpec that resumes it on any backend
"""

from __future__ import annotations

from .entries import (
    AssistantText,
    ChatEntry,
    CommandEntry,
    ErrorEntry,
    InterruptEntry,
    NoticeEntry,
    PermissionEntry,
    ReadGroup,
    ReasoningEntry,
    ToolEntry,
    UserEntry,
)
from .history import (
    HistoryIndex,
    HistoryNotFoundError,
    HistorySession,
    config_dir,
    find_session_file,
    list_sessions,
    load_events,
    project_slug,
    resume_spec,
)
from .usertext import UserText, parse_user_text
from .view import ChatDelta, ChatSnapshot, ChatUsage, ChatView

__all__ = (
    "AssistantText",
    "ChatDelta",
    "ChatEntry",
    "ChatSnapshot",
    "ChatUsage",
    "ChatView",
    "CommandEntry",
    "config_dir",
    "ErrorEntry",
    "find_session_file",
    "HistoryIndex",
    "HistoryNotFoundError",
    "HistorySession",
    "InterruptEntry",
    "list_sessions",
    "load_events",
    "NoticeEntry",
    "parse_user_text",
    "PermissionEntry",
    "project_slug",
    "ReadGroup",
    "ReasoningEntry",
    "resume_spec",
    "ToolEntry",
    "UserEntry",
    "UserText",
)
