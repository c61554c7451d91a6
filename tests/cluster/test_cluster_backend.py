"""ClusterBackend (gateway) and ClusterWorker against a real nats-server, with the fake CLI
behind the workers: creation and placement, events, commands routed to the owning worker,
typed errors, the registry's watch, malformed messages, lost sessions resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from adapter.backend import SessionInfo, SessionSpec
from adapter.cluster import (
    ClusterBackend,
    LocalNatsServer,
    NatsSettings,
    SessionRecord,
)
from adapter.cluster.wire import decode_reply
from adapter.errors import InvalidAnswerError
from adapter.events import (
    Complete,
    ErrorEvent,
    Event,
    MessageChunk,
    PermissionRequest,
    PermissionResolved,
    QuestionRequest,
)
from adapter.manager import TooManySessionsError, UnknownSessionError
from adapter.policies import PermissionDecision
from adapter.session import UnknownPermissionError
from claudecode import ControlRequestError, UsageError
from claudecode.testing import (
    script,
    text_block,
    text_turn,
    tool_turn,
    tool_use_block,
    turn,
)
from tests.support.cluster import until_moved
from tests.support.timeouts import HANG_GUARD
from tests.support.waits import eventually, until_complete, until_event

from ._support import fast_config, running, wait_state, worker_defaults

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def test_a_question_answered_and_one_declined_through_the_gateway(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """The agent's question crosses the wire: answers that do not fit come back as
    InvalidAnswerError (the question stays open), an answer reaches the CLI (its next
    sentence names it); a second question is declined; an unknown id is UnknownPermissionError."""
    ask = {
        "questions": [
            {
                "question": "Style?",
                "options": [{"label": "Formal"}, {"label": "Casual"}],
                "multiSelect": False,
            }
        ]
    }
    said = text_block("none", by_answer=("Style?", {"Casual": "Casual it is."}))
    body = script(
        turn([tool_use_block("AskUserQuestion", ask, permission=True)], [said]),
        turn([tool_use_block("AskUserQuestion", ask, permission=True)], ["declined"]),
    )
    async with running(nats_server, fast_config(), worker_defaults(tmp_path, body)) as (backend, _):
        info = await backend.create(SessionSpec(policy="supervised"))
        async with backend.subscribe(info.id, after_seq=0) as events:
            await backend.prompt(info.id, "go")
            question = (await until_event(events, QuestionRequest))[-1]
            assert isinstance(question, QuestionRequest)
            with pytest.raises(InvalidAnswerError):
                await backend.answer_question(info.id, question.pending_id, {"Style?": ["a", "b"]})
            with pytest.raises(UnknownPermissionError):
                await backend.decline_question(info.id, "nope")
            await backend.answer_question(info.id, question.pending_id, {"Style?": ["Casual"]})
            first = await until_complete(events)
            assert "Casual it is." == "".join(e.text for e in first if isinstance(e, MessageChunk))
            [resolved] = [e for e in first if isinstance(e, PermissionResolved)]
            assert {"Style?": ["Casual"]} == resolved.answers
            await backend.prompt(info.id, "again")
            asked = (await until_event(events, QuestionRequest))[-1]
            assert isinstance(asked, QuestionRequest)
            await backend.decline_question(info.id, asked.pending_id, "no time")
            second = await until_complete(events)
            [declined] = [e for e in second if isinstance(e, PermissionResolved)]
            assert ("declined", "no time") == (declined.decision, declined.message)


async def test_a_backend_left_at_once_closes_cleanly(nats_server: LocalNatsServer) -> None:
    """Entered and left with no checkpoint in between: its background tasks first run
    while it closes, and nothing raises."""
    async with ClusterBackend(NatsSettings(servers=[nats_server.url]), fast_config()):
        pass


async def test_a_turn_with_a_permission_through_the_gateway(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """Create, subscribe, prompt, answer the permission request, see the turn end; the
    registry follows the state; close ends the event stream."""
    body = script(tool_turn("Bash", {"command": "touch ok.txt"}, permission=True), text_turn("Hi"))
    config = fast_config()
    async with running(nats_server, config, worker_defaults(tmp_path, body)) as (backend, workers):
        info = await backend.create(SessionSpec(policy="supervised"))
        assert workers[0].id == info.owner
        assert info.cli_session_id  # named up front, so a lost session can be resumed
        assert info.state in ("idle", "starting")
        async with backend.subscribe(info.id, after_seq=0) as events:
            await backend.prompt(info.id, "go")
            seen: list[Event] = []
            with anyio.fail_after(HANG_GUARD):
                async for event in events:
                    seen.append(event)
                    if isinstance(event, PermissionRequest):
                        waiting = await wait_state(backend, info.id, "waiting")
                        assert (event.pending_id,) == waiting.pending_permissions
                        with pytest.raises(UnknownPermissionError):
                            await backend.answer_permission(
                                info.id, "nope", PermissionDecision("allow")
                            )
                        await backend.answer_permission(
                            info.id, event.pending_id, PermissionDecision("allow")
                        )
                    if isinstance(event, Complete):
                        break
            assert (tmp_path / "work" / "ok.txt").exists()
            assert list(range(1, len(seen) + 1)) == [e.seq for e in seen]
            assert {info.id} == {e.session_id for e in seen}
            await backend.prompt(info.id, "again")
            second = await until_complete(events)
            assert "Hi" == "".join(e.text for e in second if isinstance(e, MessageChunk))
            assert seen[-1].seq + 1 == second[0].seq
            await backend.close(info.id)
            with anyio.fail_after(HANG_GUARD):
                rest = [e async for e in events]
            assert all(e.seq > second[-1].seq for e in rest)
        closed = await backend.info(info.id)
        assert "closed" == closed.state, closed
        assert closed.cli_session_id
        with pytest.raises(UsageError):
            await backend.prompt(info.id, "too late")


async def test_typed_errors(nats_server: LocalNatsServer, tmp_path: Path) -> None:
    """Unknown sessions, bad ids and bad policies raise the same errors as in process."""
    config = fast_config()
    async with running(nats_server, config, worker_defaults(tmp_path, script())) as (backend, _):
        with pytest.raises(UnknownSessionError):
            await backend.info("nope")
        with pytest.raises(UnknownSessionError):
            await backend.prompt("nope", "hi")
        with pytest.raises(UnknownSessionError):
            await backend.interrupt("not a.valid>token")
        with pytest.raises(UnknownSessionError):
            async with backend.subscribe("nope"):
                pass
        with pytest.raises(UsageError):
            await backend.create(SessionSpec(), session_id="bad.id")
        with pytest.raises(UsageError):
            await backend.create(SessionSpec(policy="yolo"))
        info = await backend.create(SessionSpec(), session_id="mine")
        assert "mine" == info.id
        with pytest.raises(UsageError):
            await backend.create(SessionSpec(), session_id="mine")
        await backend.set_model("mine", "claude-other")
        with pytest.raises(ControlRequestError) as refused:
            await backend.set_permission_mode("mine", "no-such-mode")
        assert "set_permission_mode" == refused.value.subtype
        assert "invalid_mode" == refused.value.error_code
        await backend.close("mine")


async def test_placement_by_load_and_labels_and_caps(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """Sessions spread over the least loaded workers; labels pick a worker that has them;
    when every worker is full creation fails with TooManySessionsError."""
    config = fast_config()
    workers = [
        {"worker_id": "w-a", "max_sessions": 2},
        {"worker_id": "w-b", "max_sessions": 2, "labels": {"repo": "api"}},
    ]
    defaults = worker_defaults(tmp_path, script())
    async with running(nats_server, config, defaults, workers=workers) as (backend, _):
        labelled = await backend.create(SessionSpec(labels={"repo": "api"}))
        assert "w-b" == labelled.owner
        await wait_load(backend, "w-b", 1)
        plain = await backend.create(SessionSpec())
        assert "w-a" == plain.owner  # the less loaded one
        with pytest.raises(TooManySessionsError):
            await backend.create(SessionSpec(labels={"repo": "web"}))
        third = await backend.create(SessionSpec())
        fourth = await backend.create(SessionSpec())
        assert {"w-a", "w-b"} >= {third.owner, fourth.owner}
        with pytest.raises(TooManySessionsError):
            await backend.create(SessionSpec())
        owners = sorted(i.owner or "" for i in await backend.list() if i.state != "closed")
        assert ["w-a", "w-a", "w-b", "w-b"] == owners


async def wait_load(backend: ClusterBackend, worker: str, sessions: int) -> None:
    await eventually(lambda: backend._require().workers[worker].sessions >= sessions)


async def test_watch_reports_state_changes(nats_server: LocalNatsServer, tmp_path: Path) -> None:
    """watch() yields a snapshot when a session is created, becomes busy, idle, closed."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script(text_turn("Hi")))
    async with running(nats_server, config, defaults) as (backend, _):
        states: list[str] = []
        created = anyio.Event()
        session_id: list[str] = []

        async def collect(changes: Any) -> None:
            await created.wait()
            async for change in changes:
                if change.id == session_id[0]:
                    states.append(change.state)
                    if change.state == "closed":
                        return

        async with backend.watch() as changes, anyio.create_task_group() as tg:
            tg.start_soon(collect, changes)
            info = await backend.create(SessionSpec())
            session_id.append(info.id)
            created.set()
            async with backend.subscribe(info.id) as events:
                await backend.prompt(info.id, "hello")
                await until_complete(events)
            await wait_state(backend, info.id, "idle")
            await backend.close(info.id)
        assert "closed" == states[-1]
        assert "busy" in states or "idle" in states


async def test_malformed_requests_are_answered_and_logged(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """Garbage on the create and command subjects gets a bad_request answer and a log line;
    the worker keeps serving."""
    import nats

    config = fast_config()
    defaults = worker_defaults(tmp_path, script(text_turn("Hi")))
    async with running(nats_server, config, defaults) as (backend, workers):
        info = await backend.create(SessionSpec())
        nc = await nats.connect(nats_server.url)
        try:
            with capture_logs() as logs:
                for subject in (config.create_subject, config.command_subject(info.id)):
                    for junk in (b"", b"{", b'{"op":"launch_missiles"}', b"\x00\xff" * 50):
                        msg = await nc.request(subject, junk, timeout=10)
                        reply = decode_reply(msg.data)
                        assert reply.error is not None
                        assert "bad_request" == reply.error.type
                await nc.publish(config.command_subject(info.id), b"no reply wanted")
                bad_record = b'{"info": 3}'
                await nc.jetstream().publish(f"$KV.{config.sessions_bucket}.junk", bad_record)
                await nc.jetstream().publish(f"$KV.{config.workers_bucket}.junk", b"[1,2]")
                await nc.flush()
                await anyio.sleep(0.2)
            assert any(e["event"] == "cluster.malformed_command" for e in logs)
        finally:
            await nc.close()
        async with backend.subscribe(info.id) as events:
            await backend.prompt(info.id, "still there?")
            assert any(isinstance(e, Complete) for e in await until_complete(events))
        assert workers[0].session_ids == [info.id]


async def test_a_lost_session_is_reported_and_resumed(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A session whose owner has no heartbeat is declared lost: its subscribers get an error
    (the running turn ended as interrupted), and it resumes on a live worker under the same
    id with the CLI session resumed and its seq continued."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script(text_turn("after resume")))
    async with running(nats_server, config, defaults) as (backend, workers):
        registry = backend._require()
        # A session of a worker that has already died: its record and three events.
        ghost = SessionRecord(
            info=SessionInfo(
                id="orphan",
                status="active",
                state="busy",
                owner="ghost-worker",
                cli_session_id="11111111-2222-3333-4444-555555555555",
                created_at=1.0,
                last_seq=3,
            ),
            spec=SessionSpec(policy="autonomous"),
        )
        js = backend._js
        events: list[Event] = [
            MessageChunk(seq=i, session_id="orphan", message_id="m", text=str(i)) for i in (1, 2, 3)
        ]
        from adapter.cluster import EventPublisher

        await EventPublisher(js, config, "orphan").publish(events)
        with capture_logs() as logs:
            await registry.put(ghost)
            async with backend.subscribe("orphan", after_seq=0) as stream:
                seen: list[Event] = []
                with anyio.fail_after(HANG_GUARD):
                    async for event in stream:
                        seen.append(event)
                        if isinstance(event, Complete):
                            break
                assert [1, 2, 3, 4, 5] == [e.seq for e in seen[:5]]
                assert isinstance(seen[3], ErrorEvent) and "interrupted" == seen[3].kind
                assert isinstance(seen[4], Complete) and seen[4].synthetic
                resumed = await until_moved(backend, "orphan", workers[0].id, HANG_GUARD)
                assert ghost.info.cli_session_id == resumed.cli_session_id
                assert 1.0 == resumed.created_at
                await backend.prompt("orphan", "hello again")
                after = await until_complete(stream)
        assert any(e["event"] == "cluster.session_lost" for e in logs)
        assert after[0].seq == 6
        assert "after resume" == "".join(e.text for e in after if isinstance(e, MessageChunk))
        assert list(range(6, 6 + len(after))) == [e.seq for e in after]


async def test_second_gateway_serves_the_same_sessions(
    nats_server: LocalNatsServer, tmp_path: Path
) -> None:
    """A session created through one gateway is listed, subscribed and prompted through
    another; a subscriber switching gateways with after_seq sees no gap or repeat."""
    config = fast_config()
    defaults = worker_defaults(tmp_path, script(text_turn("one"), text_turn("two")))
    settings = NatsSettings(servers=[nats_server.url])
    async with (
        running(nats_server, config, defaults) as (first, _),
        ClusterBackend(settings, config) as second,
    ):
        info = await first.create(SessionSpec())
        async with first.subscribe(info.id, after_seq=0) as events:
            await first.prompt(info.id, "a")
            part1 = await until_complete(events)
        await eventually(lambda: info.id in second._require().sessions)
        async with second.subscribe(info.id, after_seq=part1[-1].seq) as events:
            await second.prompt(info.id, "b")
            part2 = await until_complete(events)
        seqs = [e.seq for e in part1 + part2]
        assert list(range(1, len(seqs) + 1)) == seqs
        assert "two" == "".join(e.text for e in part2 if isinstance(e, MessageChunk))
        await second.close(info.id)
