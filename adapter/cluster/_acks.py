"""JetStream publishes acknowledged through one inbox, as nats.go's ``PublishAsync`` does.

nats-py's ``JetStreamContext.publish`` is a request: per publish a token made of random
bytes, a future in the client's response map, ``asyncio.wait_for`` around it (another
future and a timer), and the acknowledgement parsed with ``json`` into a ``PubAck``
dataclass. A worker publishing for fifty busy sessions spent about a fifth of its CPU in
that path. :class:`AckInbox` subscribes once to a wildcard inbox, publishes each message
with a reply subject of its own under it (a counter), keeps the pending publishes in a dict
(one future each, failed by a timer unless its acknowledgement comes first) and decodes the
acknowledgements with msgspec. The acknowledgements are handled in the client's read loop
(:mod:`adapter.cluster._inline`), the pending publishes expire by one timer for all of them
(every publish waits as long, so the oldest expires first), and the ``HPUB`` command is
written by this module (nats-py checks every header name with a regular expression and
builds the block key by key). The errors are nats-py's own, so a caller handles them as it
would those of ``JetStreamContext.publish``: ``nats.js.errors.APIError`` (with its
``err_code``) for a refused publish, ``NoStreamResponseError`` when no stream listens,
``nats.errors.TimeoutError`` when nothing answered in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from typing import TYPE_CHECKING, Any

import msgspec

from ._inline import dispatch_inline

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


#: A header name nats-py writes unchanged (its own check).
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: Names that passed the check (a bridge sends a handful of constant names).
_NAMES_SEEN: set[str] = set()


def _header_block(headers: dict[str, str]) -> bytes | None:
    """The ``NATS/1.0`` header block (``None``: a name or value nats-py would refuse or
    rewrite, left to nats-py)."""
    lines = ["NATS/1.0\r\n"]
    for name, value in headers.items():
        if name not in _NAMES_SEEN:
            if not _HEADER_NAME.fullmatch(name):
                return None
            _NAMES_SEEN.add(name)
        if not _plain(value):
            return None
        lines.append(f"{name}: {value}\r\n")
    lines.append("\r\n")
    return "".join(lines).encode()


def _plain(text: str) -> bool:
    # Printable ASCII without surrounding spaces: what nats-py writes unchanged.
    return bool(text) and text.isascii() and text.isprintable() and text.strip() == text


class AckInbox:
    """Publishes to JetStream and matches the acknowledgements (see the module docstring);
    ``await inbox.start()`` once the connection is up, :meth:`close` at the end."""

    def __init__(self, nc: NATS) -> None:
        self._nc = nc
        self._prefix = ""
        self._tokens = itertools.count(1)
        # token -> (future, deadline); one timer, at the nearest deadline, for all of them.
        self._pending: dict[str, tuple[asyncio.Future[int], float]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._sub: Any = None
        #: Whether the acknowledgements are handled in the client's read loop.
        self.inline = False

    async def start(self) -> None:
        """Subscribe to the inbox (the subscription survives reconnections)."""
        self._prefix = self._nc.new_inbox() + "."
        self._sub = await self._nc.subscribe(self._prefix + "*", cb=self._on_ack)
        self.inline = dispatch_inline(self._sub, self._take)

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
        deadline = loop.time() + timeout
        self._pending[token] = (future, deadline)
        timer = self._timer
        if timer is None or deadline < timer.when():
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_at(deadline, self._expire)
        try:
            await self._send(subject, self._prefix + token, headers, payload)
            return await future
        finally:
            self._pending.pop(token, None)

    async def _send(
        self, subject: str, reply: str, headers: dict[str, str], payload: bytes
    ) -> None:
        # nats-py's Client.publish with the header block built here; any header it would
        # refuse (a line break, an empty value) or a connection it would refuse to write
        # to goes through nats-py, which raises its own errors.
        nc = self._nc
        block = _header_block(headers)
        if (
            block is None
            or not nc.is_connected
            or nc.is_draining
            or len(payload) > nc.max_payload
            or not _plain(subject)
            or " " in subject
        ):
            await nc.publish(subject, payload, reply=reply, headers=headers)
            return
        size = len(block)
        head = f"HPUB {subject} {reply} {size} {size + len(payload)}\r\n".encode()
        nc.stats["out_msgs"] += 1
        nc.stats["out_bytes"] += len(payload)
        await nc._send_command(head + block + payload + b"\r\n")
        flushing = nc._flush_queue
        if flushing is not None and flushing.empty():
            await nc._flush_pending()

    def _expire(self) -> None:
        from nats.errors import TimeoutError as NatsTimeoutError

        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        expired = [token for token, (_, deadline) in self._pending.items() if deadline <= now]
        for token in expired:
            future, _ = self._pending.pop(token)
            if not future.done():
                future.set_exception(NatsTimeoutError())
        if self._pending:
            nearest = min(deadline for _, deadline in self._pending.values())
            self._timer = loop.call_at(nearest, self._expire)

    async def _on_ack(self, msg: Msg) -> None:
        self._take(msg)

    def _take(self, msg: Msg) -> None:
        found = self._pending.pop(msg.subject[len(self._prefix) :], None)
        if found is None or found[0].done():
            return  # timed out meanwhile (or not ours)
        self._settle(found[0], msg)

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
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for future, _ in self._pending.values():
            if not future.done():
                future.set_exception(NatsTimeoutError())
        self._pending.clear()
        if sub is not None:
            with contextlib.suppress(Exception):  # the connection may be gone already
                await sub.unsubscribe()
