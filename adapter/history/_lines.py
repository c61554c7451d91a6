"""The lines of the CLI's transcript files: their msgspec shapes, the byte markers that find
a kind of line without decoding it, and the lines :func:`iter_lines` yields for loading.

Private to :mod:`adapter.chat`: the listing (:mod:`.history_index`) and the loading
(:mod:`.history_events`) of :mod:`adapter.history.transcripts` share it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

USER = b'"type":"user"'
ASSISTANT = b'"type":"assistant"'
TITLES = (b'"type":"custom-title"', b'"type":"summary"')
BOUNDARY = b'"subtype":"compact_boundary"'
LOCAL_COMMAND = b'"subtype":"local_command"'
QUEUE = b'"type":"queue-operation"'


class Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    content: str | list[Any] = ""


class Line(msgspec.Struct, rename="camel"):
    type: str = ""
    subtype: str | None = None
    uuid: str | None = None
    timestamp: str | None = None
    is_sidechain: bool = False
    is_meta: bool = False
    is_compact_summary: bool = False
    message: Message | None = None
    tool_use_result: msgspec.Raw = msgspec.Raw()
    cwd: str | None = None
    git_branch: str | None = None
    session_id: str | None = None
    summary: str | None = None
    custom_title: str | None = None
    #: Of a compact boundary: ``trigger``, ``preTokens`` (read leniently, see history_events).
    compact_metadata: Any = None
    #: Of a local command's output line: ``<local-command-stdout>...``; of a queue
    #: operation: the prompt as it was sent.
    content: Any = None
    #: Of a queue operation: ``enqueue``, ``dequeue``, ``remove``.
    operation: str | None = None
    #: Of the CLI's synthetic assistant message for a failed API call (``API Error: ...``):
    #: ``true``, the HTTP status and the request id (read leniently: a line is never lost
    #: over them).
    is_api_error_message: Any = False
    api_error_status: Any = None
    request_id: Any = None


_decoder = msgspec.json.Decoder(Line)


def decode(line: bytes) -> Line | None:
    try:
        return _decoder.decode(line)
    except (msgspec.DecodeError, ValueError):
        return None


def iter_lines(path: Path) -> Iterator[Line]:
    """The messages of a transcript, its compact boundaries, local command outputs and
    queue operations."""
    with path.open("rb") as f:
        for raw in f:
            if (
                USER not in raw
                and ASSISTANT not in raw
                and BOUNDARY not in raw
                and LOCAL_COMMAND not in raw
                and QUEUE not in raw
            ):
                continue
            if not raw.endswith(b"\n"):
                break  # a partial last line
            line = decode(raw)
            if line is not None and (
                line.message is not None
                or is_boundary(line)
                or is_local_command(line)
                or line.type == "queue-operation"
            ):
                yield line


def is_boundary(line: Line) -> bool:
    return line.type == "system" and line.subtype == "compact_boundary"


def is_local_command(line: Line) -> bool:
    return line.type == "system" and line.subtype == "local_command"
