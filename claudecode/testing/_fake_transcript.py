"""The fake CLI's session transcript, where the real CLI keeps it (script key ``transcripts``).

The real CLI appends every session to ``<config dir>/projects/<slug>/<session id>.jsonl``
(the slug: the working directory with every character but ``A-Z a-z 0-9`` turned into
``-``). With ``"transcripts": "/some/config/dir"`` the fake does the same there: the user's
prompts, each ``assistant`` line it writes and each ``user`` line carrying tool results, in
the real file's shapes (``uuid``, ``parentUuid``, ``timestamp``, ``cwd``, ``sessionId``), so
history listings, loading and ``--resume`` can be tried without the real CLI. A resumed
session appends to its file. Off unless the script asks: the fake never writes into
anyone's real ``~/.claude``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from . import _fake_messages as m

__all__ = ("Transcript", "transcript_of")

Json = dict[str, Any]


class Transcript:
    """Appends one session's lines to its transcript file."""

    def __init__(self, config_dir: str, info: m.SessionInfo) -> None:
        slug = re.sub(r"[^A-Za-z0-9]", "-", info.cwd)
        directory = Path(config_dir) / "projects" / slug
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{info.session_id}.jsonl"
        self.info = info
        self.parent: str | None = None

    def _append(self, kind: str, message: Json, **extra: Any) -> None:
        uuid = m.new_uuid()
        line: Json = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": m._timestamp(),
            "userType": "external",
            "cwd": self.info.cwd,
            "sessionId": self.info.session_id,
            "version": self.info.version,
            **extra,
        }
        self.parent = uuid
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")

    def prompt(self, user: Json) -> None:
        """A prompt the host sent (a ``user`` message from stdin)."""
        message = user.get("message")
        if isinstance(message, dict):
            self._append("user", {"role": "user", "content": message.get("content", "")})

    def output(self, msg: Json) -> None:
        """A line the fake wrote to stdout: assistant content and tool results are kept."""
        kind = msg.get("type")
        message = msg.get("message")
        if not isinstance(message, dict):
            return
        if kind == "assistant":
            self._append("assistant", message)
        elif kind == "user":
            content = message.get("content")
            if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content
            ):
                extra: Json = {}
                if "tool_use_result" in msg:
                    extra["toolUseResult"] = msg["tool_use_result"]
                self._append("user", message, **extra)


def transcript_of(script: Json, info: m.SessionInfo) -> Transcript | None:
    """The transcript the script asks for (``transcripts``: a config directory), if any."""
    config_dir = script.get("transcripts")
    if not isinstance(config_dir, str | os.PathLike) or not config_dir:
        return None
    return Transcript(os.fspath(config_dir), info)
