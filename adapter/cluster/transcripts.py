"""The CLI's conversation files, mirrored into JetStream so any worker can ``--resume``.

The CLI keeps each session's history in ``<config dir>/projects/<cwd slug>/<CLI session
id>.jsonl`` on the machine that runs it. :class:`TranscriptMirror` follows that file while
the session runs and publishes every complete line it gains to the ``<PREFIX>_TRANSCRIPTS``
stream (subject ``<prefix>.transcript.<CLI session id>``), as chunks tagged with their byte
offset (``Bridge-Offset``; ``Nats-Msg-Id`` ``<id>:<offset>``, so a retry is a no-op).
:func:`restore_transcript` writes the mirrored bytes back to a worker's own config directory
before it starts a CLI with ``--resume`` of a session it has never run — the way the official
SDK's session stores mirror transcripts to external storage.

Each chunk is published on the condition that the subject's newest message is the mirror's
own last one; when a session is declared lost, :func:`fence_transcript` puts an empty
chunk on the subject, so the old worker, should it come back, mirrors nothing more
(:mod:`adapter.cluster.fencing`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from claudecode.internal import get_logger

from ..history.transcripts import config_dir, project_slug
from ._streams import ensure_stream
from .config import ClusterConfig, valid_token
from .fencing import FencedError, conditional_publish
from .wire import MSG_ID_HEADER

if TYPE_CHECKING:  # pragma: no cover
    from nats.js.client import JetStreamContext

__all__ = (
    "OFFSET_HEADER",
    "PROJECT_HEADER",
    "TranscriptCache",
    "TranscriptMirror",
    "ensure_transcript_stream",
    "fence_transcript",
    "find_transcript",
    "mirrored_size",
    "restore_transcript",
)

_log = get_logger("claudecode.adapter.cluster.transcripts")

#: The byte offset of a transcript chunk in its file.
OFFSET_HEADER = "Bridge-Offset"
#: The CLI's project directory of the file (the slug of the session's working directory).
PROJECT_HEADER = "Bridge-Project"
_PROJECT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,254}$")


async def ensure_transcript_stream(js: JetStreamContext, config: ClusterConfig) -> None:
    """Create the transcripts stream (or update its limits)."""
    from nats.js import api

    stream = api.StreamConfig(
        name=config.transcript_stream,
        subjects=[config.transcript_subjects],
        retention=api.RetentionPolicy.LIMITS,
        discard=api.DiscardPolicy.OLD,
        max_age=config.transcript_max_age,
        max_bytes=config.transcript_max_bytes,
        storage=api.StorageType.FILE,
        num_replicas=config.replicas,
        duplicate_window=120.0,
    )
    await ensure_stream(js, stream)


def find_transcript(config_root: Path, cli_session_id: str) -> Path | None:
    """The CLI's file for a session under ``config_root/projects`` (any project)."""
    projects = config_root / "projects"
    try:
        for project in projects.iterdir():
            candidate = project / f"{cli_session_id}.jsonl"
            if candidate.is_file():
                return candidate
    except OSError:
        return None
    return None


class TranscriptMirror:
    """Follows one CLI session's file and mirrors its complete lines into JetStream.

    The CLI writes its file as the session works, so :meth:`run` looks at the file when
    the session was active (:meth:`nudge`, called by the worker for every published batch
    of events), at most every ``poll_interval``, and otherwise every ``idle_interval`` (a
    last look after the session went quiet). Until the file exists (the CLI creates it
    with its first turn) the look while active backs off from ``poll_interval`` to
    ``idle_interval``: a session whose CLI never writes one costs a directory listing
    every ``idle_interval``, not four a second.
    """

    def __init__(
        self,
        js: JetStreamContext,
        config: ClusterConfig,
        cli_session_id: str,
        env: Mapping[str, str] | None = None,
        *,
        poll_interval: float = 0.25,
        idle_interval: float = 2.0,
    ) -> None:
        self._js = js
        self._config = config
        self.cli_session_id = cli_session_id
        self._root = config_dir(env)
        self._subject = config.transcript_subject(cli_session_id)
        self._interval = poll_interval
        self._idle_interval = idle_interval
        self._nudged = anyio.Event()
        self._path: Path | None = None
        #: Bytes of the file mirrored so far.
        self.offset: int | None = None
        # The stream sequence of the subject's newest chunk (this mirror's last write):
        # every chunk is published on that condition, so a mirror whose session moved to
        # another worker is refused (adapter.cluster.fencing).
        self._subject_seq = 0

    async def prime(self) -> None:
        """Read how much of the file the stream holds now (and its newest chunk), before
        the session can move: a mirror cut off before its first chunk is then refused like
        any other stale writer. (Without it the first :meth:`flush` reads it then.)"""
        self.offset, self._subject_seq = await _mirrored(
            self._js, self._config, self.cli_session_id
        )

    def nudge(self) -> None:
        """The session was active: look at the file soon."""
        self._nudged.set()

    async def run(self) -> None:
        """Mirror until cancelled (then call :meth:`flush` for the last lines).

        Raises:
            FencedError: another worker mirrors this CLI session now.
        """
        backoff = self._interval
        while True:
            try:
                await self.flush()
            except FencedError:
                raise
            except Exception as exc:  # NATS away, file moved: try again next round
                self.offset = None  # read back what the stream holds before going on
                _log.warning(
                    "cluster.transcript_mirror_failed",
                    cli_session_id=self.cli_session_id,
                    error=repr(exc),
                )
            with anyio.move_on_after(self._idle_interval):
                await self._nudged.wait()
            self._nudged = anyio.Event()
            if self._path is None:
                backoff = min(backoff * 2, self._idle_interval)
                await anyio.sleep(backoff)
            else:
                await anyio.sleep(self._interval)  # what else the CLI writes meanwhile

    async def flush(self) -> None:
        """Publish what the file gained since the last call (complete lines only).

        Raises:
            FencedError: another worker mirrors this CLI session now.
        """
        if self._path is None:
            self._path = find_transcript(self._root, self.cli_session_id)
            if self._path is None:
                return
        if self.offset is None:
            self.offset, self._subject_seq = await _mirrored(
                self._js, self._config, self.cli_session_id
            )
        try:
            size = self._path.stat().st_size
        except OSError:
            return
        limit = self._config.max_message_bytes
        while size > self.offset:
            data = await anyio.to_thread.run_sync(
                _read, self._path, self.offset, min(size - self.offset, limit)
            )
            end = data.rfind(b"\n")
            if end < 0:
                if len(data) < limit:
                    return  # a line still being written
                end = len(data) - 1  # a line longer than a message: send it in pieces
            chunk = data[: end + 1]
            self._subject_seq, repeated = await conditional_publish(
                self._js,
                self._config.transcript_stream,
                self._subject,
                chunk,
                {
                    MSG_ID_HEADER: f"{self.cli_session_id}:{self.offset}",
                    OFFSET_HEADER: str(self.offset),
                    PROJECT_HEADER: self._path.parent.name,
                },
                self._subject_seq,
            )
            if repeated:
                # An earlier attempt at this offset landed (its chunk may be shorter than
                # this one): go on from what the stream holds.
                self.offset, self._subject_seq = await _mirrored(
                    self._js, self._config, self.cli_session_id
                )
                continue
            self.offset += len(chunk)


async def _mirrored(
    js: JetStreamContext, config: ClusterConfig, cli_session_id: str
) -> tuple[int, int]:
    """How many bytes of a session's file the stream holds, and the stream sequence of its
    newest chunk (``(0, 0)``: none)."""
    from nats.js.errors import NotFoundError

    try:
        last = await js.get_last_msg(
            config.transcript_stream, config.transcript_subject(cli_session_id)
        )
    except NotFoundError:
        return 0, 0
    assert last.seq is not None
    try:
        size = int((last.headers or {}).get(OFFSET_HEADER, "0")) + len(last.data or b"")
    except ValueError:
        size = 0
    return size, last.seq


async def fence_transcript(
    js: JetStreamContext, config: ClusterConfig, cli_session_id: str, marker: str
) -> None:
    """Fence off the worker that mirrored a CLI session's file until now (its session was
    declared lost): an empty chunk at the mirrored size moves the subject on, so that
    worker's next chunk is refused even when the new owner has nothing to add yet.
    ``marker`` makes the message id unique (e.g. the registry revision that declared it)."""
    if not valid_token(cli_session_id):
        return
    subject = config.transcript_subject(cli_session_id)
    while True:
        size, seq = await _mirrored(js, config, cli_session_id)
        try:
            await conditional_publish(
                js,
                config.transcript_stream,
                subject,
                b"",
                {MSG_ID_HEADER: f"{cli_session_id}:fence:{marker}", OFFSET_HEADER: str(size)},
                seq,
            )
        except FencedError:
            continue  # a chunk of the old owner came in between: after it
        return


async def mirrored_size(js: JetStreamContext, config: ClusterConfig, cli_session_id: str) -> int:
    """How many bytes of a session's file the stream holds (0: none)."""
    return (await _mirrored(js, config, cli_session_id))[0]


async def restore_transcript(
    js: JetStreamContext,
    config: ClusterConfig,
    cli_session_id: str,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """Write the mirrored file of a session into this machine's CLI config directory (under
    the project of ``cwd``) unless a file for it is already there. Returns the file written,
    or ``None`` (nothing mirrored, already present, or the mirror has a hole)."""
    from nats.js.errors import NotFoundError

    if not valid_token(cli_session_id):
        return None
    root = config_dir(env)
    if find_transcript(root, cli_session_id) is not None:
        return None
    stream, subject = config.transcript_stream, config.transcript_subject(cli_session_id)
    chunks: list[bytes] = []
    expected, seq = 0, 1
    while True:
        try:
            msg = await js.get_msg(stream, seq=seq, subject=subject, next=True)
        except NotFoundError:
            break
        assert msg.seq is not None
        seq = msg.seq + 1
        try:
            offset = int((msg.headers or {}).get(OFFSET_HEADER, "-1"))
        except ValueError:
            offset = -1
        data = msg.data or b""
        if not data:
            continue  # a fence marker
        if offset < expected:
            continue  # a repeat
        if offset > expected:
            _log.error(
                "cluster.transcript_hole", cli_session_id=cli_session_id, at=expected, next=offset
            )
            return None
        chunks.append(data)
        expected += len(data)
    if not chunks:
        return None
    path = await anyio.to_thread.run_sync(_write, root, cwd, cli_session_id, chunks)
    _log.info("cluster.transcript_restored", cli_session_id=cli_session_id, bytes=expected)
    return path


class TranscriptCache:
    """A private local copy of every mirrored CLI transcript, laid out like the CLI's own
    config directory (``<root>/projects/<project>/<CLI session id>.jsonl``) and kept current
    by one ordered consumer on the transcripts stream.

    A gateway lists, loads and resumes stored sessions from it
    (:class:`~adapter.chat.HistoryIndex` over ``root``), so a gateway with no CLI files of its
    own shows the whole cluster's history. Files are private (0600 in a 0700 directory);
    chunks are appended at their offset (repeats and fence markers skipped; a session whose
    mirror has a hole is not extended past it).
    """

    def __init__(self, js: JetStreamContext, config: ClusterConfig, root: Path) -> None:
        self._js = js
        self._config = config
        self.root = root
        self._sizes: dict[str, int] = {}
        self._paths: dict[str, Path] = {}
        self._sub: Any = None

    async def start(self) -> None:
        """Create ``root`` (private) and start following the stream from its beginning."""
        from nats.js import api

        (self.root / "projects").mkdir(mode=0o700, parents=True, exist_ok=True)
        self._sub = await self._js.subscribe(
            self._config.transcript_subjects,
            stream=self._config.transcript_stream,
            cb=self._on_chunk,
            ordered_consumer=True,
            config=api.ConsumerConfig(deliver_policy=api.DeliverPolicy.ALL),
            idle_heartbeat=2.0,
        )

    async def close(self) -> None:
        """Stop following (the files stay)."""
        sub, self._sub = self._sub, None
        if sub is not None:
            try:
                await sub.unsubscribe()
            except Exception as exc:  # the connection may be gone already
                _log.debug("cluster.unsubscribe_failed", error=repr(exc))

    async def _on_chunk(self, msg: Any) -> None:
        cli_session_id = msg.subject.rsplit(".", 1)[-1]
        data = msg.data or b""
        headers = msg.headers or {}
        try:
            offset = int(headers.get(OFFSET_HEADER, "-1"))
        except ValueError:
            offset = -1
        if not valid_token(cli_session_id) or offset < 0:
            _log.warning("cluster.malformed_transcript_chunk", subject=msg.subject)
            return
        size = self._sizes.get(cli_session_id, 0)
        if size < 0 or not data or offset < size:
            return  # stopped at a hole, a fence marker, or a repeat
        if offset > size:
            _log.warning(
                "cluster.transcript_hole", cli_session_id=cli_session_id, at=size, next=offset
            )
            self._sizes[cli_session_id] = -1  # the copy stays as it is
            return
        path = self._paths.get(cli_session_id)
        if path is None:
            project = _project_of(headers.get(PROJECT_HEADER), data)
            directory = self.root / "projects" / project
            directory.mkdir(mode=0o700, exist_ok=True)
            path = self._paths[cli_session_id] = directory / f"{cli_session_id}.jsonl"
        try:
            _append(path, data)
        except OSError as exc:
            _log.warning("cluster.transcript_cache_failed", path=str(path), error=repr(exc))
            return
        self._sizes[cli_session_id] = size + len(data)


def _project_of(header: str | None, data: bytes) -> str:
    """The project directory of a transcript: the mirror's header, else the slug of the
    ``cwd`` its first lines record (chunks mirrored before the header existed)."""
    if header and _PROJECT.match(header) and header not in (".", ".."):
        return header
    for line in data.split(b"\n", 20)[:20]:
        try:
            cwd = msgspec.json.decode(line, type=_CwdLine).cwd
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if cwd:
            return project_slug(cwd)[:255]
    return "unknown"


class _CwdLine(msgspec.Struct):
    cwd: str | None = None


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as file:
        file.write(data)


def _read(path: Path, offset: int, size: int) -> bytes:
    with open(path, "rb") as file:
        file.seek(offset)
        return file.read(size)


def _write(
    root: Path, cwd: str | os.PathLike[str], cli_session_id: str, chunks: list[bytes]
) -> Path:
    # Where the CLI looks for it: the project directory of the (resolved) working directory;
    # private, like the CLI's own files.
    project = root / "projects" / project_slug(os.path.realpath(cwd))
    project.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = project / f"{cli_session_id}.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        for chunk in chunks:
            file.write(chunk)
    return path
