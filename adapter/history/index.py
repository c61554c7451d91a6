"""Stored sessions listed cheaply: :class:`HistoryIndex`, :func:`list_sessions`,
:func:`find_session_file` and where the CLI keeps them (:func:`config_dir`,
:func:`project_slug`).

The transcripts are read in chunks of bytes and only the few lines a list shows are decoded
(the first real prompt for the title, the newest lines for the model, branch and last
activity); messages are counted without decoding. A :class:`HistoryIndex` remembers where it
stopped in each file, so listing again reads only what was appended. Partial last lines,
garbage and unknown line types are skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

import msgspec

from ..errors import HistoryNotFoundError
from ._lines import ASSISTANT, TITLES, USER, Line, decode
from .usertext import parse_user_text

__all__ = (
    "HistoryIndex",
    "HistoryNotFoundError",
    "HistorySession",
    "config_dir",
    "find_session_file",
    "list_sessions",
    "project_slug",
)

_CHUNK = 8 * 1024 * 1024
_TAIL_BLOCK = 256 * 1024
_TITLE_LENGTH = 120
_SESSION_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,127}")


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


def _prompt_title(line: Line) -> str | None:
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
        self.messages += data.count(USER, 0, end) + data.count(ASSISTANT, 0, end)
        if self.prompt_title is None:
            for raw in _lines_with(data, USER, end):
                line = decode(raw)
                if line is not None:
                    self.prompt_title = _prompt_title(line)
                    if self.prompt_title is not None:
                        break
        for marker in TITLES:
            for raw in _lines_with(data, marker, end):
                line = decode(raw)
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
                if not need_time and not need_branch and ASSISTANT not in raw:
                    continue
                line = decode(raw)
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
