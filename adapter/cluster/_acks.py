"""JetStream publishes acknowledged through one inbox, as nats.go's ``PublishAsync`` does.

nats-py's ``JetStreamContext.publish`` is a request: per publish a token made of random
bytes, a future in the client's response map, ``asyncio.wait_for`` around it (another
future and a timer), and the acknowledgement parsed with ``json`` into a ``PubAck``
dataclass. A worker publishing for fifty busy sessions spent about a fifth of its CPU in
that path. :class:`AckInbox` subscribes once to a wildcard inbox, publishes each message
with a reply subject of its own under it (a counter), keeps the pending publishes in a dict
(one future each, failed by a timer unless its acknowledgement comes first) and decodes the
acknowledgements with msgspec. The errors are nats-py's own, so a caller handles them as it
would those of ``JetStreamContext.publish``: ``nats.js.errors.APIError`` (with its
``err_code``) for a refused publish, ``NoStreamResponseError`` when no stream listens,
``nats.errors.TimeoutError`` when nothing answered in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.client import Client as NATS
    from nats.aio.msg import Msg

__all__ = ("AckInbox",)


class _PubAck(msgspec.Struct):
    # What JetStream answers a publish with (the fields that matter here).
    seq: int = 0
    duplicate: bool = False
    error: dict[str, Any] | None = None


_decode_ack = msgspec.json.Decoder(_PubAck).decode


class AckInbox:
    """Publishes to JetStream and matches the acknowledgements (see the module docstring);
    ``await inbox.start()`` once the connection is up, :meth:`close` at the end."""

    def __init__(self, nc: NATS) -> None:
        self._nc = nc
        self._prefix = ""
        self._tokens = itertools.count(1)
        self._pending: dict[str, asyncio.Future[int]] = {}
        self._sub: Any = None

    async def start(self) -> None:
        """Subscribe to the inbox (the subscription survives reconnections)."""
        self._prefix = self._nc.new_inbox() + "."
        self._sub = await self._nc.subscribe(self._prefix + "*", cb=self._on_ack)

    @property
    def pending(self) -> int:
        """Publishes waiting for their acknowledgement."""
        return len(self._pending)

    async def publish(
        self, subject: str, payload: bytes, headers: dict[str, str], timeout: float
    ) -> int:
        """Publish and wait for the stream's acknowledgement; returns the message's stream
        sequence.

        Raises:
            nats.js.errors.APIError: the stream refused the message (``err_code`` says why).
            nats.js.errors.NoStreamResponseError: no stream takes the subject.
            nats.errors.TimeoutError: no acknowledgement within ``timeout`` seconds.
        """
        if self._sub is None:
            raise RuntimeError("AckInbox.start() was not called")
        token = str(next(self._tokens))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        self._pending[token] = future
        timer = loop.call_later(timeout, self._expire, token)
        try:
            await self._nc.publish(subject, payload, reply=self._prefix + token, headers=headers)
            return await future
        finally:
            timer.cancel()
            self._pending.pop(token, None)

    def _expire(self, token: str) -> None:
        from nats.errors import TimeoutError as NatsTimeoutError

        future = self._pending.pop(token, None)
        if future is not None and not future.done():
            future.set_exception(NatsTimeoutError())

    async def _on_ack(self, msg: Msg) -> None:
        future = self._pending.pop(msg.subject[len(self._prefix) :], None)
        if future is None or future.done():
            return  # timed out meanwhile (or not ours)
        self._settle(future, msg)

    @staticmethod
    def _settle(future: asyncio.Future[int], msg: Msg) -> None:
        from nats.js.errors import APIError, NoStreamResponseError

        headers = msg.headers
        if headers and headers.get("Status") == "503":
            future.set_exception(NoStreamResponseError())
            return
        try:
            ack = _decode_ack(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            future.set_exception(APIError(description=f"not an acknowledgement: {msg.data!r}"))
            return
        if ack.error is not None:
            try:
                APIError.from_error(ack.error)  # raises the class the error's code names
            except APIError as exc:
                future.set_exception(exc)
            except Exception:  # an error body without the fields nats-py expects
                future.set_exception(APIError(description=str(ack.error)))
            return
        future.set_result(ack.seq)

    async def close(self) -> None:
        """Unsubscribe; publishes still waiting fail as timed out."""
        from nats.errors import TimeoutError as NatsTimeoutError

        sub, self._sub = self._sub, None
        for future in self._pending.values():
            if not future.done():
                future.set_exception(NatsTimeoutError())
        self._pending.clear()
        if sub is not None:
            with contextlib.suppress(Exception):  # the connection may be gone already
                await sub.unsubscribe()
