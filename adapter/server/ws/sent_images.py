"""The images people sent with their prompts, kept so a chat can show them again.

The event stream counts a prompt's images and never repeats their bytes
(:class:`~adapter.events.UserMessage`), so a client that did not send them (a second tab, a
reload, a session reopened from its stored transcript) has nothing to draw. This store keeps
them per chat entry: a ``prompt`` frame's images wait (:meth:`SentImages.expect`) until the
session's :class:`~adapter.events.UserMessage` with the same text and count is folded into its
view (:meth:`SentImages.claim`, which names the entry); a resumed session's are put under
their entries as its transcript is shown (:meth:`SentImages.put`).

Only the media types the Messages API takes are kept (a client draws them as ``data:`` URLs,
so nothing else may reach one). The store is bounded in bytes over every session (the oldest
entries go first) and in prompts waiting per session; an image no longer kept is simply not
shown again (the page says how many there were).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Sequence
from typing import Final

from ...images import Image

__all__ = ("IMAGE_TYPES", "SentImages")

#: The media types kept (and the only ones a client may draw).
IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Bytes of base64 kept over all sessions.
DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
#: Prompts with images waiting for their event, per session.
_MAX_WAITING: Final = 16


class SentImages:
    """Images by ``(session id, entry id)``; bounded (see the module)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._max = max_bytes
        self._kept: OrderedDict[tuple[str, str], tuple[Image, ...]] = OrderedDict()
        self._bytes = 0
        self._waiting: dict[str, deque[tuple[str, tuple[Image, ...]]]] = {}

    @property
    def size(self) -> int:
        """Bytes of base64 kept."""
        return self._bytes

    def expect(self, session_id: str, text: str, images: Sequence[Image]) -> None:
        """A prompt with ``images`` is being sent to ``session_id``."""
        if not images:
            return
        waiting = self._waiting.setdefault(session_id, deque(maxlen=_MAX_WAITING))
        waiting.append((text, tuple(images)))

    def claim(self, session_id: str, entry_id: str, text: str, count: int) -> bool:
        """The user message ``text`` with ``count`` images became ``entry_id``: keep the
        images of the oldest prompt waiting with that text and count. Returns whether one was."""
        waiting = self._waiting.get(session_id)
        if not waiting:
            return False
        for i, (sent, images) in enumerate(waiting):
            if sent == text and len(images) == count:
                del waiting[i]
                if not waiting:
                    del self._waiting[session_id]
                self.put(session_id, entry_id, images)
                return True
        return False

    def put(self, session_id: str, entry_id: str, images: Sequence[Image]) -> None:
        """Keep ``images`` (those of a type a client may draw) under the entry."""
        kept = tuple(i for i in images if i.media_type in IMAGE_TYPES)
        size = sum(len(i.data) for i in kept)
        if not kept or size > self._max:
            return
        key = (session_id, entry_id)
        old = self._kept.pop(key, None)
        if old is not None:
            self._bytes -= sum(len(i.data) for i in old)
        self._kept[key] = kept
        self._bytes += size
        while self._bytes > self._max:
            _, gone = self._kept.popitem(last=False)
            self._bytes -= sum(len(i.data) for i in gone)

    def get(self, session_id: str, entry_id: str) -> tuple[Image, ...]:
        """The images kept under the entry (none when unknown or no longer kept)."""
        images = self._kept.get((session_id, entry_id))
        if images is None:
            return ()
        self._kept.move_to_end((session_id, entry_id))
        return images

    def forget(self, session_id: str) -> None:
        """Drop what is kept and waiting for a session (deleted)."""
        self._waiting.pop(session_id, None)
        for key in [k for k in self._kept if k[0] == session_id]:
            self._bytes -= sum(len(i.data) for i in self._kept.pop(key))
