"""What ``options.session_store`` adds to a query or client, as in the SDK.

Before the CLI starts, a resume (or continue) is served from the store: the stored session
is written to a temporary config dir the CLI resumes from, so a session recorded on one
machine resumes on another. While it runs, the CLI is started with ``--session-mirror`` and
writes every transcript line a second time as a ``transcript_mirror`` frame on stdout;
those frames are taken out of the message stream and appended to the store in batches,
flushed before each result is handed on. A failed append is reported as a
:class:`MirrorErrorMessage` in the stream and the session goes on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec

from .. import messages as m
from ._sessions.mirror import TranscriptMirrorBatcher
from ._sessions.resume import (
    MaterializedResume,
    apply_materialized_options,
    build_mirror_batcher,
    materialize_resume_session,
)
from ._sessions.validation import validate_session_store_options
from ._types_sessions import SessionKey
from .messages import MirrorErrorMessage
from .options import ClaudeAgentOptions

__all__ = ("StoreLink",)


class StoreLink:
    """The store side of one query or client (``None`` of it without a store)."""

    def __init__(self, options: ClaudeAgentOptions, materialized: MaterializedResume | None):
        assert options.session_store is not None
        self._materialized = materialized
        self._errors: list[MirrorErrorMessage] = []
        self._batcher: TranscriptMirrorBatcher = build_mirror_batcher(
            options.session_store,
            materialized,
            options.env,
            self._report,
            options.session_store_flush,
        )

    @classmethod
    async def open(cls, options: ClaudeAgentOptions) -> tuple[ClaudeAgentOptions, StoreLink | None]:
        """The options to start the CLI with, and the link (``None``: no store)."""
        store = options.session_store
        if store is None:
            return options, None
        validate_session_store_options(options)
        materialized = await materialize_resume_session(options)
        if materialized is not None:
            options = apply_materialized_options(options, materialized)
        extra = {**options.extra_args, "session-mirror": None}
        options = replace(options, extra_args=extra)
        return options, cls(options, materialized)

    async def _report(self, key: SessionKey | None, error: str) -> None:
        data: dict[str, Any] = {"type": "system", "subtype": "mirror_error", "error": error}
        if key is not None:
            data["key"] = dict(key)
        self._errors.append(MirrorErrorMessage("mirror_error", data, key=key, error=error))

    def take(self, message: m.InboundMessage) -> bool:
        """Keep a ``transcript_mirror`` frame for the store (True), or leave the message."""
        if message.__class__ is not m.UnknownMessage:
            return False
        assert isinstance(message, m.UnknownMessage)
        if message.type != "transcript_mirror" or not message.raw:
            return False
        try:
            frame = msgspec.json.decode(message.raw)
        except msgspec.DecodeError:
            return True
        path, entries = frame.get("filePath"), frame.get("entries")
        if isinstance(path, str) and isinstance(entries, list):
            self._batcher.enqueue(path, entries)
        return True

    async def flush(self) -> None:
        """Send what is pending to the store (before a result is handed on)."""
        await self._batcher.flush()

    def errors(self) -> list[MirrorErrorMessage]:
        """Mirror errors reported since the last call, to put in the stream."""
        errors, self._errors = self._errors, []
        return errors

    async def aclose(self) -> None:
        """Final flush, then the temporary config dir of a store resume goes."""
        try:
            await self._batcher.close()
        finally:
            if self._materialized is not None:
                await self._materialized.cleanup()
