"""AckInbox against a real nats-server: JetStream publishes acknowledged through one inbox,
with the errors nats-py's own publish raises (a refused expectation, no stream, no answer,
a malformed answer)."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from adapter.cluster._acks import AckInbox
from adapter.cluster.fencing import (
    EXPECTED_LAST_SUBJECT_SEQ,
    FencedError,
    conditional_publish,
    is_wrong_last_sequence,
)
from tests.support.timeouts import HANG_GUARD

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


async def _stream(nc: Any) -> tuple[str, str]:
    from nats.js import api

    name = f"T{uuid.uuid4().hex[:8]}"
    subject = f"{name.lower()}.events"
    await nc.jetstream().add_stream(
        api.StreamConfig(name=name, subjects=[f"{subject}.>"], storage=api.StorageType.MEMORY)
    )
    return name, subject


async def test_publishes_are_acknowledged_with_their_stream_sequence(nats_client: Any) -> None:
    name, subject = await _stream(nats_client)
    inbox = AckInbox(nats_client)
    await inbox.start()
    try:
        with anyio.fail_after(HANG_GUARD):
            seqs = [await inbox.publish(f"{subject}.a", b"x", {}, 5.0) for _ in range(3)]
            results: list[int] = []

            async def one(n: int) -> None:
                results.append(await inbox.publish(f"{subject}.b", str(n).encode(), {}, 5.0))

            async with anyio.create_task_group() as tg:
                for n in range(50):
                    tg.start_soon(one, n)
        assert seqs == [1, 2, 3]
        assert sorted(results) == list(range(4, 54))
        assert inbox.pending == 0
        assert (await nats_client.jetstream().get_last_msg(name, f"{subject}.b")).seq == 53
    finally:
        await inbox.close()


async def test_a_refused_expectation_is_the_same_error_as_nats_py_raises(
    nats_client: Any,
) -> None:
    from nats.js.errors import APIError

    name, subject = await _stream(nats_client)
    inbox = AckInbox(nats_client)
    await inbox.start()
    try:
        with anyio.fail_after(HANG_GUARD):
            await inbox.publish(f"{subject}.a", b"one", {}, 5.0)
            with pytest.raises(APIError) as ours:
                await inbox.publish(f"{subject}.a", b"two", {EXPECTED_LAST_SUBJECT_SEQ: "7"}, 5.0)
            with pytest.raises(APIError) as theirs:
                await nats_client.jetstream().publish(
                    f"{subject}.a", b"two", headers={EXPECTED_LAST_SUBJECT_SEQ: "7"}
                )
        assert is_wrong_last_sequence(ours.value)
        assert type(ours.value) is type(theirs.value)
        assert ours.value.err_code == theirs.value.err_code  # type: ignore[attr-defined]
        # conditional_publish through the inbox: fenced off by another writer's message.
        js = nats_client.jetstream()
        seq, repeated = await conditional_publish(
            js, name, f"{subject}.a", b"three", {"Nats-Msg-Id": "m3"}, 1, acks=inbox
        )
        assert (seq, repeated) == (2, False)
        # A retry whose first attempt landed is told apart by its Nats-Msg-Id.
        again = await conditional_publish(
            js, name, f"{subject}.a", b"three", {"Nats-Msg-Id": "m3"}, 1, acks=inbox
        )
        assert again == (2, True)
        await js.publish(f"{subject}.a", b"someone else")
        with pytest.raises(FencedError):
            await conditional_publish(
                js, name, f"{subject}.a", b"four", {"Nats-Msg-Id": "m4"}, 2, acks=inbox
            )
    finally:
        await inbox.close()


async def test_no_stream_no_answer_and_a_malformed_answer_are_errors(nats_client: Any) -> None:
    from nats.errors import TimeoutError as NatsTimeoutError
    from nats.js.errors import APIError, NoStreamResponseError

    inbox = AckInbox(nats_client)
    await inbox.start()
    prefix = f"nostream{uuid.uuid4().hex[:8]}"
    silent = await nats_client.subscribe(f"{prefix}.silent")  # takes it, never answers

    async def garbage(msg: Any) -> None:
        await msg.respond(b"not json")

    await nats_client.subscribe(f"{prefix}.garbage", cb=garbage)
    await nats_client.flush()
    try:
        with anyio.fail_after(HANG_GUARD):
            with pytest.raises(NoStreamResponseError):
                await inbox.publish(f"{prefix}.nobody", b"x", {}, 5.0)
            with pytest.raises(NatsTimeoutError):
                await inbox.publish(f"{prefix}.silent", b"x", {}, 0.2)
            with pytest.raises(APIError):
                await inbox.publish(f"{prefix}.garbage", b"x", {}, 5.0)
        assert inbox.pending == 0
    finally:
        await silent.unsubscribe()
        await inbox.close()


async def test_close_fails_what_waits_and_refuses_what_comes(nats_client: Any) -> None:
    from nats.errors import TimeoutError as NatsTimeoutError

    inbox = AckInbox(nats_client)
    with pytest.raises(RuntimeError):
        await inbox.publish("anything", b"", {}, 1.0)
    await inbox.start()
    prefix = f"silent{uuid.uuid4().hex[:8]}"
    silent = await nats_client.subscribe(f"{prefix}.x")
    await nats_client.flush()
    failed: list[BaseException] = []

    sent = anyio.Event()

    async def waiting() -> None:
        try:
            async with anyio.create_task_group() as inner:
                inner.start_soon(inbox.publish, f"{prefix}.x", b"x", {}, HANG_GUARD)
                await anyio.lowlevel.checkpoint()  # the publish registers its future
                sent.set()
        except* NatsTimeoutError as group:
            failed.extend(group.exceptions)

    try:
        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as tg:
                tg.start_soon(waiting)
                await sent.wait()
                assert inbox.pending == 1
                await inbox.close()
        assert len(failed) == 1
        with pytest.raises(RuntimeError):
            await inbox.publish(f"{prefix}.x", b"x", {}, 1.0)
    finally:
        await silent.unsubscribe()
