"""Fencing, with a real nats-server and a real network cut: a worker whose link to NATS is
severed (through a TCP proxy) while its CLI keeps streaming is declared dead, its session is
reported lost and resumed on another worker; when the link comes back, the old worker
publishes nothing more for that session — no events, no transcript lines, no record — and
closes its CLI, while the session goes on, gap-free, on the new worker."""

from __future__ import annotations

import contextlib
import itertools
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from structlog.testing import capture_logs

from adapter.backend import SessionSpec
from adapter.cluster import (
    ClusterBackend,
    ClusterConfig,
    ClusterWorker,
    LocalNatsServer,
    NatsSettings,
)
from adapter.cluster.transcripts import mirrored_size
from adapter.cluster.wire import batch_range
from adapter.config import SessionConfig
from adapter.events import Complete, ErrorEvent, Event, MessageChunk
from adapter.history.transcripts import project_slug
from claudecode.testing import fake_cli_command, script, text_turn
from tests.support.cluster import until_moved
from tests.support.timeouts import RESTART_GUARD
from tests.support.waits import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.nats, pytest.mark.slow]


class SeverableLink:
    """A TCP proxy to the nats-server: :meth:`sever` drops every connection through it and
    stops listening (connections are refused: a network partition), :meth:`heal` listens
    on the same port again."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self._scopes: set[anyio.CancelScope] = set()
        self._stack = contextlib.AsyncExitStack()
        self._tg: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> SeverableLink:
        self._tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(self._tg.cancel_scope.cancel)
        await self.heal()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def sever(self) -> None:
        for scope in list(self._scopes):
            scope.cancel()

    async def heal(self) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        assert self._tg is not None
        self._tg.start_soon(self._serve, listener)

    async def _serve(self, listener: anyio.abc.SocketListener) -> None:
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                async with listener:
                    await listener.serve(self._relay)
            finally:
                self._scopes.discard(scope)

    async def _relay(self, client: anyio.abc.SocketStream) -> None:
        async with client:
            with anyio.CancelScope() as scope:
                self._scopes.add(scope)
                try:
                    upstream = await anyio.connect_tcp("127.0.0.1", self.target_port)
                    async with upstream, anyio.create_task_group() as tg:

                        async def pipe(src: Any, dst: Any) -> None:
                            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                                async for data in src:
                                    await dst.send(data)
                            tg.cancel_scope.cancel()

                        tg.start_soon(pipe, client, upstream)
                        tg.start_soon(pipe, upstream, client)
                except OSError:
                    pass
                finally:
                    self._scopes.discard(scope)


async def until(events: AsyncIterator[Event], stop: Any, into: list[Event]) -> None:
    with anyio.fail_after(RESTART_GUARD):
        async for event in events:
            into.append(event)
            if stop(event):
                return
    raise AssertionError("the events ended")


async def stored_ranges(js: Any, config: ClusterConfig, session_id: str) -> list[tuple[int, int]]:
    """The seq range of every batch the stream holds for a session, in stream order."""
    from nats.js.errors import NotFoundError

    ranges: list[tuple[int, int]] = []
    seq = 1
    while True:
        try:
            msg = await js.get_msg(
                config.event_stream, seq=seq, subject=config.event_subject(session_id), next=True
            )
        except NotFoundError:
            return ranges
        seq = msg.seq + 1
        found = batch_range(msg.data)
        if found is not None:
            ranges.append(found)


async def mirrored_bytes(js: Any, config: ClusterConfig, cli_session_id: str) -> bytes:
    from nats.js.errors import NotFoundError

    data, seq = b"", 1
    while True:
        try:
            msg = await js.get_msg(
                config.transcript_stream,
                seq=seq,
                subject=config.transcript_subject(cli_session_id),
                next=True,
            )
        except NotFoundError:
            return data
        seq = msg.seq + 1
        data += msg.data or b""


async def test_a_worker_cut_off_from_nats_is_fenced_when_it_returns(tmp_path: Path) -> None:
    config = ClusterConfig(
        prefix=f"f{uuid.uuid4().hex[:8]}", heartbeat_interval=0.5, heartbeat_ttl=1.5
    )
    work = tmp_path / "work"
    work.mkdir()
    homes = {name: tmp_path / f"home-{name}" for name in ("wa", "wb")}

    def defaults(name: str, body: Any) -> SessionConfig:
        homes[name].mkdir(mode=0o700)
        cli = fake_cli_command(body, tmp_path / f"fake-{name}")
        return SessionConfig(
            cli_path=cli,
            cwd=work,
            permission_timeout=None,
            env={"CLAUDE_CONFIG_DIR": str(homes[name])},
        )

    slow = defaults("wa", script(text_turn("slow " * 3000, delay=0.02, chunk=4)))
    steady = defaults("wb", script(text_turn("resumed here")))
    with LocalNatsServer(tmp_path / "nats") as server:
        direct = NatsSettings(servers=[server.url])
        async with SeverableLink(server.port or 0) as link:
            cut_off = NatsSettings(servers=[link.url])
            async with (
                ClusterWorker(
                    cut_off, config, slow, worker_id="wa", labels={"pin": "a"}, idle_timeout=None
                ) as wa,
                ClusterWorker(direct, config, steady, worker_id="wb", idle_timeout=None),
                ClusterBackend(direct, config) as gateway,
            ):
                registry = gateway._require()
                await eventually(lambda: {"wa", "wb"} <= set(registry.workers), RESTART_GUARD)
                info = await gateway.create(SessionSpec(labels={"pin": "a"}))
                assert "wa" == info.owner and info.cli_session_id
                cli_id = info.cli_session_id
                # A second, idle session on A whose CLI writes its file only while A is cut
                # off: A's mirror never published for it, yet it is refused afterwards too.
                idle = await gateway.create(SessionSpec(labels={"pin": "a"}))
                assert "wa" == idle.owner and idle.cli_session_id
                # The CLI's conversation file on worker A (the fake CLI writes none itself).
                project = homes["wa"] / "projects" / project_slug(str(work))
                project.mkdir(parents=True)
                transcript = project / f"{cli_id}.jsonl"
                transcript.write_bytes(b'{"type":"user","n":1}\n')

                async def mirrored() -> bool:
                    return 22 == await mirrored_size(gateway._js, config, cli_id)

                await eventually(mirrored, RESTART_GUARD, poll=0.05, what="22 bytes mirrored")

                seen: list[Event] = []
                with capture_logs() as logs:
                    async with gateway.subscribe(info.id, after_seq=0) as events:
                        await gateway.prompt(info.id, "talk")
                        await until(
                            events,
                            lambda e: sum(isinstance(x, MessageChunk) for x in seen) >= 5,
                            seen,
                        )
                        link.sever()  # A's CLI keeps streaming; A cannot reach NATS
                        await until(events, lambda e: isinstance(e, Complete), seen)
                        assert isinstance(seen[-1], Complete) and seen[-1].synthetic
                        assert isinstance(seen[-2], ErrorEvent) and "interrupted" == seen[-2].kind
                        await until_moved(gateway, info.id, "wb", RESTART_GUARD)
                        # A's CLIs write on while A is cut off.
                        with transcript.open("ab") as file:
                            file.write(b'{"type":"assistant","stale":true}\n')
                        await until_moved(gateway, idle.id, "wb", RESTART_GUARD)
                        (project / f"{idle.cli_session_id}.jsonl").write_bytes(
                            b'{"type":"user","stale":true}\n'
                        )

                        await link.heal()
                        # A comes back: its heartbeat is seen again, and it drops the session.
                        await eventually(
                            lambda: not {info.id, idle.id} & set(wa.session_ids), RESTART_GUARD
                        )
                        await eventually(lambda: "wa" in registry.workers, RESTART_GUARD)
                        assert any(
                            e["event"] == "cluster.session_fenced" and e["session_id"] == info.id
                            for e in logs
                        ), [e["event"] for e in logs]

                        # The session goes on on B.
                        await gateway.prompt(info.id, "still there?")
                        after: list[Event] = []
                        await until(events, lambda e: isinstance(e, Complete), after)
                assert "resumed here" == "".join(
                    e.text for e in after if isinstance(e, MessageChunk)
                )
                seqs = [e.seq for e in seen + after]
                assert list(range(1, len(seqs) + 1)) == seqs
                # Nothing of A's after it was fenced off: the stream's batches follow one
                # another with no overlap, up to the end of B's turn.
                ranges = await stored_ranges(gateway._js, config, info.id)
                assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges)), ranges
                assert ranges[-1][1] == seqs[-1]
                # The transcript holds nothing A's CLI wrote while A was cut off.
                assert b"stale" not in await mirrored_bytes(gateway._js, config, cli_id)
                assert b"" == await mirrored_bytes(gateway._js, config, idle.cli_session_id)
                # The record is B's.
                final = await gateway.info(info.id)
                assert "wb" == final.owner and final.status != "lost"
