"""``query()``: one-shot (or streamed-input) conversations, as in ``claude-agent-sdk``.

The session runs in a detached task (:mod:`claudecode._detached`) and hands its messages
to the generator over a small channel, so the generator holds no task group or cancel
scope across a ``yield``. A program may therefore leave the ``async for`` at any point
(``return``, ``break``, an exception) without closing the generator: it is finalized
later, in whatever task the event loop picks, and that only asks the session to close.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectSendStream

from .. import messages as m
from .._detached import DetachedTask, spawn_detached
from ..errors import ClaudeCodeError
from ..session import Session
from ._convert import to_sdk_message
from ._session import TurnCounter, feed, open_session, stop_servers, translated
from ._store_link import StoreLink
from .errors import ResultError
from .messages import Message, ResultMessage
from .options import ClaudeAgentOptions

__all__ = ("query",)


async def query(
    *,
    prompt: str | AsyncIterable[dict[str, Any]] | AsyncIterable[Mapping[str, Any]],
    options: ClaudeAgentOptions | None = None,
    transport: Any = None,
) -> AsyncIterator[Message]:
    """Run a conversation and yield its messages until the CLI is done.

    ``prompt`` is a string (one turn) or an async iterable of user-message dicts
    (``{"type": "user", "message": {"role": "user", "content": ...}}``), sent in order.
    Input ends once every prompt has its result, so permission callbacks and hooks work
    for the whole run. When the run ends on an error result (the CLI then exits non-zero),
    :class:`ResultError` is raised after that result was yielded, as the SDK does.

    Leaving the loop early is safe from any task: the CLI's input is closed and it is
    reaped (given ``close_grace`` to exit, then signalled) when the generator is closed
    or collected.
    """
    with translated():
        opts, link = await StoreLink.open(options or ClaudeAgentOptions())
    try:
        session = open_session(opts, transport)
    except BaseException:
        if link is not None:
            await link.aclose()
        raise
    run = _Run(session, link)
    send, receive = anyio.create_memory_object_stream[list[Message]](1)
    run.handle = handle = spawn_detached(run.main(prompt, send), name="claudecode.sdk query")
    finished = False
    try:
        with translated():
            async with receive:
                async for batch in receive:
                    for message in batch:
                        yield message
            await handle.wait()
            finished = True
            run.raise_failure()
    finally:
        if not finished:
            # Left early (or cancelled): ask the session to close, and wait for the CLI
            # to be reaped, shielded so a cancelled caller does not leave it behind.
            run.stop()
            with anyio.CancelScope(shield=True):
                await handle.wait()


class _Run:
    """The detached side of one ``query()``: the session, its feeder, and the outcome."""

    def __init__(self, session: Session, link: StoreLink | None) -> None:
        self.session = session
        self.link = link
        self.failure: ClaudeCodeError | None = None
        self.last_error: m.ResultMessage | None = None  # an error result with nothing after
        self.handle: DetachedTask | None = None
        self._stop = anyio.Event()
        self._started = False

    def stop(self) -> None:
        self._stop.set()
        if not self._started and self.handle is not None:
            # Still starting (spawn, initialize): nothing to close gracefully yet.
            self.handle.cancel()

    async def main(
        self,
        prompt: str | AsyncIterable[Mapping[str, Any]],
        send: MemoryObjectSendStream[list[Message]],
    ) -> None:
        session, turns = self.session, TurnCounter()
        async with send:
            try:
                async with session, anyio.create_task_group() as tg:
                    self._started = True
                    tg.start_soon(feed, session, prompt, turns)
                    tg.start_soon(self._close_when_stopped, tg)
                    # Nothing may escape the task group (it would come out as an
                    # ExceptionGroup): a failure is kept and raised by the generator.
                    try:
                        await self._pump(send, turns)
                    except ClaudeCodeError as exc:
                        self.failure = exc
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass  # the program stopped reading
                    tg.cancel_scope.cancel()
            except ClaudeCodeError as exc:  # the CLI could not be started
                self.failure = exc
            finally:
                with anyio.CancelScope(shield=True):
                    await stop_servers(session)
                    if self.link is not None:
                        await self.link.aclose()

    async def _close_when_stopped(self, tg: anyio.abc.TaskGroup) -> None:
        await self._stop.wait()
        # Closing the input ends the CLI's output, and with it the pump.
        await self.session.close()
        tg.cancel_scope.cancel()

    async def _pump(self, send: MemoryObjectSendStream[list[Message]], turns: TurnCounter) -> None:
        session, link = self.session, self.link
        while True:
            try:
                batch = await session.receive_batch()
            except anyio.EndOfStream:
                if link is not None:  # what came after the last result
                    await link.flush()
                    if errors := link.errors():
                        await send.send(list(errors))
                return
            out: list[Message] = []
            for message in batch:
                if link is not None:
                    if link.take(message):
                        continue
                    out.extend(link.errors())
                if message.__class__ is m.ResultMessage:
                    assert isinstance(message, m.ResultMessage)
                    turns.result_seen()
                    self.last_error = message if message.is_error else None
                    if link is not None:
                        # The store holds this turn before its result is seen.
                        await link.flush()
                        out.extend(link.errors())
                converted = to_sdk_message(message)
                if converted is not None:
                    if converted.__class__ is not ResultMessage:
                        self.last_error = None
                    out.append(converted)
            if out:
                await send.send(out)

    def raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure
        last, code = self.last_error, self.session.exit_code
        if last is not None and code not in (0, None):
            # As the SDK does: the CLI ends a failed run with a non-zero exit on purpose.
            raise ResultError.from_result(msgspec.to_builtins(last), code)
