"""The SDK's session functions over the CLI's transcripts, on disk or in a ``SessionStore``.

The CLI writes each session to ``<config dir>/projects/<sanitized cwd>/<session id>.jsonl``
(config dir: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``). These modules list, read, rename,
tag, delete and fork those files, and do the same through a store, as ``claude-agent-sdk``
does (they are ported from it; see each module).
"""

from .chain import get_session_messages
from .importing import import_session_to_store
from .listing import get_session_info, list_sessions
from .memory_store import InMemorySessionStore
from .mutations import (
    ForkSessionResult,
    delete_session,
    fork_session,
    rename_session,
    tag_session,
)
from .mutations_store import (
    delete_session_via_store,
    fork_session_via_store,
    rename_session_via_store,
    tag_session_via_store,
)
from .store_read import (
    get_session_info_from_store,
    get_session_messages_from_store,
    get_subagent_messages_from_store,
    list_sessions_from_store,
    list_subagents_from_store,
)
from .subagents import get_subagent_messages, list_subagents, project_key_for_directory
from .summary import fold_session_summary

__all__ = (
    "ForkSessionResult",
    "InMemorySessionStore",
    "delete_session",
    "delete_session_via_store",
    "fold_session_summary",
    "fork_session",
    "fork_session_via_store",
    "get_session_info",
    "get_session_info_from_store",
    "get_session_messages",
    "get_session_messages_from_store",
    "get_subagent_messages",
    "get_subagent_messages_from_store",
    "import_session_to_store",
    "list_sessions",
    "list_sessions_from_store",
    "list_subagents",
    "list_subagents_from_store",
    "project_key_for_directory",
    "rename_session",
    "rename_session_via_store",
    "tag_session",
    "tag_session_via_store",
)
