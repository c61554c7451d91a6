"""A nats-py subscription whose messages are handled inside the client's read loop.

nats-py hands every message of a subscription with a callback to a queue, and a task of its
own takes it from there and awaits the callback: per message a queue put and get, and a
task switch — one more turn of the event loop between the socket read and the handler. On
a busy worker, every JetStream acknowledgement (one per published batch) and, on a gateway,
every batch of events waited for that turn. :func:`dispatch_inline` makes the
subscription's queue hand each message to a plain function at once, in the read loop, so
the handler must not block and must be quick (it decodes, resolves a future, queues
events).

It relies on nats-py internals (``Subscription._pending_queue``, ``_pending_size``: the
read loop calls ``sub._pending_queue.put_nowait(msg)`` after adding the message's size to
``sub._pending_size``); when they are not what this module expects it changes nothing and
returns ``False``, so the callback keeps working as before. The tests check that it does
take effect with the nats-py the project pins (``tests/cluster/test_cluster_inline.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from claudecode.internal import get_logger

if TYPE_CHECKING:  # pragma: no cover
    from nats.aio.msg import Msg

__all__ = ("InlineQueue", "dispatch_inline")

_log = get_logger("claudecode.adapter.cluster.inline")


class InlineQueue(asyncio.Queue[Any]):
    """Stands in for a subscription's pending queue: what is put is handled at once.

    The subscription's own task still waits on :meth:`get`, which never returns: nothing
    stays queued (``join`` returns at once, so a drain does not wait for it)."""

    def __init__(self, sub: Any, handle: Callable[[Msg], None]) -> None:
        super().__init__()
        self._sub = sub
        self._handle = handle

    def put_nowait(self, item: Any) -> None:
        # The read loop counted the message as pending; nothing is pending once handled.
        self._sub._pending_size -= len(item.data)
        try:
            self._handle(item)
        except Exception as exc:  # never into nats-py's read loop (it would reconnect)
            _log.error("cluster.inline_handler_failed", error=repr(exc), subject=item.subject)


def dispatch_inline(sub: Any, handle: Callable[[Msg], None]) -> bool:
    """Have ``handle(msg)`` called in the read loop for each message of ``sub`` (a nats-py
    ``Subscription``, or a JetStream ``PushSubscription`` over one) instead of its callback.

    Returns whether it took effect (``False``: nats-py's internals differ; the callback
    stays in charge)."""
    inner = getattr(sub, "_sub", sub)  # a PushSubscription wraps the connection's one
    queue = getattr(inner, "_pending_queue", None)
    if type(queue) is not asyncio.Queue or not isinstance(
        getattr(inner, "_pending_size", None), int
    ):
        _log.warning("cluster.inline_dispatch_unavailable", reason="nats-py internals differ")
        return False
    if not queue.empty():
        return False  # messages already queued would be overtaken
    inline = InlineQueue(inner, handle)
    inner._pending_queue = inline
    if inner is not sub:
        sub._pending_queue = inline
    return True
