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
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from .._tools import ToolCalls
from ..backend import SessionSpec
from ..events import (
    CompactBoundary,
    Event,
    MessageChunk,
    Reasoning,
    SessionStatus,
    UserMessage,
)
from .usertext import parse_user_text

__all__ = (
    "HistoryIndex",
    "HistoryNotFoundError",
    "HistorySession",
    "config_dir",
    "find_session_file",
    "list_sessions",
    "load_events",
    "project_slug",
    "resume_spec",
)

_CHUNK = 8 * 1024 * 1024
_TAIL_BLOCK = 256 * 1024
_TITLE_LENGTH = 120
_USER = b'"type":"user"'
_ASSISTANT = b'"type":"assistant"'
_TITLES = (b'"type":"custom-title"', b'"type":"summary"')
_BOUNDARY = b'"subtype":"compact_boundary"'
_LOCAL_COMMAND = b'"subtype":"local_command"'
_QUEUE = b'"type":"queue-operation"'
_COMMAND_OUTPUT = re.compile(
    r"<local-command-(?:stdout|stderr)>(.*?)</local-command-(?:stdout|stderr)>", re.S
)
_SESSION_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,127}")


class HistoryNotFoundError(LookupError):
    """No transcript for that session id."""


class HistorySession(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """One stored session as a list shows it.

    ``title``: the ``/rename`` title or summary if any, else the first real prompt.
    ``last_activity``: Unix seconds of the newest timestamped line (the file's mtime if none).
    ``message_count``: user and assistant lines (tool results included).
    """

    session_id: str
    path: str
    project: str
    cwd: str | None = None
    title: str | None = None
    last_activity: float = 0.0
    message_count: int = 0
    model: str | None = None
    git_branch: str | None = None
    size: int = 0


class _Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    content: str | list[Any] = ""


class _Line(msgspec.Struct, rename="camel"):
    type: str = ""
    subtype: str | None = None
    uuid: str | None = None
    timestamp: str | None = None
    is_sidechain: bool = False
    is_meta: bool = False
    is_compact_summary: bool = False
    message: _Message | None = None
    tool_use_result: msgspec.Raw = msgspec.Raw()
    cwd: str | None = None
    git_branch: str | None = None
    session_id: str | None = None
    summary: str | None = None
    custom_title: str | None = None
    #: Of a compact boundary: ``trigger``, ``preTokens`` (read leniently, see _boundary).
    compact_metadata: Any = None
    #: Of a local command's output line: ``<local-command-stdout>...``; of a queue
    #: operation: the prompt as it was sent.
    content: Any = None
    #: Of a queue operation: ``enqueue``, ``dequeue``, ``remove``.
    operation: str | None = None


_decoder = msgspec.json.Decoder(_Line)


def _decode(line: bytes) -> _Line | None:
    try:
        return _decoder.decode(line)
    except (msgspec.DecodeError, ValueError):
        return None


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's configuration directory: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    env = os.environ if env is None else env
    explicit = env.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude"


def project_slug(cwd: str | os.PathLike[str]) -> str:
    """The directory name the CLI uses for a working directory's sessions."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def _timestamp(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _lines_with(data: bytes, marker: bytes, end: int) -> Iterator[bytes]:
    """The lines of ``data[:end]`` (whole lines) that contain ``marker``, in order."""
    at = data.find(marker, 0, end)
    while at >= 0:
        begin = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at, end)
        stop = end if stop < 0 else stop
        yield data[begin:stop]
        at = data.find(marker, stop, end)


def _prompt_title(line: _Line) -> str | None:
    """The title a prompt line gives, or None when it is not a real prompt."""
    if line.type != "user" or line.is_sidechain or line.is_meta or line.message is None:
        return None
    content = line.message.content
    if isinstance(content, list):
        texts = [
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "\n".join(texts)
    parsed = parse_user_text(content)
    if parsed.kind == "text":
        text = " ".join(parsed.text.split())
    elif parsed.kind == "command":
        text = f"/{parsed.name} {parsed.args}".strip()
    else:
        return None
    return text[:_TITLE_LENGTH] or None


class _FileState:
    """What a scan learned of one file, and where it stopped."""

    def __init__(self, session_id: str, path: Path, project: str) -> None:
        self.session_id = session_id
        self.path = path
        self.project = project
        self.offset = 0
        self.mtime_ns = -1
        self.size = 0
        self.inode = -1
        self.messages = 0
        self.prompt_title: str | None = None
        self.named_title: str | None = None
        self.last_activity: float | None = None
        self.model: str | None = None
        self.git_branch: str | None = None
        self.cwd: str | None = None

    def scan(self) -> None:
        stat = self.path.stat()
        if stat.st_ino != self.inode or stat.st_size < self.offset:
            # Replaced or truncated: start over.
            self.__init__(self.session_id, self.path, self.project)  # type: ignore[misc]
            self.inode = stat.st_ino
        self.mtime_ns = stat.st_mtime_ns
        self.size = stat.st_size
        if stat.st_size == self.offset:
            return
        start = self.offset
        with self.path.open("rb") as f:
            f.seek(start)
            pos = start
            while True:
                data = f.read(_CHUNK)
                cut = data.rfind(b"\n")
                while cut < 0 and len(data) >= _CHUNK:  # a line longer than a chunk
                    more = f.read(_CHUNK)
                    if not more:
                        break
                    data += more
                    cut = data.rfind(b"\n")
                if cut < 0:
                    break  # nothing, or an unterminated last line: read again next time
                end = cut + 1
                self._chunk(data, end)
                pos += end
                if end < len(data):
                    f.seek(pos)
            self.offset = pos
            self._tail(f, start, pos)

    def _chunk(self, data: bytes, end: int) -> None:
        """Count the messages in ``data[:end]`` (whole lines); decode only the lines needed."""
        self.messages += data.count(_USER, 0, end) + data.count(_ASSISTANT, 0, end)
        if self.prompt_title is None:
            for raw in _lines_with(data, _USER, end):
                line = _decode(raw)
                if line is not None:
                    self.prompt_title = _prompt_title(line)
                    if self.prompt_title is not None:
                        break
        for marker in _TITLES:
            for raw in _lines_with(data, marker, end):
                line = _decode(raw)
                if line is not None and (line.custom_title or line.summary):
                    self.named_title = line.custom_title or line.summary

    def _tail(self, f: BinaryIO, start: int, end: int) -> None:
        """The newest time, model, branch and cwd: lines read backwards from ``end`` (down to
        ``start``, what this scan added), block by block, until each was found."""
        need_time = need_model = need_branch = True
        pos = end
        rest = b""
        while pos > start and (need_time or need_model or need_branch):
            size = min(_TAIL_BLOCK, pos - start)
            pos -= size
            f.seek(pos)
            block = f.read(size) + rest
            first = block.find(b"\n") if pos > start else -1
            rest, block = block[: first + 1], block[first + 1 :]
            for raw in reversed(block.split(b"\n")):
                if not (need_time or need_model or need_branch):
                    break
                if b'"timestamp"' not in raw and b'"gitBranch"' not in raw:
                    continue
                if not need_time and not need_branch and _ASSISTANT not in raw:
                    continue
                line = _decode(raw)
                if line is None:
                    continue
                when = _timestamp(line.timestamp)
                if need_time and when is not None:
                    self.last_activity = when
                    need_time = False
                model = line.message.model if line.message is not None else None
                if need_model and line.type == "assistant" and model and model != "<synthetic>":
                    self.model = model
                    need_model = False
                if need_branch and line.git_branch:
                    self.git_branch = line.git_branch
                    need_branch = False
                if line.cwd and self.cwd is None:
                    self.cwd = line.cwd

    def summary(self) -> HistorySession:
        return HistorySession(
            session_id=self.session_id,
            path=str(self.path),
            project=self.project,
            cwd=self.cwd,
            title=self.named_title or self.prompt_title,
            last_activity=self.last_activity or self.mtime_ns / 1e9,
            message_count=self.messages,
            model=self.model,
            git_branch=self.git_branch,
            size=self.size,
        )


class HistoryIndex:
    """Lists stored sessions, remembering per file how far it read (appends are read once).

    Keep one per process (the server does); :func:`list_sessions` uses a fresh one.
    """

    def __init__(self, config: Path | None = None) -> None:
        self.config = config if config is not None else config_dir()
        self._files: dict[Path, _FileState] = {}

    def _project_dirs(self, cwd: str | os.PathLike[str] | None) -> list[Path]:
        root = self.config / "projects"
        if cwd is not None:
            return [root / project_slug(cwd)]
        try:
            return sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            return []

    def list(
        self, cwd: str | os.PathLike[str] | None = None, *, limit: int | None = None
    ) -> list[HistorySession]:
        """Sessions of ``cwd`` (every project when ``None``), newest activity first."""
        found: list[HistorySession] = []
        seen: set[Path] = set()
        for project in self._project_dirs(cwd):
            try:
                files = [p for p in project.iterdir() if p.suffix == ".jsonl" and p.is_file()]
            except OSError:
                continue
            for path in files:
                seen.add(path)
                state = self._files.get(path)
                if state is None:
                    state = _FileState(path.stem, path, project.name)
                    self._files[path] = state
                try:
                    state.scan()
                except OSError:
                    continue
                if state.messages:
                    found.append(state.summary())
        if cwd is None:
            for gone in set(self._files) - seen:
                del self._files[gone]
        found.sort(key=lambda s: (-s.last_activity, s.session_id))
        return found[:limit] if limit is not None else found


def list_sessions(
    cwd: str | os.PathLike[str] | None = None,
    *,
    config: Path | None = None,
    limit: int | None = None,
) -> list[HistorySession]:
    """Stored sessions of ``cwd`` (or of every project), newest activity first."""
    return HistoryIndex(config).list(cwd, limit=limit)


def find_session_file(
    session_id: str, cwd: str | os.PathLike[str] | None = None, *, config: Path | None = None
) -> Path:
    """The transcript of ``session_id`` (in ``cwd``'s project, or in any project).

    Raises:
        HistoryNotFoundError: no such transcript (or the id is not a plausible session id).
    """
    if not _SESSION_ID.fullmatch(session_id):
        raise HistoryNotFoundError(f"not a session id: {session_id!r}")
    root = (config if config is not None else config_dir()) / "projects"
    if cwd is not None:
        candidates = [root / project_slug(cwd) / f"{session_id}.jsonl"]
    else:
        candidates = sorted(root.glob(f"*/{session_id}.jsonl"))
    for path in candidates:
        if path.is_file():
            return path
    raise HistoryNotFoundError(f"no stored session {session_id!r}")


def _iter_lines(path: Path) -> Iterator[_Line]:
    """The messages of a transcript, its compact boundaries, local command outputs and
    queue operations."""
    with path.open("rb") as f:
        for raw in f:
            if (
                _USER not in raw
                and _ASSISTANT not in raw
                and _BOUNDARY not in raw
                and _LOCAL_COMMAND not in raw
                and _QUEUE not in raw
            ):
                continue
            if not raw.endswith(b"\n"):
                break  # a partial last line
            line = _decode(raw)
            if line is not None and (
                line.message is not None
                or _is_boundary(line)
                or _is_local_command(line)
                or line.type == "queue-operation"
            ):
                yield line


def _is_boundary(line: _Line) -> bool:
    return line.type == "system" and line.subtype == "compact_boundary"


def _is_local_command(line: _Line) -> bool:
    return line.type == "system" and line.subtype == "local_command"


def _local_command_output(line: _Line, n: int) -> list[Event]:
    """A local command's output line as the assistant text it was live (the CLI sends the
    output as a ``<synthetic>`` assistant message), named after the line."""
    if not isinstance(line.content, str):
        return []
    # The live message has no trailing blank lines; the stored output may have some.
    text = "\n".join(_COMMAND_OUTPUT.findall(line.content)).rstrip()
    if not text:
        return []
    return [MessageChunk(message_id=line.uuid or f"local-command-{n}", text=text)]


def _boundary(line: _Line) -> CompactBoundary:
    meta = line.compact_metadata if isinstance(line.compact_metadata, dict) else {}
    trigger = meta.get("trigger")
    tokens = meta.get("preTokens")
    return CompactBoundary(
        trigger=trigger if isinstance(trigger, str) else None,
        pre_tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
    )


def _user_text(message: _Message) -> str | None:
    """The text of a user message that is text only (a prompt, a command), else None."""
    content = message.content
    if isinstance(content, str):
        return content
    if all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n".join(b["text"] for b in content if isinstance(b.get("text"), str))
    return None


def _is_compact_command(message: _Message) -> bool:
    text = _user_text(message)
    if text is None:
        return False
    parsed = parse_user_text(text)
    return parsed.kind == "command" and parsed.name == "compact"


def _is_command_output(message: _Message) -> bool:
    text = _user_text(message)
    return text is not None and parse_user_text(text).kind == "command_output"


def load_events(path: str | os.PathLike[str]) -> list[Event]:
    """The main thread of a stored session as events (for :class:`~adapter.chat.ChatView`).

    Starts with a :class:`~adapter.events.SessionStatus` (``resumed``: the CLI session id,
    model and cwd as recorded). Events carry no ``seq``. Sub-agent transcripts (kept in
    separate files by the CLI) and usage totals are not part of it.
    """
    path = Path(path)
    calls = ToolCalls()
    events: list[Event] = []
    cwd = model = session_id = None
    # A compaction waiting for the line after it: the /compact it belongs to goes first.
    boundary: CompactBoundary | None = None
    # The /compact line just shown: its output line (the compaction's echo) is not.
    after_compact = False
    # The prompts as sent, in the CLI's queue order; ``typed``: the one it took last.
    queued: deque[str | None] = deque()
    typed: str | None = None
    for line in _iter_lines(path):
        if line.type == "queue-operation":
            content = line.content if isinstance(line.content, str) else None
            if line.operation == "enqueue":
                queued.append(content)
            elif line.operation == "dequeue":
                typed = queued.popleft() if queued else None
            elif line.operation == "remove" and content in queued:
                queued.remove(content)
            continue
        if line.is_sidechain or line.is_meta or line.is_compact_summary:
            continue
        cwd = cwd or line.cwd
        session_id = session_id or line.session_id
        if _is_boundary(line):
            if boundary is not None:
                events.append(boundary)
            boundary, after_compact = _boundary(line), False
            continue
        if _is_local_command(line):
            if after_compact:  # the /compact's own output: not shown live either
                after_compact = False
                continue
            if boundary is not None:
                events.append(boundary)
                boundary = None
            events += _local_command_output(line, len(events))
            continue
        message = line.message
        assert message is not None
        if after_compact:
            after_compact = False
            if line.type == "user" and _is_command_output(message):
                continue
        if boundary is not None:
            if line.type == "user" and _is_compact_command(message):
                events += _user_events(line, message, calls)
                events.append(boundary)
                boundary, after_compact = None, True
                continue
            events.append(boundary)
            boundary = None
        if line.type == "assistant":
            typed = None  # a prompt's answer: the prompt taken last was shown already
            if message.model and message.model != "<synthetic>":
                model = message.model
            events += _assistant_events(message, calls)
        elif line.type == "user":
            events += _as_typed(_user_events(line, message, calls), typed)
            typed = None
    if boundary is not None:
        events.append(boundary)
    status = SessionStatus(status="resumed", cli_session_id=session_id, model=model, cwd=cwd)
    return [status, *events]


def _as_typed(events: list[Event], typed: str | None) -> list[Event]:
    """A command shown as the person typed it: the CLI stores an alias (``/cost``) under
    the command's own name (``/usage``), and its queue keeps the prompt as it was sent."""
    if typed is None or len(events) != 1 or not isinstance(events[0], UserMessage):
        return events
    stored, sent = parse_user_text(events[0].text), parse_user_text(typed)
    if (
        stored.kind == "command"
        and sent.kind == "command"
        and stored.name != sent.name
        and stored.args == sent.args
    ):
        return [UserMessage(text=typed)]
    return events


def _assistant_events(message: _Message, calls: ToolCalls) -> list[Event]:
    events: list[Event] = []
    message_id = message.id or ""
    if isinstance(message.content, str):
        if message.content:
            events.append(MessageChunk(message_id=message_id, text=message.content))
        return events
    for block in message.content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
            events.append(MessageChunk(message_id=message_id, text=block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"]:
            events.append(Reasoning(message_id=message_id, text=block["thinking"]))
        elif kind in ("tool_use", "server_tool_use") and isinstance(block.get("id"), str):
            name = block.get("name")
            events += calls.announce(
                block["id"], name if isinstance(name, str) else "", block.get("input"), None
            )
    return events


def _user_events(line: _Line, message: _Message, calls: ToolCalls) -> list[Event]:
    content = message.content
    if isinstance(content, str):
        return [UserMessage(text=content)] if content else []
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        structured: Any = None
        if len(results) == 1 and line.tool_use_result:
            try:
                structured = msgspec.json.decode(line.tool_use_result)
            except msgspec.DecodeError:
                structured = None
        events: list[Event] = []
        for block in results:
            tool_id = block.get("tool_use_id")
            if isinstance(tool_id, str):
                events += calls.result(
                    tool_id, block.get("content"), block.get("is_error") is True, structured, None
                )
        return events
    texts = [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    images = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")
    if not texts and not images:
        return []
    return [UserMessage(text="\n".join(texts), images=images)]


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
        for line in _iter_lines(path):
            if line.cwd:
                cwd = line.cwd
                break
    return SessionSpec(cwd=cwd, resume=session_id, resume_session_at=at, fork=fork, **spec)
