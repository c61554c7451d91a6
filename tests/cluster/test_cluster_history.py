"""The gateway's copy of the mirrored transcripts (TranscriptCache) against a real
nats-server: a file mirrored as it grows arrives whole under its project, private;
repeats, fence markers and malformed chunks change nothing; a hole stops that session's
copy (and only it); the history index lists what the copy holds."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from adapter.cluster import ClusterConfig, TranscriptMirror, ensure_transcript_stream
from adapter.cluster.transcripts import (
    OFFSET_HEADER,
    PROJECT_HEADER,
    TranscriptCache,
    fence_transcript,
    mirrored_size,
)
from adapter.cluster.wire import MSG_ID_HEADER
from adapter.history.transcripts import HistoryIndex
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.nats]

CLI_ID = "0b5c3f5e-8d2a-4d8e-9a51-3c7f4f0e2a11"
OTHER = "7f1e2d3c-4b5a-4697-8876-554433221100"


def line(kind: str, text: str, cwd: str = "/srv/repo") -> bytes:
    content = f'{{"role":"{kind}","content":"{text}"}}'
    return (
        f'{{"type":"{kind}","cwd":"{cwd}","timestamp":"2026-11-26T06:00:00Z",'
        f'"sessionId":"{CLI_ID}","message":{content}}}\n'
    ).encode()


async def test_the_copy_follows_the_mirror(
    nats_client: Any, cluster_config: ClusterConfig, tmp_path: Path
) -> None:
    js = nats_client.jetstream()
    await ensure_transcript_stream(js, cluster_config)
    config_dir = tmp_path / "worker-config"
    project = config_dir / "projects" / "-srv-repo"
    project.mkdir(parents=True)
    source = project / f"{CLI_ID}.jsonl"
    source.write_bytes(line("user", "remember the word teapot"))
    mirror = TranscriptMirror(js, cluster_config, CLI_ID, {"CLAUDE_CONFIG_DIR": str(config_dir)})
    await mirror.flush()

    cache = TranscriptCache(js, cluster_config, tmp_path / "copy")
    await cache.start()
    try:
        copy = tmp_path / "copy" / "projects" / "-srv-repo" / f"{CLI_ID}.jsonl"
        await eventually(lambda: copy.exists() and copy.read_bytes() == source.read_bytes())
        assert 0o600 == stat.S_IMODE(copy.stat().st_mode)
        assert 0o700 == stat.S_IMODE((tmp_path / "copy" / "projects" / "-srv-repo").stat().st_mode)

        subject = cluster_config.transcript_subject(CLI_ID)
        stream = cluster_config.transcript_stream
        with capture_logs() as logs:
            # A fence marker (a mirror taking over continues after it), the file grows.
            await fence_transcript(js, cluster_config, CLI_ID, "1")
            with source.open("ab") as file:
                file.write(line("assistant", "noted"))
            await TranscriptMirror(
                js, cluster_config, CLI_ID, {"CLAUDE_CONFIG_DIR": str(config_dir)}
            ).flush()
            # A repeat of the first chunk and a chunk with no offset change nothing.
            await js.publish(
                subject,
                line("user", "a repeat"),
                stream=stream,
                headers={OFFSET_HEADER: "0", PROJECT_HEADER: "-srv-repo"},
            )
            await js.publish(subject, b"garbage\n", stream=stream)
            await eventually(lambda: copy.read_bytes() == source.read_bytes())

            # Another session with a hole: its copy stops there; the first one is unharmed.
            other = cluster_config.transcript_subject(OTHER)
            await js.publish(
                other,
                line("user", "other"),
                stream=stream,
                headers={MSG_ID_HEADER: f"{OTHER}:0", OFFSET_HEADER: "0"},
            )
            await js.publish(
                other,
                line("user", "after a hole"),
                stream=stream,
                headers={MSG_ID_HEADER: f"{OTHER}:9999", OFFSET_HEADER: "9999"},
            )
            # No project header (mirrored by an older worker): the project is the cwd's.
            other_copy = tmp_path / "copy" / "projects" / "-srv-repo" / f"{OTHER}.jsonl"
            await eventually(lambda: any(e["event"] == "cluster.transcript_hole" for e in logs))
        assert line("user", "other") == other_copy.read_bytes()
        assert source.read_bytes() == copy.read_bytes()  # the junk changed nothing
        assert any(e["event"] == "cluster.malformed_transcript_chunk" for e in logs)
        listed = HistoryIndex(tmp_path / "copy").list("/srv/repo")
        assert {CLI_ID, OTHER} == {s.session_id for s in listed}
        [first] = [s for s in listed if s.session_id == CLI_ID]
        assert ("remember the word teapot", 2) == (first.title, first.message_count)
    finally:
        await cache.close()


async def test_the_mirror_looks_when_nudged(
    nats_client: Any, cluster_config: ClusterConfig, tmp_path: Path
) -> None:
    # An hour between looks when the session is quiet: only the nudges (one per published
    # batch of the session's events) make it mirror what the file gained, before the file
    # exists and after.
    import anyio

    js = nats_client.jetstream()
    await ensure_transcript_stream(js, cluster_config)
    config_dir = tmp_path / "worker-config"
    env = {"CLAUDE_CONFIG_DIR": str(config_dir)}
    mirror = TranscriptMirror(
        js, cluster_config, CLI_ID, env, poll_interval=0.01, idle_interval=3600.0
    )
    await mirror.prime()
    source = config_dir / "projects" / "-srv-repo" / f"{CLI_ID}.jsonl"

    async def mirrored() -> int:
        return await mirrored_size(js, cluster_config, CLI_ID)

    async with anyio.create_task_group() as tg:
        tg.start_soon(mirror.run)
        await anyio.wait_all_tasks_blocked()  # it looked once: no file yet
        source.parent.mkdir(parents=True)
        for text in ("first", "second"):
            with source.open("ab") as file:
                file.write(line("user", text))
            size = source.stat().st_size
            with anyio.fail_after(HANG_GUARD):
                while await mirrored() != size:  # nudges the mirror each round
                    mirror.nudge()
                    await anyio.sleep(0.05)
        tg.cancel_scope.cancel()
