"""One chat view per session, kept current for snapshots (server side, in the event loop).

A late joiner must see the same screen as everyone else, even when the session's event
history no longer reaches back to its start. :class:`SessionViews` therefore follows every
session from its first event: a follower task per session (started when
:meth:`SessionBackend.watch <adapter.backend.SessionBackend.watch>` reports it, or on the
first snapshot asked for) subscribes with ``after_seq=0`` and folds the events into a
:class:`~adapter.chat.ChatView`. A snapshot is that view; the client then subscribes after
the view's ``last_seq`` and the backend replays the rest, so nothing is lost or repeated
whatever the follower's lag.

A resumed session's view starts with its stored conversation (:meth:`SessionViews.seed`).
The images people sent are kept beside the views (:attr:`SessionViews.images`, see
:mod:`.sent_images`): a follower names the entry of each prompt it folds.
Followers end with their session; the views of closed sessions are kept for the last
``closed_max`` sessions.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence

import anyio
import anyio.abc

from claudecode import UsageError
from claudecode.internal import get_logger

from ...backend import BackendUnavailableError, SessionBackend
from ...chat import ChatSnapshot, ChatView, UserEntry
from ...events import Event, UserMessage
from ...fanout import SubscriberDropped
from ...images import Image
from .sent_images import SentImages

__all__ = ("SessionViews",)

_log = get_logger("claudecode.adapter.ws")

#: Seconds a follower lets events pile up between two folds into its view. Safe while a
#: session publishes fewer than its ``subscriber_buffer`` events in that time (the default
#: 5,000 is 100,000 events/s): a follower dropped for more resubscribes from its view's
#: ``last_seq`` only after its pause, and if the history no longer reaches back that far the
#: view misses those events.
FOLLOW_BATCH_SECONDS = 0.05
#: Seconds a follower waits before following again when the backend was unavailable.
UNAVAILABLE_RETRY_SECONDS = 1.0


class SessionViews:
    """Chat views of the backend's sessions; use ``async with views.running():``."""

    def __init__(self, backend: SessionBackend, *, closed_max: int = 64) -> None:
        self._backend = backend
        self._views: dict[str, ChatView] = {}
        self._closed: OrderedDict[str, ChatView] = OrderedDict()
        self._closed_max = closed_max
        self._tg: anyio.abc.TaskGroup | None = None
        #: The images sent with prompts, by entry.
        self.images = SentImages()
        #: Set (and dropped) when a session's follower folds events: who waits for one.
        self._folded: dict[str, anyio.Event] = {}

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[SessionViews]:
        """Follow sessions while the block runs."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._watch)
            try:
                yield self
            finally:
                self._tg = None
                tg.cancel_scope.cancel()

    async def _watch(self) -> None:
        try:
            async with self._backend.watch() as changes:
                for info in await self._backend.list():
                    if info.kind == "chat" and info.state != "closed":
                        self._follow(info.id)
                async for info in changes:
                    if info.kind == "chat" and info.state != "closed":
                        self._follow(info.id)
        except Exception:  # views then start on the first snapshot asked for instead
            _log.exception("ws.watch_failed")

    def _follow(self, session_id: str) -> ChatView:
        view = self._views.get(session_id) or self._closed.get(session_id)
        if view is not None:
            return view
        view = ChatView()
        self._views[session_id] = view
        if self._tg is not None:
            self._tg.start_soon(self._follower, session_id, view)
        return view

    async def _follower(self, session_id: str, view: ChatView) -> None:
        try:
            while True:
                try:
                    async with self._backend.subscribe(
                        session_id, after_seq=view.last_seq
                    ) as stream:
                        while True:
                            batch = await stream.receive_batch()
                            view.fold(batch)
                            self._claim_images(session_id, view, batch)
                            folded = self._folded.pop(session_id, None)
                            if folded is not None:
                                folded.set()
                            # Fold events in batches: a streaming session would otherwise
                            # wake this task for every delta. A snapshot is exact whatever
                            # the view's lag (the client replays from its last_seq).
                            await anyio.sleep(FOLLOW_BATCH_SECONDS)
                except SubscriberDropped:
                    continue  # fell behind: catch up from where the view is
                except BackendUnavailableError:
                    # The backend lost its connection (a gateway without NATS): follow again
                    # from where the view is once it is back, instead of ending the view.
                    await anyio.sleep(UNAVAILABLE_RETRY_SECONDS)
                    continue
                except (anyio.EndOfStream, UsageError):
                    return
        except Exception:  # a broken view must not take the server down
            _log.exception("ws.view_failed", session_id=session_id)
        finally:
            if self._views.get(session_id) is view:
                del self._views[session_id]
                self._closed[session_id] = view
                while len(self._closed) > self._closed_max:
                    self._closed.popitem(last=False)

    def _claim_images(self, session_id: str, view: ChatView, batch: Sequence[Event]) -> None:
        for event in batch:
            if isinstance(event, UserMessage) and event.images and event.seq:
                entry_id = f"user:{event.seq}"
                if isinstance(view.entry(entry_id), UserEntry):
                    self.images.claim(session_id, entry_id, event.text, event.images)

    async def folded(self, session_id: str, seq: int, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until the session's view has folded the event
        ``seq``; returns whether it has."""
        view = self._views.get(session_id) or self._closed.get(session_id)
        with anyio.move_on_after(timeout):
            while view is not None and view.last_seq < seq and session_id in self._views:
                await self._folded.setdefault(session_id, anyio.Event()).wait()
        return view is not None and view.last_seq >= seq

    def seed(
        self,
        session_id: str,
        events: Sequence[Event],
        images: Sequence[tuple[Image, ...]] = (),
    ) -> bool:
        """Show a resumed session's stored conversation (``events`` from
        :func:`adapter.chat.load_events`) before its new events, and keep the images of its
        prompts (``images``: those of each prompt that had any, in order, from
        :func:`adapter.history.load_prompt_images`). Only while the session's view has no
        entries yet; returns whether it did."""
        view = self._follow(session_id)
        if view.entries:
            return False
        last = view.last_seq
        view.apply(events)
        view.last_seq = last  # stored events carry no seq: the follower's position stands
        # The prompts shown with images and the transcript's, in order (an image left out: none).
        prompts = [e for e in view.entries if isinstance(e, UserEntry) and e.images]
        for entry, found in zip(prompts, images, strict=False):
            if len(found) == entry.images:
                self.images.put(session_id, entry.id, found)
        return True

    def snapshot(self, session_id: str) -> ChatSnapshot:
        """The chat of ``session_id`` as far as it has been followed (starts following)."""
        return self._follow(session_id).snapshot()
