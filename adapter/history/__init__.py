"""adapter.history: the CLI's stored transcripts, listed cheaply, loaded as events, resumed.

The CLI writes every session to ``<config dir>/projects/<project slug>/<session id>.jsonl``;
this package reads those files and nothing else (pure apart from reading them)::

    for s in list_sessions(cwd):        # past sessions, newest first
        print(s.session_id, s.title, s.message_count)
    events = load_events(find_session_file(s.session_id))   # the adapter's events
    spec = resume_spec(s.session_id)    # a SessionSpec that resumes it on any backend

The listing is :mod:`adapter.history.index`, the loading :mod:`adapter.history.events`,
resume specs :mod:`adapter.history.transcripts`, what the user typed (as the CLI wraps it)
:mod:`adapter.history.usertext`. :mod:`adapter.chat` shows a loaded transcript exactly like
a live session.
"""

from __future__ import annotations

from .transcripts import (
    HistoryIndex,
    HistoryNotFoundError,
    HistorySession,
    config_dir,
    find_session_file,
    list_sessions,
    load_events,
    load_prompt_images,
    project_slug,
    resume_spec,
)
from .usertext import UserText, parse_user_text

__all__ = (
    "config_dir",
    "find_session_file",
    "HistoryIndex",
    "HistoryNotFoundError",
    "HistorySession",
    "list_sessions",
    "load_events",
    "load_prompt_images",
    "parse_user_text",
    "project_slug",
    "resume_spec",
    "UserText",
)
