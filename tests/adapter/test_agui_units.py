"""Small pure pieces of the AG-UI layer: approval answers, prompts, the message log."""

from __future__ import annotations

import base64
import json

import anyio
import pytest

from adapter.images import Image
from adapter.server.agui.events import (
    ReasoningMessageContent,
    ReasoningMessageStart,
    TextMessageContent,
    TextMessageStart,
    ToolCallArgs,
    ToolCallResult,
    ToolCallStart,
)
from adapter.server.agui.handle import KEEPALIVE, RunHandle
from adapter.server.agui.inputs import decision_from_answer, prompt_from_message
from adapter.server.agui.snapshot import MessageLog
from tests.support.timeouts import HANG_GUARD


@pytest.mark.parametrize(
    ("content", "behavior"),
    [
        (json.dumps({"behavior": "allow"}), "allow"),
        (json.dumps({"approved": True}), "allow"),
        (json.dumps({"approved": False, "reason": "no"}), "deny"),
        ("allow_always", "allow_always"),
        ("Approve", "allow"),
        ("no", "deny"),
        ('"yes"', "allow"),
        ({"behavior": "deny", "message": "not now"}, "deny"),
        ("something else", "deny"),
        (None, "deny"),
    ],
)
def test_approval_answers(content: object, behavior: str) -> None:
    """Every documented answer form; anything unrecognized denies."""
    assert behavior == decision_from_answer(content).behavior


def test_an_edited_input_and_a_denial_message_are_kept() -> None:
    """updatedInput goes with an allow; a denial explains itself to the model."""
    allow = decision_from_answer(json.dumps({"behavior": "allow", "updatedInput": {"a": 1}}))
    assert {"a": 1} == allow.updated_input
    assert "not now" == decision_from_answer({"behavior": "deny", "message": "not now"}).message


def test_prompts_from_strings_and_content_parts() -> None:
    """Text parts are joined; image parts (base64) become images; the rest is ignored."""
    png = b"\x89PNG fake"
    message = {
        "id": "u",
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "binary", "mimeType": "image/png", "data": base64.b64encode(png).decode()},
            {"type": "binary", "mimeType": "image/png", "data": "%%%not base64"},
            {"type": "binary", "mimeType": "application/pdf", "data": "AAAA"},
            {"type": "text", "text": "here"},
            "junk",
        ],
    }
    assert ("look\nhere", [Image.from_bytes("image/png", png)]) == prompt_from_message(message)
    assert ("hi", []) == prompt_from_message({"id": "u", "role": "user", "content": "hi"})


def test_the_message_log_builds_what_the_client_has_and_stays_bounded() -> None:
    """Text, reasoning, tool calls on their message, results; the oldest go past the cap."""
    log = MessageLog(max_messages=5)
    log.add({"id": "u1", "role": "user", "content": "hi"})
    for event in (
        ReasoningMessageStart(message_id="r1", role="reasoning"),
        ReasoningMessageContent(message_id="r1", delta="hmm"),
        TextMessageStart(message_id="m1"),
        TextMessageContent(message_id="m1", delta="Let me "),
        TextMessageContent(message_id="m1", delta="see."),
        ToolCallStart(tool_call_id="t1", tool_call_name="Bash", parent_message_id="m1"),
        ToolCallArgs(tool_call_id="t1", delta='{"command": "ls"}'),
        ToolCallResult(message_id="t1:result", tool_call_id="t1", content="a.txt"),
    ):
        log.apply(event)
    messages = log.messages()
    assert ["user", "reasoning", "assistant", "tool"] == [m["role"] for m in messages]
    assistant = messages[2]
    assert "Let me see." == assistant["content"]
    assert '{"command": "ls"}' == assistant["toolCalls"][0]["function"]["arguments"]
    assert "t1" == messages[3]["toolCallId"]
    for n in range(5):
        log.add({"id": f"x{n}", "role": "user", "content": str(n)})
    assert 5 == len(log)
    assert "u1" not in log
    log.apply(ToolCallArgs(tool_call_id="t1", delta="ignored: its message is gone"))


@pytest.mark.anyio
async def test_a_run_handle_keeps_idle_listeners_alive_with_its_timer() -> None:
    handle = RunHandle("t", "r", b"[]")
    # The listener's own timeout is far away: the comments can only come from the timer.
    frames = handle.listen(keepalive=3600)
    with anyio.fail_after(HANG_GUARD):  # a hang guard, not a timing assertion
        async with anyio.create_task_group() as tg:
            tg.start_soon(handle.keep_alive, 0.01)
            assert await anext(frames) == KEEPALIVE
            handle.push([b"data: 1\n\n", b"data: 2\n\n"])
            assert await anext(frames) == b"data: 1\n\ndata: 2\n\n"
            assert await anext(frames) == KEEPALIVE  # idle again: the timer ticks on
            handle.close()
            with pytest.raises(StopAsyncIteration):
                await anext(frames)
    # The timer ended with the run (the task group exited), and so did the listener.
    assert handle.listeners == 0


@pytest.mark.anyio
async def test_a_run_handle_without_a_timer_uses_the_listener_timeout() -> None:
    handle = RunHandle("t", "r", b"[]")
    frames = handle.listen(keepalive=0.01)
    with anyio.fail_after(HANG_GUARD):
        assert await anext(frames) == KEEPALIVE
        handle.push([b"data: x\n\n"])
        handle.close()
        assert await anext(frames) == b"data: x\n\n"
        with pytest.raises(StopAsyncIteration):
            await anext(frames)


class _Client:
    """A listener's write into a list; while ``gate`` is clear, a write waits for it (a
    client whose socket is full)."""

    def __init__(self) -> None:
        self.got: list[bytes] = []
        self.gate = anyio.Event()
        self.gate.set()

    async def write(self, chunk: bytes) -> None:
        if not self.gate.is_set():  # no checkpoint otherwise: a socket with room
            await self.gate.wait()
        self.got.append(chunk)


@pytest.mark.anyio
async def test_a_caught_up_listener_is_written_by_the_pump_and_a_slow_one_catches_up(
    anyio_backend: str,
) -> None:
    handle = RunHandle("t", "r", b"[]")
    handle.use_ticks()
    handle.push([b"a"])
    client = _Client()
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(handle.follow, client.write)
            await anyio.wait_all_tasks_blocked()
            assert [b"a"] == client.got  # caught up: its write is lent to the pump
            handle.push([b"b", b"c"])
            if anyio_backend == "asyncio":  # the pump writes (on trio the listener does)
                assert [b"a", b"bc"] == client.got  # in the push: no task woken
            await anyio.wait_all_tasks_blocked()
            assert [b"a", b"bc"] == client.got
            client.gate = anyio.Event()  # the client stops reading
            handle.push([b"d"])  # that write waits: the push returns, the listener has it
            handle.push([b"e"])
            handle.push([b"f"])
            await anyio.wait_all_tasks_blocked()
            assert [b"a", b"bc"] == client.got
            client.gate.set()
            await anyio.wait_all_tasks_blocked()
            assert b"abcdef" == b"".join(client.got)
            if anyio_backend == "asyncio":  # the listener finished the waiting write
                assert [b"a", b"bc", b"d", b"ef"] == client.got
            handle.tick(0)  # idle: a keep-alive comment
            await anyio.wait_all_tasks_blocked()
            assert KEEPALIVE == client.got[-1]
            handle.push([b"g"])
            handle.close()
    assert b"abcdef" + KEEPALIVE + b"g" == b"".join(client.got)
    assert 0 == handle.listeners


@pytest.mark.anyio
async def test_a_listener_that_leaves_with_a_write_waiting_leaves_nothing_behind() -> None:
    handle = RunHandle("t", "r", b"[]")
    handle.use_ticks()
    client, other = _Client(), _Client()
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(handle.follow, client.write)
            await anyio.wait_all_tasks_blocked()
            client.gate = anyio.Event()
            handle.push([b"a"])  # waits in the lent write
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()  # the client disconnects
    assert 0 == handle.listeners
    # The next listener is written by the pump in its turn, from where it starts.
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tg:
            tg.start_soon(handle.follow, other.write)
            await anyio.wait_all_tasks_blocked()
            handle.push([b"b"])
            handle.close()
    assert [b"a", b"b"] == other.got and [] == client.got
