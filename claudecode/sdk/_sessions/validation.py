"""Checks of session_store option combinations, and which optional store methods exist.

Ported from claude-agent-sdk 0.2.189, ``_internal/session_store_validation.py`` (MIT licence,
Copyright (c) 2025 Anthropic, PBC: ``claudecode/sdk/LICENSE-claude-agent-sdk``), so that
transcripts are read and written exactly as the SDK does; the tests compare both on the
real CLI's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._types_sessions import SessionStore

if TYPE_CHECKING:
    from ..options import ClaudeAgentOptions


def _store_implements(store: SessionStore, method: str) -> bool:
    """Whether ``store`` implements ``method`` (the Protocol's default raises)."""
    impl = getattr(store, method, None)
    if impl is None:
        return False
    default = getattr(SessionStore, method, None)
    return getattr(type(store), method, None) is not default


def validate_session_store_options(options: ClaudeAgentOptions) -> None:
    """Raise :class:`ValueError` for invalid ``session_store`` option combinations."""
    store = options.session_store
    if store is None:
        return

    if (
        options.continue_conversation
        and options.resume is None
        and not _store_implements(store, "list_sessions")
    ):
        # When resume is explicitly set, list_sessions() is provably never
        # called (resume wins over continue), so a minimal store is fine.
        raise ValueError(
            "continue_conversation with session_store requires the store to "
            "implement list_sessions()"
        )

    if options.enable_file_checkpointing:
        raise ValueError(
            "session_store cannot be combined with enable_file_checkpointing "
            "(checkpoints are local-disk only and would diverge from the "
            "mirrored transcript)"
        )
