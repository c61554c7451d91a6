"""``query()``: one-shot (or streamed-input) conversations, as in ``claude-agent-sdk``."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any

import anyio
import msgspec

from .. import messages as m
from ..errors import ClaudeCodeError
from ._convert import to_sdk_message
from ._session import TurnCounter, feed, open_session, translated
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
    :class:`ResultError` is raised after that result was yielded, as the SDK does. To stop
    early, close the generator (``contextlib.aclosing``) in the task that iterates it.
    """
    session = open_session(options or ClaudeAgentOptions(), transport)
    turns = TurnCounter()
    failure: ClaudeCodeError | None = None
    last_error: m.ResultMessage | None = None  # an error result with nothing after it
    closed = False
    with translated():
        async with session, anyio.create_task_group() as tg:
            tg.start_soon(feed, session, prompt, turns)
            # Nothing may escape the task group (it would come out as an ExceptionGroup):
            # a failure is raised after it, and closing the generator just leaves.
            try:
                async for message in session.messages():
                    if message.__class__ is m.ResultMessage:
                        assert isinstance(message, m.ResultMessage)
                        turns.result_seen()
                        last_error = message if message.is_error else None
                    converted = to_sdk_message(message)
                    if converted is not None:
                        if converted.__class__ is not ResultMessage:
                            last_error = None
                        try:
                            yield converted
                        except GeneratorExit:
                            closed = True
                            break
            except ClaudeCodeError as exc:
                failure = exc
            tg.cancel_scope.cancel()
        if closed:
            return
        if failure is not None:
            raise failure
        if last_error is not None and session.exit_code not in (0, None):
            # As the SDK does: the CLI ends a failed run with a non-zero exit on purpose.
            raise ResultError.from_result(msgspec.to_builtins(last_error), session.exit_code)
