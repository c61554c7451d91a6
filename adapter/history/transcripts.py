"""Past sessions from the CLI's own transcript files, listed cheaply and loaded as events.

The CLI writes every session to ``<config dir>/projects/<project slug>/<session id>.jsonl``
(config dir: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``; the slug is the working directory
with every character other than ``A-Z a-z 0-9`` replaced by ``-``). One JSON object per line:
``user`` / ``assistant`` messages (with ``uuid``, ``timestamp``, ``cwd``, ``gitBranch``),
and many bookkeeping lines (``queue-operation``, ``attachment``, ``api-request`` ...,
some of them large).

:func:`list_sessions` reads each file in chunks of bytes and decodes only the few lines it
needs (the first real prompt for the title, the newest lines for the model, branch and last
activity); messages are counted without decoding. A :class:`HistoryIndex` remembers where
it stopped in each file, so listing again reads only what was appended. Partial last lines,
garbage and unknown line types are skipped.

:func:`load_events` turns a transcript into the adapter's events (user messages, text,
reasoning, tool calls and their results through :mod:`normalize`, compactions), so
:class:`~adapter.chat.ChatView` shows a stored session exactly like a live one. Resume one
with :func:`resume_spec` (a :class:`~adapter.SessionSpec` for any backend).

**Compaction.** The CLI writes a compaction as a ``system`` / ``compact_boundary`` line, then
the summary it continues from (a ``user`` line marked ``isCompactSummary``: not something
anyone wrote, so not shown), then, for ``/compact``, the command and its
``<local-command-stdout>``. Live, the session shows the ``/compact`` prompt first and the
:class:`~adapter.events.CompactBoundary` after it, and the CLI sends the command's output
only as a replay (not shown). So a stored boundary becomes its event after the ``/compact``
line that follows it (whose output is then left out), or where it stands when no
``/compact`` follows (an automatic compaction).

**Local commands.** A command the CLI answers itself (``/context``, ``/model`` without an
argument, ``/cost``) is stored as the command (a ``user`` line), a ``<local-command-caveat>``
(meta, not shown) and a ``system`` / ``local_command`` line holding its
``<local-command-stdout>``. Live, the CLI answers such a command with a ``<synthetic>``
assistant message carrying that output, so the output becomes the assistant text it was.
An alias is stored under the command's own name (``/cost`` as ``/usage``); the
``queue-operation`` lines keep the prompt as it was sent, so the command shows as typed.

The listing is :mod:`adapter.history.index`, the loading
:mod:`adapter.history.events`; this module re-exports both and adds :func:`resume_spec`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..backend import SessionSpec
from ._lines import iter_lines
from .events import load_events, load_prompt_images
from .index import (
    HistoryIndex,
    HistoryNotFoundError,
    HistorySession,
    config_dir,
    find_session_file,
    list_sessions,
    project_slug,
)

__all__ = (
    "HistoryIndex",
    "HistoryNotFoundError",
    "HistorySession",
    "config_dir",
    "find_session_file",
    "list_sessions",
    "load_events",
    "load_prompt_images",
    "project_slug",
    "resume_spec",
)


def resume_spec(
    session_id: str,
    *,
    at: str | None = None,
    fork: bool = False,
    cwd: str | None = None,
    config: Path | None = None,
    **spec: Any,
) -> SessionSpec:
    """A :class:`~adapter.SessionSpec` that resumes a stored session (checked to exist).

    ``at``: a message uuid to resume from (``--resume-session-at``); ``fork``: continue under a
    new session id. ``cwd`` defaults to the working directory the transcript recorded (the CLI
    only finds a session from its own project directory). Other keywords go to the spec.

    Raises:
        HistoryNotFoundError: there is no such stored session.
    """
    path = find_session_file(session_id, cwd, config=config)
    if cwd is None:
        for line in iter_lines(path):
            if line.cwd:
                cwd = line.cwd
                break
    return SessionSpec(cwd=cwd, resume=session_id, resume_session_at=at, fork=fork, **spec)
